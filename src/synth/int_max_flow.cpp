// SPDX-License-Identifier: MIT
#include "int_max_flow.hpp"

#include <algorithm>

namespace tenet::synth {

IntMaxFlow::IntMaxFlow(std::uint32_t vertices) : vertices_(vertices), adjacency_(vertices + 2) {
  from_source_.resize(vertices);
  to_sink_.resize(vertices);
  for (std::uint32_t x = 0; x < vertices; ++x) {
    from_source_[x] = add_edge(source(), x, 0);
    to_sink_[x] = add_edge(x, sink(), 0);
  }
}

std::uint32_t IntMaxFlow::add_edge(std::uint32_t from, std::uint32_t to, Capacity capacity) {
  const auto id = static_cast<std::uint32_t>(head_.size());
  head_.push_back(to);
  capacity_.push_back(capacity);
  head_.push_back(from);
  capacity_.push_back(0);
  adjacency_[from].push_back(id);
  adjacency_[to].push_back(id ^ 1);
  return id;
}

void IntMaxFlow::remove_edges_from(std::uint32_t first) {
  // Newest first: each edge is then the last entry of both its vertices' lists.
  while (edge_count() > first) {
    const std::uint32_t id = edge_count() - 2;
    adjacency_[head_[id + 1]].pop_back();
    adjacency_[head_[id]].pop_back();
    head_.resize(id);
    capacity_.resize(id);
  }
}

bool IntMaxFlow::levels_from_source() {
  level_.assign(vertex_count(), -1);
  queue_.clear();
  queue_.push_back(source());
  level_[source()] = 0;
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    const std::uint32_t vertex = queue_[i];
    // Blocking flows only follow shortest paths: nothing at the sink's level or beyond leads there.
    if (level_[sink()] >= 0 && level_[vertex] >= level_[sink()]) break;
    for (std::uint32_t edge : adjacency_[vertex]) {
      const std::uint32_t next = head_[edge];
      if (residual_[edge] <= 0 || level_[next] >= 0) continue;
      level_[next] = level_[vertex] + 1;
      queue_.push_back(next);
    }
  }
  return level_[sink()] >= 0;
}

// Depth-first along increasing levels; the recursion is as deep as the longest level path,
// at most the vertex count (small graphs only: see the file comment in the header).
IntMaxFlow::Capacity IntMaxFlow::push(std::uint32_t vertex, Capacity limit) {
  if (vertex == sink()) return limit;
  const std::vector<std::uint32_t>& edges = adjacency_[vertex];
  for (std::uint32_t& i = next_edge_[vertex]; i < edges.size(); ++i) {
    const std::uint32_t edge = edges[i];
    const std::uint32_t next = head_[edge];
    if (residual_[edge] <= 0 || level_[next] != level_[vertex] + 1) continue;
    const Capacity pushed = push(next, std::min(limit, residual_[edge]));
    if (pushed > 0) {
      residual_[edge] -= pushed;
      residual_[edge ^ 1] += pushed;
      return pushed;
    }
  }
  return 0;
}

IntMaxFlow::Capacity IntMaxFlow::max_flow(Capacity enough) {
  residual_ = capacity_;
  return augment(0, enough);
}

IntMaxFlow::Capacity IntMaxFlow::max_flow_from_kept(Capacity kept, Capacity enough) {
  residual_.resize(capacity_.size());
  for (std::size_t edge = 0; edge < capacity_.size(); ++edge) {
    // New edges (none since the kept run, in practice) count as unused.
    const Capacity before = edge < kept_capacity_.size() ? kept_capacity_[edge] : 0;
    const Capacity left = edge < kept_residual_.size() ? kept_residual_[edge] : 0;
    residual_[edge] = left + capacity_[edge] - before;
    if (residual_[edge] < 0) return max_flow(enough);
  }
  return std::min(augment(kept, enough), enough);
}

IntMaxFlow::Capacity IntMaxFlow::augment(Capacity flow, Capacity enough) {
  while (flow < enough && levels_from_source()) {
    next_edge_.assign(vertex_count(), 0);
    while (flow < enough) {
      const Capacity pushed = push(source(), enough - flow);
      if (pushed == 0) break;
      flow += pushed;
    }
  }
  return flow;
}

}  // namespace tenet::synth
