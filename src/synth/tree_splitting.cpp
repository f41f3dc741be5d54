// SPDX-License-Identifier: MIT
// Step 2 of the tree packing (tree_packing.hpp): splitting off every node that only forwards
// (switches, and NPUs that are not members), so that trees are packed on edges between members,
// each edge standing for a route through the network.
//
// Splitting gamma units off the pair u->w, w->v (u->w and w->v lose gamma, u->v gains it) changes
// the in-capacity of a node set X only when (w in X, u and v not) or (w not in X, u and v in X):
// it drops by gamma. So the largest gamma that keeps every member reachable by K units is the
// smallest slack (in-capacity including the source's units, minus K) over those two families of
// sets that hold a member, each the minimum cut of one max-flow per member x forced into X.

#include <algorithm>

#include "tree_flow.hpp"
#include "tree_packing.hpp"

namespace tenet::synth {
namespace {

using Capacity = IntMaxFlow::Capacity;

class Splitter {
 public:
  explicit Splitter(TreeFlowGraph& graph) : graph_(graph), flow_(graph.flow) {}

  /// Splits off everything at w; false when capacity is left that no pair can take.
  bool split_off(NodeId w) {
    // Pairs are split a quantum at a time (a share of the in-edge's capacity per out-edge), in
    // round robin, loops (u->w->u, which only drop capacity) only when nothing else goes.
    std::vector<std::uint32_t> in_edges = edges_into(w);
    std::vector<std::uint32_t> out_edges = edges_out_of(w);
    std::vector<Capacity> quantum(in_edges.size());
    for (std::size_t i = 0; i < in_edges.size(); ++i) {
      const Capacity others = static_cast<Capacity>(std::max<std::size_t>(1, out_edges.size() - 1));
      quantum[i] = std::max<Capacity>(1, (flow_.capacity(in_edges[i]) + others - 1) / others);
    }
    for (;;) {
      bool progress = false;
      for (bool loops : {false, true}) {
        for (std::size_t i = 0; i < in_edges.size(); ++i) {
          const std::uint32_t in = in_edges[i];
          // Start each in-edge's round at a different out-edge, so no receiver is always first.
          for (std::size_t j = 0; j < out_edges.size(); ++j) {
            if (flow_.capacity(in) <= 0) break;
            const std::uint32_t out = out_edges[(i + j) % out_edges.size()];
            if ((flow_.from(in) == flow_.to(out)) != loops || flow_.capacity(out) <= 0) continue;
            const Capacity amount =
                splittable(in, out, std::min({quantum[i], flow_.capacity(in), flow_.capacity(out)}));
            if (amount <= 0) continue;
            split(in, out, amount);
            progress = true;
          }
        }
        if (progress) break;
      }
      if (!progress) break;
    }
    bool complete = true;
    for (std::uint32_t edge : in_edges) complete = complete && flow_.capacity(edge) == 0;
    for (std::uint32_t edge : out_edges) complete = complete && flow_.capacity(edge) == 0;
    return complete;
  }

 private:
  std::vector<std::uint32_t> edges_into(NodeId w) const {
    std::vector<std::uint32_t> edges;
    for (std::uint32_t twin : flow_.edges_of(w)) {
      if ((twin & 1) == 0) continue;
      const std::uint32_t edge = twin ^ 1;
      if (flow_.from(edge) != flow_.source() && flow_.capacity(edge) > 0) edges.push_back(edge);
    }
    return edges;
  }
  std::vector<std::uint32_t> edges_out_of(NodeId w) const {
    std::vector<std::uint32_t> edges;
    for (std::uint32_t edge : flow_.edges_of(w)) {
      if ((edge & 1) == 0 && flow_.to(edge) != flow_.sink() && flow_.capacity(edge) > 0) edges.push_back(edge);
    }
    return edges;
  }

  /// Flow of units into a set holding everything forced into the sink side, stopping at `enough`.
  Capacity flow_into(std::span<const std::uint32_t> in_set, std::span<const std::uint32_t> out_set, Capacity enough) {
    for (std::uint32_t x : in_set) flow_.set_capacity(flow_.to_sink(x), IntMaxFlow::kUnlimited);
    for (std::uint32_t x : out_set) flow_.set_capacity(flow_.from_source(x), IntMaxFlow::kUnlimited);
    const Capacity result = flow_.max_flow(enough);
    for (std::uint32_t x : in_set) flow_.set_capacity(flow_.to_sink(x), 0);
    for (std::uint32_t x : out_set) flow_.set_capacity(flow_.from_source(x), graph_.demand[x]);
    return result;
  }

  /// The largest amount up to `wanted` that the pair in = u->w, out = w->v can give up.
  Capacity splittable(std::uint32_t in, std::uint32_t out, Capacity wanted) {
    const std::uint32_t u = flow_.from(in);
    const std::uint32_t w = flow_.to(in);
    const std::uint32_t v = flow_.to(out);
    const Capacity need = graph_.total_demand;
    Capacity amount = wanted;
    // Sets with w inside and u, v outside, holding some member x.
    for (NodeId x = 0; x < graph_.is_member.size() && amount > 0; ++x) {
      if (!graph_.is_member[x] || x == u || x == v) continue;
      const std::uint32_t inside[] = {w, x};
      const std::uint32_t outside[] = {u, v};
      amount = std::min(amount, flow_into(inside, outside, need + amount) - need);
    }
    // Sets with u and v inside and w outside (they hold a member if u or v is one).
    const bool member_inside = graph_.is_member[u] || graph_.is_member[v];
    for (NodeId x = 0; x < graph_.is_member.size() && amount > 0; ++x) {
      if (member_inside ? x != 0 : !graph_.is_member[x] || x == w) continue;
      const std::uint32_t with_member[] = {u, v, x};
      const std::uint32_t outside[] = {w};
      amount =
          std::min(amount, flow_into(std::span(with_member, member_inside ? 2 : 3), outside, need + amount) - need);
    }
    return std::max<Capacity>(amount, 0);
  }

  void split(std::uint32_t in, std::uint32_t out, Capacity amount) {
    flow_.add_capacity(in, -amount);
    flow_.add_capacity(out, -amount);
    const std::uint32_t u = flow_.from(in);
    const std::uint32_t v = flow_.to(out);
    if (u == v) return;
    std::vector<LinkId> route = graph_.routes[in / 2];
    route.insert(route.end(), graph_.routes[out / 2].begin(), graph_.routes[out / 2].end());
    // The same route again (a later quantum of the same pair) widens its edge.
    for (std::uint32_t edge : flow_.edges_of(u)) {
      if ((edge & 1) == 0 && flow_.to(edge) == v && edge / 2 < graph_.routes.size() &&
          graph_.routes[edge / 2] == route) {
        flow_.add_capacity(edge, amount);
        return;
      }
    }
    const std::uint32_t edge = flow_.add_edge(u, v, amount);
    if (graph_.routes.size() <= edge / 2) graph_.routes.resize(edge / 2 + 1);
    graph_.routes[edge / 2] = std::move(route);
  }

  TreeFlowGraph& graph_;
  IntMaxFlow& flow_;
};

}  // namespace

bool split_off_relays(TreeFlowGraph& graph) {
  Splitter splitter(graph);
  for (NodeId node = 0; node < graph.is_member.size(); ++node) {
    if (graph.is_member[node]) continue;
    if (!splitter.split_off(node)) return false;
  }
  return true;
}

}  // namespace tenet::synth
