// SPDX-License-Identifier: MIT
// Large blocks on transparent huge pages. The synthesizer and the simulator build and drop arrays
// of tens to hundreds of megabytes per candidate; glibc maps each one fresh from the kernel, which
// hands it out 4 KiB at a time, a page fault each (torus-64x64 all-gather of 64 MiB: 491,000
// faults, a fifth of the run). Where the kernel gives huge pages on request (transparent_hugepage
// "madvise", Debian's default), asking for them on every block of 4 MiB or more makes those faults
// up to 512 times fewer. Freed heap is kept for the next candidate rather than handed back and
// faulted in again. The tool's executable only (the library leaves allocation to its host), and
// not under the sanitizers, whose allocators replace these operators.

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TENET_SANITIZED_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TENET_SANITIZED_ALLOCATOR 1
#endif

#if defined(MADV_HUGEPAGE) && !defined(TENET_SANITIZED_ALLOCATOR)

namespace {

constexpr std::uintptr_t kHugePageBytes = std::uintptr_t{2} << 20;

void* allocate_on_huge_pages(std::size_t size) {
  void* block = nullptr;
  while ((block = std::malloc(size == 0 ? 1 : size)) == nullptr) {
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
  // The whole huge pages inside the block, asked for before anything touches them. Advice only:
  // where the kernel declines, the block works the same on small pages.
  if (size >= 2 * kHugePageBytes) {
    const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(block);
    const std::uintptr_t first = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
    const std::uintptr_t last = (start + size) & ~(kHugePageBytes - 1);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  return block;
}

// Blocks below 32 MiB come from the heap, and up to 512 MiB of it stays when freed.
[[maybe_unused]] const bool heap_kept = [] {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  return true;
}();

}  // namespace

void* operator new(std::size_t size) { return allocate_on_huge_pages(size); }
void* operator new[](std::size_t size) { return allocate_on_huge_pages(size); }
void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete[](void* block, std::size_t) noexcept { std::free(block); }

#endif
