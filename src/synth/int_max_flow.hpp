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

 private:
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
};

}  // namespace tenet::synth
