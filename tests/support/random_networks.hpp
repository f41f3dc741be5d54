// SPDX-License-Identifier: MIT
#pragma once
// Shared by the property tests: seeded random networks as topology files.

#include <cstdint>
#include <random>
#include <set>
#include <string>

namespace tenet::testing {

/// A connected random switched network as a topology file: switches in a chain (plus extra
/// links), every NPU on one or two switches, a few direct links between NPUs.
inline std::string random_switched_network(std::uint32_t seed) {
  std::mt19937 random(seed);
  auto pick = [&](std::uint32_t below) { return static_cast<std::uint32_t>(random() % below); };
  const std::uint32_t npus = 4 + pick(7);
  const std::uint32_t switches = 1 + pick(3);
  const double ports[] = {25, 50, 100, 300};
  const double fabric[] = {50, 100, 400};
  std::string links;
  auto add = [&](const std::string& src, const std::string& dst, double bandwidth) {
    if (!links.empty()) links += ",";
    links += "{\"src\":" + src + ",\"dst\":" + dst + ",\"bandwidth_GBps\":" + std::to_string(bandwidth) + "}";
  };
  auto sw = [](std::uint32_t s) { return "\"s" + std::to_string(s) + "\""; };
  for (std::uint32_t s = 1; s < switches; ++s) add(sw(s - 1), sw(s), fabric[pick(3)]);
  if (switches == 3 && pick(2) == 0) add(sw(0), sw(2), fabric[pick(3)]);
  for (std::uint32_t npu = 0; npu < npus; ++npu) {
    const std::uint32_t first = pick(switches);
    add(std::to_string(npu), sw(first), ports[pick(4)]);
    if (switches > 1 && pick(3) == 0) add(std::to_string(npu), sw((first + 1) % switches), ports[pick(4)]);
  }
  std::set<std::pair<std::uint32_t, std::uint32_t>> direct;
  for (std::uint32_t k = pick(npus); k > 0; --k) {
    const std::uint32_t a = pick(npus);
    const std::uint32_t b = pick(npus);
    if (a != b && direct.insert({std::min(a, b), std::max(a, b)}).second)
      add(std::to_string(a), std::to_string(b), ports[pick(4)]);
  }
  std::string names;
  for (std::uint32_t s = 0; s < switches; ++s) {
    if (s > 0) names += ",";
    names += sw(s);
  }
  return "{\"name\":\"random-" + std::to_string(seed) + "\",\"npus\":" + std::to_string(npus) +
         ",\"defaults\":{\"latency_us\":" + std::to_string(0.5 + pick(3)) + "},\"switches\":[" + names +
         "],\"links\":[" + links + "]}";
}

}  // namespace tenet::testing
