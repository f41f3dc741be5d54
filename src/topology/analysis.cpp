// SPDX-License-Identifier: MIT
#include "tenet/topology/analysis.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>

#include "tenet/common/parallel.hpp"

namespace tenet {
namespace {

constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();

/// Per-thread scratch reused across sources, so a search allocates nothing after warm-up.
struct SearchScratch {
  std::vector<std::uint32_t> hops;
  std::vector<double> latency;
  std::vector<NodeId> queue;
  std::priority_queue<std::pair<double, NodeId>, std::vector<std::pair<double, NodeId>>, std::greater<>> heap;
};

struct Eccentricity {
  std::uint32_t hops = 0;
  double latency_us = 0.0;
  NodeId farthest = kNoNode;  ///< participant farthest by latency
};

Eccentricity eccentricity(const Topology& topology, const Adjacency& adjacency, NodeId source,
                          const std::vector<char>& is_participant, SearchScratch& scratch) {
  const std::uint32_t nodes = topology.node_count();
  scratch.hops.assign(nodes, kUnreached);
  scratch.latency.assign(nodes, std::numeric_limits<double>::infinity());
  scratch.queue.clear();
  scratch.hops[source] = 0;
  scratch.queue.push_back(source);
  for (std::size_t head = 0; head < scratch.queue.size(); ++head) {
    NodeId node = scratch.queue[head];
    for (LinkId id : adjacency.out(node)) {
      NodeId next = topology.link(id).dst;
      if (scratch.hops[next] != kUnreached) continue;
      scratch.hops[next] = scratch.hops[node] + 1;
      scratch.queue.push_back(next);
    }
  }
  scratch.latency[source] = 0.0;
  scratch.heap.push({0.0, source});
  while (!scratch.heap.empty()) {
    auto [distance, node] = scratch.heap.top();
    scratch.heap.pop();
    if (distance > scratch.latency[node]) continue;
    for (LinkId id : adjacency.out(node)) {
      const Link& link = topology.link(id);
      double candidate = distance + link.latency_us;
      if (candidate < scratch.latency[link.dst]) {
        scratch.latency[link.dst] = candidate;
        scratch.heap.push({candidate, link.dst});
      }
    }
  }
  Eccentricity result;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    if (!is_participant[npu] || scratch.hops[npu] == kUnreached) continue;
    result.hops = std::max(result.hops, scratch.hops[npu]);
    if (result.farthest == kNoNode || scratch.latency[npu] > result.latency_us) {
      result.latency_us = scratch.latency[npu];
      result.farthest = npu;
    }
  }
  return result;
}

RangeStats range_of(const std::vector<double>& values) {
  RangeStats stats;
  if (values.empty()) return stats;
  auto [low, high] = std::minmax_element(values.begin(), values.end());
  stats.min = *low;
  stats.max = *high;
  stats.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  return stats;
}

}  // namespace

Diameter compute_diameter(const Topology& topology, const std::vector<NodeId>& participants) {
  std::vector<NodeId> sources = participants;
  if (sources.empty()) {
    sources.resize(topology.npu_count());
    std::iota(sources.begin(), sources.end(), NodeId{0});
  }
  std::vector<char> is_participant(topology.npu_count(), 0);
  for (NodeId npu : sources) is_participant[npu] = 1;
  const Adjacency adjacency(topology);
  Diameter diameter;
  if (sources.size() <= kExactDiameterLimit) {
    std::vector<Eccentricity> per_source(sources.size());
    ThreadLocal<SearchScratch> scratch;
    parallel_for(std::size_t{0}, sources.size(), [&](std::size_t i) {
      per_source[i] = eccentricity(topology, adjacency, sources[i], is_participant, scratch.local());
    });
    for (const Eccentricity& e : per_source) {
      diameter.hops = std::max(diameter.hops, e.hops);
      diameter.latency_us = std::max(diameter.latency_us, e.latency_us);
    }
    return diameter;
  }
  // Farthest-node sweeps: each eccentricity is a true distance, so the maximum never overstates.
  diameter.exact = false;
  SearchScratch scratch;
  NodeId source = sources.front();
  std::vector<NodeId> visited;
  for (int sweep = 0; sweep < 8; ++sweep) {
    visited.push_back(source);
    Eccentricity e = eccentricity(topology, adjacency, source, is_participant, scratch);
    diameter.hops = std::max(diameter.hops, e.hops);
    diameter.latency_us = std::max(diameter.latency_us, e.latency_us);
    if (e.farthest == kNoNode || std::find(visited.begin(), visited.end(), e.farthest) != visited.end()) break;
    source = e.farthest;
  }
  return diameter;
}

TopologyStats compute_stats(const Topology& topology) {
  TopologyStats stats;
  stats.npus = topology.npu_count();
  stats.switches = topology.switch_count();
  stats.links = topology.link_count();
  std::vector<double> degree;
  std::vector<double> ingress;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    degree.push_back(topology.out_degree(npu));
    ingress.push_back(topology.ingress_bandwidth_GBps(npu));
  }
  std::vector<double> bandwidth;
  std::vector<double> latency;
  for (const Link& link : topology.links()) {
    bandwidth.push_back(link.bandwidth_GBps);
    latency.push_back(link.latency_us);
  }
  stats.npu_out_degree = range_of(degree);
  stats.npu_ingress_GBps = range_of(ingress);
  stats.link_bandwidth_GBps = range_of(bandwidth);
  stats.link_latency_us = range_of(latency);
  stats.diameter = compute_diameter(topology);
  return stats;
}

}  // namespace tenet
