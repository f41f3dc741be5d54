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
//
// Fewer questions, same answers. Each in-edge's round first splits every pair by its whole
// quantum and checks Edmonds' condition once (a max-flow per member); only a round that does
// not fit is undone and asked pair by pair. The first family's questions share the flow into w
// alone, which answers for every x while w takes in more than K and otherwise is where each x's
// question resumes. Pairs that gave less than asked are not asked again. With these and the
// growth's remembered refusals (tree_growth.cpp), the all-gather of 1 GiB on the 128 members of
// ring-fc-switch-2x4x16 takes 2.3 s of synthesis instead of 17.3 s (93% of it max-flows:
// 244,000 for splitting, now 3,968 pair questions and 16,512 checks).

#include <algorithm>

#include "tree_flow.hpp"
#include "tree_packing.hpp"

namespace tenet::synth {
namespace {

using Capacity = IntMaxFlow::Capacity;

class Splitter {
 public:
  Splitter(TreeFlowGraph& graph, bool whole_rounds) : graph_(graph), flow_(graph.flow), whole_rounds_(whole_rounds) {}

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
    // A pair that gave less than it was asked for is exhausted for good: splitting its most
    // leaves a set of the two families without slack, and later splits never add any.
    std::vector<char> exhausted(in_edges.size() * out_edges.size(), 0);
    for (;;) {
      bool progress = false;
      for (bool loops : {false, true}) {
        for (std::size_t i = 0; i < in_edges.size(); ++i) {
          // Every pair of the in-edge at its whole quantum first, checked once (Edmonds'
          // condition: every member still reached by K units): any state after those splits has
          // cuts at least as large, so each pair would have passed on its own, and the result is
          // the same as asking pair by pair, which runs only when the whole round does not fit
          // (ring-fc-switch-2x4x16: ~130 max-flows a pair).
          const bool all = whole_rounds_ && split_round(i, in_edges, out_edges, quantum[i], loops, exhausted, true);
          progress = (all || split_round(i, in_edges, out_edges, quantum[i], loops, exhausted, false)) || progress;
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
  /// One round of in-edge i over the out-edges (loops only, or none). Whole: every pair takes its
  /// quantum and the round is kept only if Edmonds' condition still holds, else undone (false).
  /// Otherwise pair by pair, each as much as it can. True when something was split.
  bool split_round(std::size_t i, const std::vector<std::uint32_t>& in_edges,
                   const std::vector<std::uint32_t>& out_edges, Capacity quantum, bool loops,
                   std::vector<char>& exhausted, bool whole) {
    const std::uint32_t in = in_edges[i];
    const std::uint32_t first_new_edge = flow_.edge_count();
    struct Done {
      std::uint32_t out;
      Capacity amount;
      std::uint32_t widened;
    };
    std::vector<Done> done;
    // Start each in-edge's round at a different out-edge, so no receiver is always first.
    for (std::size_t j = 0; j < out_edges.size(); ++j) {
      if (flow_.capacity(in) <= 0) break;
      const std::size_t o = (i + j) % out_edges.size();
      const std::uint32_t out = out_edges[o];
      if ((flow_.from(in) == flow_.to(out)) != loops || flow_.capacity(out) <= 0) continue;
      char& spent = exhausted[i * out_edges.size() + o];
      if (spent) continue;
      const Capacity wanted = std::min({quantum, flow_.capacity(in), flow_.capacity(out)});
      const Capacity amount = whole ? wanted : splittable(in, out, wanted);
      if (!whole) spent = amount < wanted;
      if (amount <= 0) continue;
      done.push_back({out, amount, split(in, out, amount)});
    }
    if (!whole || done.empty() || every_member_reached(graph_)) return !done.empty();
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      flow_.add_capacity(in, it->amount);
      flow_.add_capacity(it->out, it->amount);
      if (it->widened != kNoEdge && it->widened < first_new_edge) flow_.add_capacity(it->widened, -it->amount);
    }
    flow_.remove_edges_from(first_new_edge);
    graph_.routes.resize(std::min<std::size_t>(graph_.routes.size(), first_new_edge / 2));
    return false;
  }

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

  /// Merges `in_set` into the sink side and `out_set` into the source side, or undoes that.
  void force(std::span<const std::uint32_t> in_set, std::span<const std::uint32_t> out_set, bool on) {
    for (std::uint32_t x : in_set) flow_.set_capacity(flow_.to_sink(x), on ? IntMaxFlow::kUnlimited : 0);
    for (std::uint32_t x : out_set) {
      flow_.set_capacity(flow_.from_source(x), on ? IntMaxFlow::kUnlimited : graph_.demand[x]);
    }
  }

  /// Flow of units into a set holding everything forced into the sink side, stopping at `enough`.
  Capacity flow_into(std::span<const std::uint32_t> in_set, std::span<const std::uint32_t> out_set, Capacity enough) {
    force(in_set, out_set, true);
    const Capacity result = flow_.max_flow(enough);
    force(in_set, out_set, false);
    return result;
  }

  /// The largest amount up to `wanted` that the pair in = u->w, out = w->v can give up.
  Capacity splittable(std::uint32_t in, std::uint32_t out, Capacity wanted) {
    const std::uint32_t u = flow_.from(in);
    const std::uint32_t w = flow_.to(in);
    const std::uint32_t v = flow_.to(out);
    const Capacity need = graph_.total_demand;
    Capacity amount = wanted;
    // Sets with w inside and u, v outside, holding some member x. Opening x to the sink only adds
    // to the flow into w alone: when that is enough, every x passes (early in a switch's
    // splitting, while w still takes in more than K), and otherwise each x's question starts
    // from that flow (ring-fc-switch-2x4x16: 9.1 -> 5.7 s of packing before whole rounds).
    const std::uint32_t switch_alone[] = {w};
    const std::uint32_t pair_outside[] = {u, v};
    force(switch_alone, pair_outside, true);
    const Capacity into_switch = flow_.max_flow(need + amount);
    if (into_switch < need + amount) {
      flow_.keep_flow();
      for (NodeId x = 0; x < graph_.is_member.size() && amount > 0; ++x) {
        if (!graph_.is_member[x] || x == u || x == v) continue;
        flow_.set_capacity(flow_.to_sink(x), IntMaxFlow::kUnlimited);
        amount = std::min(amount, flow_.max_flow_from_kept(into_switch, need + amount) - need);
        flow_.set_capacity(flow_.to_sink(x), 0);
      }
    }
    force(switch_alone, pair_outside, false);
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

  static constexpr std::uint32_t kNoEdge = ~std::uint32_t{0};

  /// Splits `amount` off the pair; returns the edge u->v it widened or added (none for a loop).
  std::uint32_t split(std::uint32_t in, std::uint32_t out, Capacity amount) {
    flow_.add_capacity(in, -amount);
    flow_.add_capacity(out, -amount);
    const std::uint32_t u = flow_.from(in);
    const std::uint32_t v = flow_.to(out);
    if (u == v) return kNoEdge;
    std::vector<LinkId> route = graph_.routes[in / 2];
    route.insert(route.end(), graph_.routes[out / 2].begin(), graph_.routes[out / 2].end());
    // The same route again (a later quantum of the same pair) widens its edge.
    for (std::uint32_t edge : flow_.edges_of(u)) {
      if ((edge & 1) == 0 && flow_.to(edge) == v && edge / 2 < graph_.routes.size() &&
          graph_.routes[edge / 2] == route) {
        flow_.add_capacity(edge, amount);
        return edge;
      }
    }
    const std::uint32_t edge = flow_.add_edge(u, v, amount);
    if (graph_.routes.size() <= edge / 2) graph_.routes.resize(edge / 2 + 1);
    graph_.routes[edge / 2] = std::move(route);
    return edge;
  }

  TreeFlowGraph& graph_;
  IntMaxFlow& flow_;
  bool whole_rounds_;
};

}  // namespace

bool split_off_relays(TreeFlowGraph& graph, bool whole_rounds) {
  Splitter splitter(graph, whole_rounds);
  for (NodeId node = 0; node < graph.is_member.size(); ++node) {
    if (graph.is_member[node]) continue;
    if (!splitter.split_off(node)) return false;
  }
  return true;
}

}  // namespace tenet::synth
