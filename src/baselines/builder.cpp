// SPDX-License-Identifier: MIT
#include "builder.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "tenet/common/units.hpp"

namespace tenet::baselines {

BaselineResult not_applicable(std::string reason) {
  BaselineResult result;
  result.applicable = false;
  result.reason = std::move(reason);
  return result;
}

BaselineResult too_many_transfers(const std::string& algorithm, std::uint64_t members, std::uint64_t transfers) {
  std::string reason = algorithm;
  reason += " on ";
  reason += std::to_string(members);
  reason += " members needs ";
  reason += std::to_string(transfers);
  reason += " transfers; tenet generates at most ";
  reason += std::to_string(kMaxBaselineTransfers);
  return not_applicable(std::move(reason));
}

double RouteCost::time_us(double bytes) const { return link_time_us(bytes, latency_us, bandwidth_GBps); }

ScheduleBuilder::ScheduleBuilder(const Topology& topology, const Collective& collective, std::string algorithm,
                                 std::uint32_t chunks_per_member)
    : topology_(topology),
      router_(topology),
      schedule_(collective.kind, collective.size_bytes, collective.participants(topology), chunks_per_member,
                std::move(algorithm)) {}

TransferId ScheduleBuilder::add(NodeId src, NodeId dst, TransferKind kind, std::span<const ChunkId> chunks,
                                std::span<const TransferId> deps) {
  const double start = latest_end(deps);
  const double end = start + route_cost(src, dst).time_us(schedule_.chunk_bytes() * static_cast<double>(chunks.size()));
  return schedule_.add(src, dst, kind, chunks, deps, start, end);
}

TransferId ScheduleBuilder::add_sharing_deps(TransferId sibling, NodeId src, NodeId dst, TransferKind kind,
                                             std::span<const ChunkId> chunks) {
  // Same dependencies, same start: add() and this both start a transfer at its latest dependency's end.
  const double start = schedule_.start_us(sibling);
  const double end = start + route_cost(src, dst).time_us(schedule_.chunk_bytes() * static_cast<double>(chunks.size()));
  return schedule_.add_sharing_deps(sibling, src, dst, kind, chunks, start, end);
}

void ScheduleBuilder::note(const std::string& text) { schedule_.notes.push_back(text); }

const RouteCost& ScheduleBuilder::route_cost(NodeId src, NodeId dst) {
  if (src == warm_source_) return warm_costs_[dst];
  const std::uint64_t key = (std::uint64_t{src} << 32) | dst;
  auto found = pair_costs_.find(key);
  if (found != pair_costs_.end()) return found->second;
  RouteCost cost;
  cost.bandwidth_GBps = std::numeric_limits<double>::infinity();
  for (LinkId id : router_.route(src, dst)) {
    const Link& link = topology_.link(id);
    cost.latency_us += link.latency_us;
    cost.bandwidth_GBps = std::min(cost.bandwidth_GBps, link.bandwidth_GBps);
    ++cost.hops;
  }
  return pair_costs_.emplace(key, cost).first->second;
}

void ScheduleBuilder::warm_source(NodeId src) {
  if (src == warm_source_) return;
  const RouteTree tree = router_.tree_from(src);
  const std::uint32_t nodes = topology_.node_count();
  // A node's cost extends its parent's, so fill them in order of hop count (counting sort).
  std::vector<std::uint32_t> layer_start;
  for (std::uint32_t node = 0; node < nodes; ++node) {
    if (tree.hops[node] == ~0u) continue;
    if (tree.hops[node] + 2 > layer_start.size()) layer_start.resize(tree.hops[node] + 2, 0);
    ++layer_start[tree.hops[node] + 1];
  }
  for (std::size_t h = 1; h < layer_start.size(); ++h) layer_start[h] += layer_start[h - 1];
  std::vector<NodeId> order(layer_start.empty() ? 0 : layer_start.back());
  for (std::uint32_t node = 0; node < nodes; ++node) {
    if (tree.hops[node] != ~0u) order[layer_start[tree.hops[node]]++] = node;
  }
  warm_costs_.assign(nodes, RouteCost{});
  warm_costs_[src].bandwidth_GBps = std::numeric_limits<double>::infinity();
  for (NodeId node : order) {
    const LinkId parent = tree.parent_link[node];
    if (parent == kNoLink) continue;
    const Link& link = topology_.link(parent);
    const RouteCost& before = warm_costs_[link.src];
    warm_costs_[node] = {before.latency_us + link.latency_us, std::min(before.bandwidth_GBps, link.bandwidth_GBps),
                         before.hops + 1};
  }
  warm_source_ = src;
}

double ScheduleBuilder::latest_end(std::span<const TransferId> ids) const {
  double latest = 0.0;
  for (TransferId id : ids) latest = std::max(latest, schedule_.transfer(id).end_us);
  return latest;
}

BaselineResult ScheduleBuilder::finish() {
  BaselineResult result;
  result.applicable = true;
  result.schedule = std::move(schedule_);
  return result;
}

std::vector<TransferId> LastWrites::both(NodeId a, NodeId b) const {
  std::vector<TransferId> ids = writes_[a];
  for (TransferId id : writes_[b]) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

std::vector<ChunkId> chunk_range(ChunkId first, std::uint32_t count) {
  std::vector<ChunkId> chunks(count);
  for (std::uint32_t i = 0; i < count; ++i) chunks[i] = first + i;
  return chunks;
}

}  // namespace tenet::baselines
