// SPDX-License-Identifier: MIT
#pragma once
// The sanitizers slow tenet down five- to tenfold. The sweeps over shipped topologies check every
// topology in the Release run and a sample of the small ones under the sanitizers: the code paths
// are the same, and the sanitized test run stays within CI's time.

#include <cstdint>
#include <string_view>

namespace tenet::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)  // GCC
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)  // Clang
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

/// Whether a sweep checks a topology of this many NPUs in this build. Under the sanitizers: those
/// of up to 9 NPUs, and of the 16-NPU ones a torus, a two-level switched cluster and a tree of
/// switches (the other 16-NPU ones repeat their code paths).
inline bool swept(std::uint32_t npus, std::string_view name = {}) {
  if (!kSanitized || npus <= 9) return true;
  return npus <= 16 && (name.empty() || name == "torus-4x4" || name == "a100-2x8-ib" || name == "tree-2x2x4");
}

}  // namespace tenet::testing
