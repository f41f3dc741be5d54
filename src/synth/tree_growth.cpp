// SPDX-License-Identifier: MIT
// Step 3 of the tree packing (tree_packing.hpp): growing the trees on the split graph.
//
// The graph always holds D - m A(T): the capacities left by the finished trees, minus m units of
// every edge of the tree T being grown (the source's edge to its root included). Invariant: every
// member still receives K - m units from the source (K: the units still to pack, this tree's
// included). Adding a->b at multiplicity m keeps it iff every set holding b but not a receives K
// units in D - m A(T): one max-flow, with a merged into the source and b into the sink.

#include <algorithm>

#include "tree_flow.hpp"
#include "tree_packing.hpp"

namespace tenet::synth {
namespace {

using Capacity = IntMaxFlow::Capacity;

class TreeGrower {
 public:
  explicit TreeGrower(TreeFlowGraph& graph) : graph_(graph), flow_(graph.flow), in_tree_(graph.is_member.size(), 0) {}

  /// Grows one tree from `root` carrying as many of its remaining units as fit; its edges are
  /// flow edge ids, parents first. Empty when no edge fits (which Lovasz's theorem rules out).
  struct Grown {
    Capacity units = 0;
    std::vector<std::uint32_t> edges;
    std::vector<std::uint32_t> depth;
  };
  std::optional<Grown> grow(NodeId root, std::size_t members) {
    Grown tree;
    forget_refusals();
    m_ = graph_.demand[root];
    root_ = root;
    edges_.clear();
    std::fill(in_tree_.begin(), in_tree_.end(), 0);
    in_tree_[root] = 1;
    std::vector<NodeId> order = {root};
    std::vector<std::uint32_t> depth_of(in_tree_.size(), 0);
    flow_.add_capacity(flow_.from_source(root), -m_);
    while (order.size() < members) {
      std::uint32_t chosen = ~std::uint32_t{0};
      Capacity chosen_units = 0;
      // Shallowest parent first, at the full multiplicity; failing that, the edge that keeps the
      // most units (each found by bisection).
      for (NodeId a : order) {
        for (std::uint32_t edge : candidates(a)) {
          if (flow_.capacity(edge) < m_ || refused_[edge / 2] == refusals_) continue;
          if (keeps_invariant(edge, m_)) {
            chosen = edge;
            chosen_units = m_;
            break;
          }
          refused_[edge / 2] = refusals_;
        }
        if (chosen_units == m_) break;
      }
      if (chosen_units == 0) {
        for (NodeId a : order) {
          for (std::uint32_t edge : candidates(a)) {
            Capacity low = chosen_units;  // known to beat: none above low found yet
            Capacity high = std::min(m_, flow_.capacity(edge));
            while (low < high) {
              const Capacity middle = low + (high - low + 1) / 2;
              if (keeps_invariant(edge, middle)) {
                low = middle;
              } else {
                high = middle - 1;
              }
            }
            if (low > chosen_units) {
              chosen = edge;
              chosen_units = low;
            }
          }
        }
      }
      if (chosen_units == 0) {
        set_multiplicity(0);
        return std::nullopt;
      }
      set_multiplicity(chosen_units);
      flow_.add_capacity(chosen, -m_);
      edges_.push_back(chosen);
      const NodeId child = flow_.to(chosen);
      in_tree_[child] = 1;
      depth_of[child] = depth_of[flow_.from(chosen)] + 1;
      tree.depth.push_back(depth_of[child]);
      order.push_back(child);
    }
    tree.units = m_;
    tree.edges = edges_;
    graph_.demand[root] -= m_;
    graph_.total_demand -= m_;
    return tree;
  }

 private:
  /// Edges from a to members not yet in the tree.
  std::vector<std::uint32_t> candidates(NodeId a) const {
    std::vector<std::uint32_t> edges;
    for (std::uint32_t edge : flow_.edges_of(a)) {
      if ((edge & 1) != 0 || flow_.to(edge) >= in_tree_.size()) continue;
      const NodeId b = flow_.to(edge);
      if (graph_.is_member[b] && !in_tree_[b] && flow_.capacity(edge) > 0) edges.push_back(edge);
    }
    return edges;
  }

  /// Makes the graph D - units A(T).
  void set_multiplicity(Capacity units) {
    if (units != m_) forget_refusals();
    const Capacity back = m_ - units;
    for (std::uint32_t edge : edges_) flow_.add_capacity(edge, back);
    flow_.add_capacity(flow_.from_source(root_), back);
    m_ = units;
  }

  bool keeps_invariant(std::uint32_t edge, Capacity units) {
    const Capacity current = m_;
    set_multiplicity(units);
    const NodeId a = flow_.from(edge);
    const NodeId b = flow_.to(edge);
    const Capacity a_fed = flow_.capacity(flow_.from_source(a));
    flow_.set_capacity(flow_.from_source(a), IntMaxFlow::kUnlimited);
    flow_.set_capacity(flow_.to_sink(b), IntMaxFlow::kUnlimited);
    const bool keeps = flow_.max_flow(graph_.total_demand) >= graph_.total_demand;
    flow_.set_capacity(flow_.to_sink(b), 0);
    flow_.set_capacity(flow_.from_source(a), a_fed);
    set_multiplicity(current);
    return keeps;
  }

  /// An edge refused at multiplicity m stays refused while the tree grows at m: each edge the
  /// tree takes lowers capacities, so no set's in-flow rises. The first-fit scan, shallowest
  /// parent first, would otherwise ask again for every edge it adds (ring-fc-switch-2x4x16: 12
  /// max-flows per tree edge).
  void forget_refusals() {
    if (refused_.size() < graph_.routes.size()) refused_.resize(graph_.routes.size(), 0);
    ++refusals_;
  }

  TreeFlowGraph& graph_;
  IntMaxFlow& flow_;
  std::vector<std::uint32_t> refused_;  ///< per flow edge id / 2: the refusals_ it was refused in
  std::uint32_t refusals_ = 0;
  std::vector<char> in_tree_;
  std::vector<std::uint32_t> edges_;
  NodeId root_ = 0;
  Capacity m_ = 0;
};

}  // namespace

std::optional<TreePacking> pack_trees(const Topology& topology, const std::vector<NodeId>& members,
                                      const TreeUnits& units) {
  TreeFlowGraph graph = tree_flow_graph(topology, members, units.per_member, units.unit_GBps);
  if (!every_member_reached(graph) || !split_off_relays(graph)) return std::nullopt;
  TreePacking packing;
  packing.units = units;
  std::vector<std::uint32_t> route_index(graph.routes.size(), ~std::uint32_t{0});
  TreeGrower grower(graph);
  // Round robin over the roots, so that no member's trees take the best edges first.
  while (graph.total_demand > 0) {
    for (std::uint32_t i = 0; i < members.size(); ++i) {
      if (graph.demand[members[i]] == 0) continue;
      std::optional<TreeGrower::Grown> grown = grower.grow(members[i], members.size());
      if (!grown) return std::nullopt;
      PackedTree tree;
      tree.root = i;
      tree.units = static_cast<std::uint32_t>(grown->units);
      tree.depth = std::move(grown->depth);
      for (std::uint32_t edge : grown->edges) {
        std::uint32_t& index = route_index[edge / 2];
        if (index == ~std::uint32_t{0}) {
          index = static_cast<std::uint32_t>(packing.routes.size());
          packing.routes.push_back(graph.routes[edge / 2]);
        }
        tree.edges.push_back({graph.flow.from(edge), graph.flow.to(edge), index});
      }
      packing.trees.push_back(std::move(tree));
    }
  }
  return packing;
}

}  // namespace tenet::synth
