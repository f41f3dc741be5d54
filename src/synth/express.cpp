// SPDX-License-Identifier: MIT
#include "express.hpp"

#include <algorithm>
#include <limits>

#include "tenet/topology/routing.hpp"

namespace tenet::synth {

Topology express_topology(const Topology& topology, const std::vector<NodeId>& members, bool through_members) {
  Topology express(topology.npu_count(), {});
  express.name = topology.name + " (express)";
  express.original_npu_ids = topology.original_npu_ids;
  const Router router(topology);
  std::vector<char> member(topology.node_count(), 0);
  for (NodeId node : members) member[node] = 1;
  auto enters_member = [&](LinkId id) { return member[topology.link(id).dst] != 0; };
  for (NodeId src : members) {
    const RouteTree tree = router.tree_from(src);
    for (NodeId dst : members) {
      if (dst == src) continue;
      const std::vector<LinkId> path = router.path_in(tree, dst);
      if (!through_members && !path.empty() && std::any_of(path.begin(), path.end() - 1, enters_member)) continue;
      double latency_us = 0.0;
      double bandwidth_GBps = std::numeric_limits<double>::infinity();
      for (LinkId id : path) {
        latency_us += topology.link(id).latency_us;
        bandwidth_GBps = std::min(bandwidth_GBps, topology.link(id).bandwidth_GBps);
      }
      express.add_link({src, dst, latency_us, bandwidth_GBps});
    }
  }
  return express;
}

}  // namespace tenet::synth
