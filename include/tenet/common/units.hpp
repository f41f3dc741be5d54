// SPDX-License-Identifier: MIT
#pragma once
// The one place where units are converted. Bandwidth is GB/s with 1 GB = 1e9 bytes, time is
// microseconds, sizes are bytes.

#include <cstdint>
#include <string>

namespace tenet {

/// Bytes per microsecond moved by a link of `bandwidth_GBps` (1 GB/s = 1e3 bytes/us).
constexpr double bytes_per_us(double bandwidth_GBps) { return bandwidth_GBps * 1e3; }

/// Time for `bytes` over an idle link: alpha + bytes / bandwidth, in microseconds.
constexpr double link_time_us(double bytes, double latency_us, double bandwidth_GBps) {
  return latency_us + bytes / bytes_per_us(bandwidth_GBps);
}

/// Algorithm bandwidth in GB/s of a collective of `bytes` that takes `time_us`.
constexpr double algbw_GBps(double bytes, double time_us) { return bytes / time_us / 1e3; }

/// Largest collective size tenet accepts (1 PiB): beyond it byte counts lose precision as doubles.
constexpr std::uint64_t kMaxSizeBytes = std::uint64_t{1} << 50;

/// Parses a size with a unit: "32B", "4KiB", "1MB", "64MiB", "1GiB", "1.5GB" (KB/MB/GB/TB are
/// decimal, KiB/MiB/GiB/TiB binary). A bare number is bytes. Throws InputError naming `option`
/// (e.g. "--size") for anything else, for zero, for fractional bytes and above kMaxSizeBytes.
std::uint64_t parse_size(const std::string& text, const std::string& option);

/// "64 MiB", "1 GiB", "1.5 KiB", "100 B": the largest binary unit that keeps the value >= 1.
std::string format_size(std::uint64_t bytes);

/// A time in microseconds with a readable unit: "850 ns", "12.3 us", "4.56 ms", "1.23 s".
std::string format_time_us(double time_us);

}  // namespace tenet
