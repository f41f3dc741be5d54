// SPDX-License-Identifier: MIT
#include "group_overlay.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "tenet/topology/routing.hpp"

namespace tenet::synth {

std::optional<GroupOverlay> group_overlay(const Topology& topology, const std::vector<NodeId>& members) {
  if (topology.switch_count() == 0) return std::nullopt;
  // Members by their home switch, each group in ascending id (members is ascending).
  const Adjacency adjacency(topology);
  std::map<NodeId, std::vector<NodeId>> by_switch;
  for (NodeId member : members) {
    LinkId home = kNoLink;
    for (LinkId id : adjacency.out(member)) {
      const Link& link = topology.link(id);
      if (!topology.is_switch(link.dst)) continue;
      if (home == kNoLink || link.bandwidth_GBps > topology.link(home).bandwidth_GBps ||
          (link.bandwidth_GBps == topology.link(home).bandwidth_GBps && id < home))
        home = id;
    }
    // A member on no switch has no group: it would have no virtual links at all.
    if (home == kNoLink) return std::nullopt;
    by_switch[topology.link(home).dst].push_back(member);
  }
  std::vector<std::vector<NodeId>> groups;
  std::size_t largest = 0;
  for (auto& [unused, group] : by_switch) {
    largest = std::max(largest, group.size());
    groups.push_back(std::move(group));
  }
  if (groups.size() < 2 || largest < 2) return std::nullopt;

  // The virtual links, group by group, then their routes.
  std::vector<std::pair<NodeId, NodeId>> pairs;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t position = 0; position < groups[g].size(); ++position) {
      const NodeId src = groups[g][position];
      for (NodeId dst : groups[g]) {
        if (dst != src) pairs.emplace_back(src, dst);
      }
      for (std::size_t other = 0; other < groups.size(); ++other) {
        if (other != g && position < groups[other].size()) pairs.emplace_back(src, groups[other][position]);
      }
    }
  }
  const Router router(topology);
  std::vector<std::vector<LinkId>> routes;
  routes.reserve(pairs.size());
  std::vector<std::uint32_t> usage(topology.link_count(), 0);
  NodeId tree_source = kNoNode;
  RouteTree tree;
  for (const auto& [src, dst] : pairs) {
    if (src != tree_source) {
      tree = router.tree_from(src);
      tree_source = src;
    }
    routes.push_back(router.path_in(tree, dst));
    for (LinkId id : routes.back()) ++usage[id];
  }
  Topology overlay(topology.npu_count(), {});
  overlay.name = topology.name + " (group overlay)";
  overlay.description = topology.description;
  overlay.original_npu_ids = topology.original_npu_ids;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    double latency_us = 0.0;
    double bandwidth_GBps = std::numeric_limits<double>::infinity();
    for (LinkId id : routes[i]) {
      latency_us += topology.link(id).latency_us;
      bandwidth_GBps = std::min(bandwidth_GBps, topology.link(id).bandwidth_GBps / usage[id]);
    }
    overlay.add_link({pairs[i].first, pairs[i].second, latency_us, bandwidth_GBps});
  }
  return GroupOverlay{std::move(overlay), groups.size()};
}

}  // namespace tenet::synth
