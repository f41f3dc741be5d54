// SPDX-License-Identifier: MIT
#pragma once
// Wall time and peak memory for the benchmark programs.

#include <chrono>

#include <sys/resource.h>

namespace tenet::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The process's peak resident memory so far.
inline double peak_memory_MiB() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace tenet::bench
