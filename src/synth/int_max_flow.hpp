// SPDX-License-Identifier: MIT
#pragma once
// Integer max-flow (Dinic) on a small graph that changes between runs: the tree packing
// (tree_packing.hpp) asks thousands of "can this much still get through?" questions of one
// graph while it splits switches off and lays trees on it. Capacities are whole tree units, so
// answers are exact; a run stops as soon as the flow reaches what the question needs.
//
// Two extra vertices make every question a single run: the source S and the sink T, with an edge
// S->x and an edge x->T for every vertex x, at capacity 0 until a question opens them (to merge x
// into the source or the sink side).

#include <cstdint>
#include <vector>

namespace tenet::synth {

class IntMaxFlow {
 public:
  using Capacity = std::int64_t;
  /// Larger than any cut of a graph this class is used on.
  static constexpr Capacity kUnlimited = Capacity{1} << 40;

  /// `vertices` ordinary vertices, numbered from 0; source() and sink() come after them.
  explicit IntMaxFlow(std::uint32_t vertices);

  std::uint32_t source() const { return vertices_; }
  std::uint32_t sink() const { return vertices_ + 1; }
  std::uint32_t vertex_count() const { return vertices_ + 2; }

  /// Adds an edge and returns its id (its residual twin is id ^ 1).
  std::uint32_t add_edge(std::uint32_t from, std::uint32_t to, Capacity capacity);
  /// Edge ids so far (twins included): the id the next add_edge returns.
  std::uint32_t edge_count() const { return static_cast<std::uint32_t>(head_.size()); }
  /// Removes the edges added since edge_count() was `first`, as if never added.
  void remove_edges_from(std::uint32_t first);
  void set_capacity(std::uint32_t edge, Capacity capacity) { capacity_[edge] = capacity; }
  void add_capacity(std::uint32_t edge, Capacity delta) { capacity_[edge] += delta; }
  Capacity capacity(std::uint32_t edge) const { return capacity_[edge]; }
  std::uint32_t from(std::uint32_t edge) const { return head_[edge ^ 1]; }
  std::uint32_t to(std::uint32_t edge) const { return head_[edge]; }
  /// Edges leaving a vertex, in the order they were added (residual twins included: ids ^ 1 of
  /// edges entering it, which have odd ids).
  const std::vector<std::uint32_t>& edges_of(std::uint32_t vertex) const { return adjacency_[vertex]; }

  /// The edge S -> x and the edge x -> T (see the file comment).
  std::uint32_t from_source(std::uint32_t vertex) const { return from_source_[vertex]; }
  std::uint32_t to_sink(std::uint32_t vertex) const { return to_sink_[vertex]; }

  /// The maximum flow from source() to sink() under the current capacities, or `enough` if it
  /// is at least that. Capacities are left as they were.
  Capacity max_flow(Capacity enough);

  /// Keeps the flow the last max_flow() run found, so that questions that only open more edges
  /// can start from it (max_flow_from_kept).
  void keep_flow() {
    kept_residual_ = residual_;
    kept_capacity_ = capacity_;
  }
  /// As max_flow(), augmenting the kept flow (worth `kept`, what its run returned) rather than
  /// starting from nothing: the per-member questions of a switch split all share the flow into
  /// the switch, and only the rest has to be found again. Runs from nothing when a capacity
  /// fell below the kept flow on it.
  Capacity max_flow_from_kept(Capacity kept, Capacity enough);

 private:
  Capacity augment(Capacity flow, Capacity enough);
  bool levels_from_source();
  Capacity push(std::uint32_t vertex, Capacity limit);

  std::uint32_t vertices_;
  std::vector<std::uint32_t> head_;  ///< per edge: the vertex it enters
  std::vector<Capacity> capacity_;   ///< per edge; residual twins have 0
  std::vector<std::vector<std::uint32_t>> adjacency_;
  std::vector<std::uint32_t> from_source_;
  std::vector<std::uint32_t> to_sink_;
  // Per run.
  std::vector<Capacity> residual_;
  std::vector<std::int32_t> level_;
  std::vector<std::uint32_t> next_edge_;
  std::vector<std::uint32_t> queue_;
  std::vector<Capacity> kept_residual_;
  std::vector<Capacity> kept_capacity_;
};

}  // namespace tenet::synth
