// SPDX-License-Identifier: MIT
#pragma once
// A vector whose resize leaves new elements of trivial types uninitialized. Columns of hundreds of
// millions of entries are grown and then filled in parallel; zero-filling them first would touch
// every page twice, once on a single thread.

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace tenet {

template <typename T>
class DefaultInitAllocator : public std::allocator<T> {
 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  /// Default-initialization: nothing at all for trivial types.
  template <typename U>
  void construct(U* place) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(place)) U;
  }
  template <typename U, typename... Args>
  void construct(U* place, Args&&... args) {
    ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
  }
};

template <typename T>
using UninitializedVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace tenet
