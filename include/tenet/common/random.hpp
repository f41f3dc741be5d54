// SPDX-License-Identifier: MIT
#pragma once
// Deterministic randomness. std::uniform_int_distribution differs between standard libraries, so
// tenet draws its own numbers: the same seed gives the same topology or schedule everywhere.

#include <cstdint>

namespace tenet {

/// SplitMix64: tiny state, good statistical quality, and cheap to derive independent streams from
/// (seed, event, destination) tuples, which is what deterministic parallel work needs.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, bound), bound > 0 (Lemire's multiply-shift; the bias is below 2^-32 for
  /// every bound tenet uses).
  std::uint64_t below(std::uint64_t bound) {
    __extension__ typedef unsigned __int128 Wide;
    return static_cast<std::uint64_t>((static_cast<Wide>(next()) * bound) >> 64);
  }

  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

/// Mixes several values into one seed, so streams for different tasks never overlap by accident.
constexpr std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace tenet
