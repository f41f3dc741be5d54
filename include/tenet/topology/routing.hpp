// SPDX-License-Identifier: MIT
#pragma once
// Routes for transfers between NPUs that are not neighbours (baselines, the simulator).
//
// Shortest path: fewest hops, then lowest total latency (latencies that differ by less than
// 1e-9 relative, i.e. by rounding, count as equal), then a deterministic tie-break (the path whose
// links have the lower ids when compared hop by hop from the source: the lexicographically
// smallest link-id sequence). Through switches too. Computed by BFS layers in O(nodes + links)
// per source; no heap, no all-pairs tables.
//
// On an intact grid, dimension-order routing: dimension 0 first, each along the shorter way
// around a torus (ties go in the + direction), straight on a mesh. Intact means Topology::layout
// is set, the topology has exactly the grid's NPUs and no switches, and every grid link exists in
// both directions (checked once by the constructor); otherwise shortest paths. Either way
// route(s, d) == path_in(tree_from(s), d).

#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet {

enum class RoutingPolicy {
  kAuto,  ///< dimension order on an intact grid, shortest path otherwise
  kShortestPath,
  kDimensionOrder,  ///< requires a grid layout; falls back to kShortestPath without one
};

/// Shortest-path tree from one source: parent link of every node (kNoLink for the source and
/// for nodes it cannot reach). O(nodes) memory; build one per source as needed, never all at once.
struct RouteTree {
  NodeId source = kNoNode;
  std::vector<LinkId> parent_link;
  std::vector<std::uint32_t> hops;  ///< hop count, ~0u when unreachable
  std::vector<double> latency_us;   ///< total latency of the chosen path, +inf when unreachable
};

class Router {
 public:
  explicit Router(const Topology& topology, RoutingPolicy policy = RoutingPolicy::kAuto);

  /// The links from src to dst in order; empty when src == dst. Throws std::invalid_argument
  /// when dst cannot be reached (validated topologies never hit this) or a node does not exist.
  /// Dimension order costs O(path length); a shortest path one search that stops at dst's layer.
  std::vector<LinkId> route(NodeId src, NodeId dst) const;

  /// The tree of this router's routes from src: the dimension-order tree on an intact grid,
  /// else the shortest-path tree under the tie-break rules.
  RouteTree tree_from(NodeId src) const;
  /// The path to dst read off a tree built by tree_from.
  std::vector<LinkId> path_in(const RouteTree& tree, NodeId dst) const;

  bool uses_dimension_order() const { return dimension_order_; }

 private:
  const Topology& topology_;
  Adjacency adjacency_;
  bool dimension_order_ = false;
};

}  // namespace tenet
