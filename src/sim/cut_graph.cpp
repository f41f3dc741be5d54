// SPDX-License-Identifier: MIT
#include "cut_graph.hpp"

#include <algorithm>

// Boost's push-relabel checks its own result with exact floating-point equalities (is_flow) in
// builds without NDEBUG; with capacities in GB/s those fail on rounding noise, not on errors. The
// checks are turned off for this header alone (boost/assert.hpp is meant to be re-included).
#define BOOST_DISABLE_ASSERTS
#include <boost/graph/push_relabel_max_flow.hpp>
#undef BOOST_DISABLE_ASSERTS
#include <boost/assert.hpp>

namespace tenet::cut {
namespace {

/// A residual below this fraction of its pair's capacity counts as saturated: rounding leaves
/// crumbs like 1e-15 on edges a max flow fills, and a crumb must not carry the source side of the
/// cut across a full edge. Whatever set comes out, the bound is computed from its links, so this
/// can only cost exactness, never validity.
constexpr double kResidualNoise = 1e-12;

struct PlannedEdge {
  std::uint32_t src;
  std::uint32_t dst;
  /// 2k for pair k's forward edge, 2k + 1 for its reverse; pairs 0..links-1 are the links, then
  /// one per member from the super source.
  std::uint32_t key;
  bool operator<(const PlannedEdge& other) const {
    if (src != other.src) return src < other.src;
    if (dst != other.dst) return dst < other.dst;
    return key < other.key;
  }
};

}  // namespace

CutGraph::CutGraph(const Topology& topology, const std::vector<NodeId>& members)
    : super_source_(topology.node_count()) {
  const std::uint32_t links = topology.link_count();
  std::vector<PlannedEdge> planned;
  planned.reserve(2 * (links + members.size()));
  for (LinkId id = 0; id < links; ++id) {
    const Link& link = topology.link(id);
    planned.push_back({link.src, link.dst, 2 * id});
    planned.push_back({link.dst, link.src, 2 * id + 1});
  }
  for (std::uint32_t i = 0; i < members.size(); ++i) {
    planned.push_back({super_source_, members[i], 2 * (links + i)});
    planned.push_back({members[i], super_source_, 2 * (links + i) + 1});
  }
  // CSR keeps sorted input in order, so edge index = position here.
  std::sort(planned.begin(), planned.end());
  std::vector<std::uint32_t> index_of_key(planned.size());
  for (std::uint32_t i = 0; i < planned.size(); ++i) index_of_key[planned[i].key] = i;

  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  pairs.reserve(planned.size());
  for (const PlannedEdge& edge : planned) {
    pairs.emplace_back(edge.src, edge.dst);
    edge_source_.push_back(edge.src);
    edge_target_.push_back(edge.dst);
    const bool forward_link = edge.key % 2 == 0 && edge.key / 2 < links;
    link_of_edge_.push_back(forward_link ? edge.key / 2 : kNoLink);
    reverse_index_.push_back(index_of_key[edge.key ^ 1u]);
    reverse_.emplace_back(edge.dst, reverse_index_.back());
  }
  graph_ = Graph(boost::edges_are_sorted, pairs.begin(), pairs.end(), vertex_count());
  source_edges_.reserve(members.size());
  for (std::uint32_t i = 0; i < members.size(); ++i) source_edges_.push_back(index_of_key[2 * (links + i)]);
  bandwidth_.reserve(links);
  for (const Link& link : topology.links()) bandwidth_.push_back(link.bandwidth_GBps);
}

std::vector<double> CutGraph::link_capacities(bool transposed) const {
  std::vector<double> capacities(edge_count(), 0.0);
  for (std::size_t edge = 0; edge < edge_count(); ++edge) {
    const std::uint32_t carried = transposed ? link_of_edge_[reverse_index_[edge]] : link_of_edge_[edge];
    if (carried != kNoLink) capacities[edge] = bandwidth_[carried];
  }
  return capacities;
}

void CutGraph::prepare(Scratch& scratch, const std::vector<double>& capacities) const {
  scratch.capacity = capacities;
  scratch.residual.assign(edge_count(), 0.0);
  scratch.source_side.assign(vertex_count(), 0);
  scratch.queue.clear();
  scratch.queue.reserve(vertex_count());
}

double CutGraph::max_flow(Scratch& scratch, std::uint32_t source, std::uint32_t sink) const {
  const auto edge_index = boost::get(boost::edge_index, graph_);
  // The solver takes the graph by non-const reference but only reads it; the maps it writes are
  // all in `scratch`.
  Graph& graph = const_cast<Graph&>(graph_);
  const double flow = boost::push_relabel_max_flow(
      graph, source, sink, boost::make_iterator_property_map(scratch.capacity.begin(), edge_index),
      boost::make_iterator_property_map(scratch.residual.begin(), edge_index),
      boost::make_iterator_property_map(reverse_.begin(), edge_index), boost::get(boost::vertex_index, graph_));

  // The source side: a breadth-first search over edges with residual capacity left.
  std::fill(scratch.source_side.begin(), scratch.source_side.end(), 0);
  scratch.queue.assign(1, source);
  scratch.source_side[source] = 1;
  for (std::size_t head = 0; head < scratch.queue.size(); ++head) {
    const std::uint32_t vertex = scratch.queue[head];
    for (const Edge& edge : boost::make_iterator_range(boost::out_edges(vertex, graph_))) {
      const std::uint32_t target = static_cast<std::uint32_t>(boost::target(edge, graph_));
      const double scale = scratch.capacity[edge.idx] + scratch.capacity[reverse_index_[edge.idx]];
      if (scratch.source_side[target] || scratch.residual[edge.idx] <= kResidualNoise * scale) continue;
      scratch.source_side[target] = 1;
      scratch.queue.push_back(target);
    }
  }
  return flow;
}

double CutGraph::cut_capacity(const Scratch& scratch) const {
  double capacity = 0.0;
  for (std::size_t edge = 0; edge < edge_count(); ++edge) {
    const std::uint32_t src = edge_source_[edge];
    if (src == super_source_ || !source_side(scratch, src) || source_side(scratch, edge_target_[edge])) continue;
    capacity += scratch.capacity[edge];
  }
  return capacity;
}

}  // namespace tenet::cut
