// SPDX-License-Identifier: MIT
#pragma once
// Summary numbers of a topology: what `tenet topo info` prints and what the lower bounds use.

#include <cstdint>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet {

/// Largest source count for which diameters are computed exactly (one search per NPU); above it
/// they come from repeated farthest-node sweeps, which give a value <= the true diameter and so
/// keep every bound built on them valid.
constexpr std::uint32_t kExactDiameterLimit = 1024;

struct Diameter {
  std::uint32_t hops = 0;   ///< largest fewest-hop distance between two NPUs
  double latency_us = 0.0;  ///< largest lowest-latency distance between two NPUs
  bool exact = true;        ///< false: both are lower estimates (see kExactDiameterLimit)
};

/// Diameters between the given NPUs (all NPUs when empty) over directed links; paths may cross
/// any node. Parallel over sources, O(sources * (nodes + links) log nodes) time and O(nodes)
/// memory per thread; the result does not depend on the thread count.
Diameter compute_diameter(const Topology& topology, const std::vector<NodeId>& participants = {});

struct RangeStats {
  double min = 0.0;
  double mean = 0.0;
  double max = 0.0;
};

struct TopologyStats {
  std::uint32_t npus = 0;
  std::uint32_t switches = 0;
  std::uint32_t links = 0;    ///< directed
  RangeStats npu_out_degree;  ///< links leaving each NPU
  RangeStats link_bandwidth_GBps;
  RangeStats link_latency_us;
  RangeStats npu_ingress_GBps;  ///< sum of bandwidths into each NPU
  Diameter diameter;
};

TopologyStats compute_stats(const Topology& topology);

}  // namespace tenet
