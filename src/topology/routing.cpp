// SPDX-License-Identifier: MIT
// Routes for transfers between NPUs that are not neighbours.
//
// Shortest paths: because the hop count comes first in the key, the best path to a node at hop h
// always extends a best path to a node at hop h-1. So instead of a Dijkstra heap this walks BFS
// layers: within a layer the nodes are kept in the lexicographic order of their chosen paths'
// link ids, and scanning that layer's out-links in ascending id offers every candidate of the next
// layer in lexicographic order too. The first offer wins unless a later one has strictly lower
// latency. O(nodes + links) per tree, exactly the rule routing.hpp states.

#include "tenet/topology/routing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace tenet {
namespace {

constexpr std::uint32_t kUnreached = ~std::uint32_t{0};

/// Latencies that differ by rounding only (sums of the same alphas in another order) count as
/// equal, so the tie-break rather than the last ulp decides between such paths.
bool strictly_less(double candidate, double current) {
  return candidate < current - 1e-9 * std::max(1.0, std::abs(current));
}

void check_node(const Topology& topology, NodeId node, const char* what) {
  if (node >= topology.node_count()) {
    throw std::invalid_argument(std::string("route ") + what + " " + std::to_string(node) + " does not exist (" +
                                std::to_string(topology.node_count()) + " nodes)");
  }
}

/// The layout matches the NPUs and every grid link is there in both directions. Checking the
/// links once (O(nodes * dims)) means a dimension-order route never meets a missing link, so
/// route() and tree_from() always agree; a grid with a hole (a one-way ring) routes by
/// shortest paths instead.
bool intact_grid(const Topology& topology) {
  const GridLayout& layout = topology.layout;
  if (!layout.is_grid() || topology.switch_count() != 0) return false;
  for (int dim : layout.dims) {
    if (dim < 1) return false;
  }
  if (layout.size() != topology.npu_count()) return false;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    std::vector<int> at = layout.coords(npu);
    for (std::size_t d = 0; d < at.size(); ++d) {
      const int n = layout.dims[d];
      const int here = at[d];
      for (int step : {1, -1}) {
        if (!layout.wraps && (here + step < 0 || here + step >= n)) continue;
        if (n == 1) continue;
        at[d] = (here + step + n) % n;
        const bool present = topology.has_link(npu, layout.npu_at(at));
        at[d] = here;
        if (!present) return false;
      }
    }
  }
  return true;
}

/// The coordinate step taken from `from` towards `to` in one dimension of size n.
int step_towards(int from, int to, int n, bool wraps) {
  if (!wraps) return to > from ? 1 : -1;
  const int forward = ((to - from) % n + n) % n;
  return forward <= n - forward ? 1 : -1;
}

int hop_distance(int from, int to, int n, bool wraps) {
  if (!wraps) return std::abs(to - from);
  const int forward = ((to - from) % n + n) % n;
  return std::min(forward, n - forward);
}

/// Layered shortest-path search (see the file comment). Stops early once the layer holding
/// `stop` is final, since nothing later can change that node's path.
RouteTree layered_tree(const Topology& topology, const Adjacency& adjacency, NodeId src, NodeId stop) {
  const std::uint32_t nodes = topology.node_count();
  RouteTree tree;
  tree.source = src;
  tree.parent_link.assign(nodes, kNoLink);
  tree.hops.assign(nodes, kUnreached);
  tree.latency_us.assign(nodes, std::numeric_limits<double>::infinity());
  tree.hops[src] = 0;
  tree.latency_us[src] = 0.0;

  std::vector<NodeId> layer{src};
  std::vector<NodeId> next;
  for (std::uint32_t hop = 1; !layer.empty(); ++hop) {
    if (stop != kNoNode && tree.hops[stop] != kUnreached) break;
    next.clear();
    bool reordered = false;
    for (NodeId u : layer) {
      for (LinkId id : adjacency.out(u)) {
        const Link& link = topology.link(id);
        const double latency = tree.latency_us[u] + link.latency_us;
        if (tree.hops[link.dst] == kUnreached) {
          tree.hops[link.dst] = hop;
          tree.latency_us[link.dst] = latency;
          tree.parent_link[link.dst] = id;
          next.push_back(link.dst);
        } else if (tree.hops[link.dst] == hop && strictly_less(latency, tree.latency_us[link.dst])) {
          tree.latency_us[link.dst] = latency;
          tree.parent_link[link.dst] = id;
          reordered = true;
        }
      }
    }
    if (reordered) {
      // A node whose parent changed now sorts where its new parent link was offered: one more
      // scan in offer order lists the layer by final path.
      next.clear();
      for (NodeId u : layer) {
        for (LinkId id : adjacency.out(u)) {
          const NodeId v = topology.link(id).dst;
          if (tree.hops[v] == hop && tree.parent_link[v] == id) next.push_back(v);
        }
      }
    }
    layer.swap(next);
  }
  return tree;
}

}  // namespace

Router::Router(const Topology& topology, RoutingPolicy policy)
    : topology_(topology),
      adjacency_(topology),
      dimension_order_(policy != RoutingPolicy::kShortestPath && intact_grid(topology)) {}

std::vector<LinkId> Router::route(NodeId src, NodeId dst) const {
  check_node(topology_, src, "source");
  check_node(topology_, dst, "destination");
  if (src == dst) return {};
  if (dimension_order_) {
    const GridLayout& grid = topology_.layout;
    std::vector<int> at = grid.coords(src);
    const std::vector<int> target = grid.coords(dst);
    std::vector<LinkId> path;
    NodeId node = src;
    bool complete = true;
    for (std::size_t d = 0; d < grid.dims.size() && complete; ++d) {
      while (at[d] != target[d]) {
        const int n = grid.dims[d];
        at[d] = (at[d] + step_towards(at[d], target[d], n, grid.wraps) + n) % n;
        const NodeId hop = grid.npu_at(at);
        const LinkId link = topology_.find_link(node, hop);
        if (link == kNoLink) {  // cannot happen after intact_grid; kept as a safety net
          complete = false;
          break;
        }
        path.push_back(link);
        node = hop;
      }
    }
    if (complete) return path;
  }
  return path_in(layered_tree(topology_, adjacency_, src, dst), dst);
}

RouteTree Router::tree_from(NodeId src) const {
  check_node(topology_, src, "source");
  if (dimension_order_) {
    // Dimension-order routes from one source form a tree: a prefix of a route is the route to
    // the node where the prefix ends (the shorter way stays the shorter way part of the way).
    // So each node's parent is one step back along the last dimension its route moves in.
    const GridLayout& grid = topology_.layout;
    const std::uint32_t nodes = topology_.node_count();
    const std::vector<int> origin = grid.coords(src);
    RouteTree tree;
    tree.source = src;
    tree.parent_link.assign(nodes, kNoLink);
    tree.hops.assign(nodes, 0);
    tree.latency_us.assign(nodes, 0.0);
    std::uint32_t max_hops = 0;
    bool complete = true;
    for (NodeId v = 0; v < nodes && complete; ++v) {
      if (v == src) continue;
      std::vector<int> at = grid.coords(v);
      std::uint32_t hops = 0;
      std::size_t last_dim = 0;
      for (std::size_t d = 0; d < at.size(); ++d) {
        if (at[d] == origin[d]) continue;
        hops += static_cast<std::uint32_t>(hop_distance(origin[d], at[d], grid.dims[d], grid.wraps));
        last_dim = d;
      }
      const int n = grid.dims[last_dim];
      at[last_dim] = (at[last_dim] - step_towards(origin[last_dim], at[last_dim], n, grid.wraps) + n) % n;
      tree.parent_link[v] = topology_.find_link(grid.npu_at(at), v);
      tree.hops[v] = hops;
      max_hops = std::max(max_hops, hops);
      complete = tree.parent_link[v] != kNoLink;
    }
    if (complete) {
      // Latencies accumulate parent before child: bucket the nodes by hop count.
      std::vector<std::uint32_t> start(max_hops + 2, 0);
      for (NodeId v = 0; v < nodes; ++v) ++start[tree.hops[v] + 1];
      for (std::uint32_t h = 0; h <= max_hops; ++h) start[h + 1] += start[h];
      std::vector<NodeId> by_hops(nodes);
      for (NodeId v = 0; v < nodes; ++v) by_hops[start[tree.hops[v]]++] = v;
      for (NodeId v : by_hops) {
        if (v == src) continue;
        const Link& link = topology_.link(tree.parent_link[v]);
        tree.latency_us[v] = tree.latency_us[link.src] + link.latency_us;
      }
      return tree;
    }
    // Unreachable after intact_grid; a whole shortest-path tree is the safe answer.
  }
  return layered_tree(topology_, adjacency_, src, kNoNode);
}

std::vector<LinkId> Router::path_in(const RouteTree& tree, NodeId dst) const {
  check_node(topology_, dst, "destination");
  if (dst == tree.source) return {};
  if (tree.hops[dst] == kUnreached) {
    throw std::invalid_argument(topology_.node_label(dst) + " cannot be reached from " +
                                topology_.node_label(tree.source));
  }
  std::vector<LinkId> path(tree.hops[dst]);
  NodeId node = dst;
  for (std::size_t i = path.size(); i-- > 0;) {
    path[i] = tree.parent_link[node];
    node = topology_.link(path[i]).src;
  }
  return path;
}

}  // namespace tenet
