// SPDX-License-Identifier: MIT
#pragma once
// The links of every route, in CSR form (internal to the simulator). RouteTable fills one with
// physical links; the symmetric quotient (translation_symmetry.hpp) fills one with link orbits, in
// which a route may name the same orbit several times.

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet::sim {

using RouteId = std::uint32_t;

struct RoutePaths {
  std::vector<std::uint64_t> offsets{0};
  std::vector<LinkId> links;
  std::uint32_t max_hops = 1;  ///< the longest route, in hops (at least 1)

  std::span<const LinkId> of(RouteId route) const {
    return {links.data() + offsets[route], offsets[route + 1] - offsets[route]};
  }
  std::size_t size() const { return offsets.size() - 1; }
  RouteId append(std::span<const LinkId> path) {
    links.insert(links.end(), path.begin(), path.end());
    offsets.push_back(links.size());
    max_hops = std::max<std::uint32_t>(max_hops, static_cast<std::uint32_t>(path.size()));
    return static_cast<RouteId>(offsets.size() - 2);
  }
};

}  // namespace tenet::sim
