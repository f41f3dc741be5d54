// SPDX-License-Identifier: MIT
#pragma once
// The network as a max-flow problem for Boost's push-relabel solver (internal to the cut bound; the
// bound itself is explained in cut_bound.cpp).
//
// One CSR graph per bound, shared read-only by every max-flow run: a vertex per topology node plus
// a super source; per link u->v an edge u->v and its reverse v->u, and per member an edge from the
// super source and its reverse. Push-relabel wants every reverse edge at capacity 0, so the
// transposed network (links turned around) is the same graph with each pair's capacities swapped.
// Push-relabel rather than Boykov-Kolmogorov: with the super source feeding every member, BK's
// augmenting paths cost members x path length per run (28 ms on a 64x64 mesh), push-relabel about
// the size of the graph (1 ms). Everything a run writes lives in a Scratch, one per task, so runs
// in parallel share nothing writable.

#include <cstdint>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include "tenet/topology/topology.hpp"

namespace tenet::cut {

class CutGraph {
 public:
  using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                                   boost::no_property, std::uint32_t, std::uint32_t>;
  using Edge = boost::graph_traits<Graph>::edge_descriptor;

  /// Work space of one max-flow run at a time: capacities (set by the caller), residuals, and the
  /// source side of the last minimum cut. Sized by prepare().
  struct Scratch {
    std::vector<double> capacity;
    std::vector<double> residual;
    std::vector<char> source_side;
    std::vector<std::uint32_t> queue;
  };

  CutGraph(const Topology& topology, const std::vector<NodeId>& members);

  std::uint32_t super_source() const { return super_source_; }
  std::size_t vertex_count() const { return super_source_ + 1; }
  std::size_t edge_count() const { return reverse_.size(); }

  /// Link bandwidths (GB/s) as edge capacities, super-source edges 0. Forward: edge u->v carries
  /// link u->v (data flowing into a node set). Transposed: edge u->v carries link v->u (the
  /// reduce-scatter mirror: data leaving a node set).
  std::vector<double> link_capacities(bool transposed) const;
  /// Index, among the edges, of super source -> members[i].
  std::uint32_t source_edge(std::size_t member_index) const { return source_edges_[member_index]; }

  /// Sizes a scratch for this graph; `capacities` becomes its capacity vector.
  void prepare(Scratch& scratch, const std::vector<double>& capacities) const;
  /// Maximum flow from `source` to `sink` under scratch.capacity (one edge of each pair at 0).
  /// Afterwards source_side() tells the source side of a minimum cut: the vertices the source
  /// still reaches in the residual graph.
  double max_flow(Scratch& scratch, std::uint32_t source, std::uint32_t sink) const;
  static bool source_side(const Scratch& scratch, std::uint32_t vertex) { return scratch.source_side[vertex] != 0; }
  /// Capacity of the last run's minimum cut, summed over topology edges from the source side to
  /// the other (super-source edges excluded), in edge order: the same sum for the same cut.
  double cut_capacity(const Scratch& scratch) const;

 private:
  Graph graph_;
  std::uint32_t super_source_ = 0;
  std::vector<Edge> reverse_;                 ///< by edge index
  std::vector<std::uint32_t> reverse_index_;  ///< by edge index
  std::vector<std::uint32_t> edge_source_;    ///< by edge index
  std::vector<std::uint32_t> edge_target_;
  std::vector<std::uint32_t> link_of_edge_;  ///< the link a forward edge carries; kNoLink for the others
  std::vector<std::uint32_t> source_edges_;  ///< by member index
  std::vector<double> bandwidth_;            ///< by link id, GB/s
};

}  // namespace tenet::cut
