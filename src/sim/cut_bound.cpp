// SPDX-License-Identifier: MIT
// Cut lower bounds by max-flow.
//
// What holds for every schedule tenet can run (synthesized, baseline, MSCCL, simulated or planned
// on idle links): a transfer moves whole chunks; its bytes cross a link only after it has paid its
// route's alphas, at least the smallest link latency alpha_min; a link moves at most bandwidth * dt
// bytes in dt. So when D bytes must cross into a node set S, t >= alpha_min + D / B_in(S), where
// B_in(S) sums the bandwidths of the links from outside S into S. (Reductions only add time.)
//
// All-gather. Members M, m = |M|, each owns a block of n/m bytes. Let S hold some members but not
// all. Every member in S must end with every block of the members outside S; those chunks start
// outside S, and each must enter S at least once, in a transfer over a link into S. So
// D >= |M \ S| * n/m and t >= alpha_min + (n/m) * |M \ S| / B_in(S).
// Reduce-scatter, the mirror. A member w outside S ends with its block reduced over all members,
// those in S included: each chunk of w's block must leave S at least once. D_out >= |M \ S| * n/m
// through the links out of S: the all-gather bound on the transposed network.
// All-reduce. Every member in S ends with the whole vector reduced over all members, those outside
// S included, so every chunk must enter S at least once (n bytes), and for the same reason leave it
// (n bytes): t >= alpha_min + n / min(B_in(S), B_out(S)) for every S separating two members. The
// largest such bound is n / lambda with lambda the smallest cut separating members. Fix a member
// v0: a separating S either misses v0 and holds some member v (then B_in(S) >= maxflow(v0 -> v))
// or holds v0 and misses some u (B_in(S) >= maxflow(u -> v0)); the minimum cuts of those flows are
// themselves separating sets, and B_out(S) = B_in(complement of S), so
// lambda = min over members v != v0 of min(maxflow(v0 -> v), maxflow(v -> v0)). This dominates the
// all-gather and reduce-scatter cut bounds (|M \ S| / m < 1 for the same S), which are therefore
// not computed for all-reduce; the per-NPU bound of twice the ingress (bounds.cpp) stays beside
// it, being larger for single NPUs.
//
// The exact all-gather search. The bound is (n/m) / x* with x* = min over S of B_in(S) / |M \ S|
// (GB/s per outside member). Feasibility of a rate x is a max-flow question: a super source feeds
// every member but the sink v with capacity x; a cut whose sink side S holds v costs
// x * (members in S - 1) + B_in(S), which is below x * (m - 1) exactly when B_in(S) < x * |M \ S|. So
// one minimum cut per member finds a set beating x, if there is one. Newton / Dinkelbach: x starts
// at the best single-member cut (in-bandwidth / (m - 1)); members are checked in batches, one
// max-flow each, in parallel at the current x, and after each batch x becomes the best ratio among
// the sets it found. A member whose cut did not beat x keeps not beating every smaller x, so it is
// done; one that found a better set is queued again, to be checked at the lower x. When the queue
// is empty every member was last satisfied at an x no smaller than the final one: x is optimal.
// x only decreases, each time by more than 1e-12 relative, over finitely many sets, so the search
// ends; usually after m max-flows and a batch (a set beating the single-member cuts is found in
// the first batch and the rest check against it). Ratios are summed from the cut's link
// bandwidths, never read off flow values: whatever rounding does to a flow, the bound is the ratio
// of an actual set, hence valid, and exact to 1e-12.
//
// Work: about m max-flows, each about linear in the flow network's size (nodes + 1 vertices,
// 2 (links + m) edges; cut_graph.hpp says why push-relabel). Past the budget the sinks are an
// evenly spaced subset of the members (the bound then holds S containing one of them: still a
// bound, marked inexact). Each max-flow depends only on (graph, capacities, x, sink) and batches
// have a fixed size, so the result is the same for every thread count.

#include "tenet/sim/cut_bound.hpp"

#include <algorithm>
#include <limits>

#include "cut_graph.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/common/units.hpp"

namespace tenet {
namespace {

using cut::CutGraph;

/// A set beats rate x only when its ratio is below x by more than this, relative: x strictly
/// decreases, so the search ends, and rounding noise never counts as an improvement.
constexpr double kImprovement = 1e-12;

/// Sinks checked together at one rate. A fixed number, not one per thread: the rate after each
/// batch, hence the result, must not depend on the thread count.
constexpr std::size_t kSinksPerBatch = 32;

/// `count` indices of [first, last), evenly spaced, ascending; all of them when they fit.
std::vector<std::uint32_t> spaced_indices(std::uint32_t first, std::uint32_t last, std::uint64_t count) {
  const std::uint64_t range = last - first;
  std::vector<std::uint32_t> picked;
  if (count >= range) count = range;
  picked.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) picked.push_back(static_cast<std::uint32_t>(first + i * range / count));
  return picked;
}

double smallest_latency_us(const Topology& topology) {
  double smallest = std::numeric_limits<double>::infinity();
  for (const Link& link : topology.links()) smallest = std::min(smallest, link.latency_us);
  return topology.link_count() == 0 ? 0.0 : smallest;
}

/// Runs `run(scratch, i)` for i in [0, count) in parallel, each thread with its own scratch (its
/// capacities start as `capacities`; a run may change the super source's edges only).
template <typename Run>
void for_each_sink(const CutGraph& graph, const std::vector<double>& capacities,
                   ThreadLocal<CutGraph::Scratch>& scratches, std::size_t count, const Run& run) {
  parallel_for(std::size_t{0}, count, [&](std::size_t i) {
    CutGraph::Scratch& scratch = scratches.local();
    if (scratch.capacity.empty()) graph.prepare(scratch, capacities);
    run(scratch, i);
  });
}

/// The all-gather search of the file comment; `transposed` gives the reduce-scatter mirror.
void search_gather_cut(const Topology& topology, const std::vector<NodeId>& members, bool transposed,
                       std::uint64_t work_budget, CutBound& bound) {
  const std::uint32_t m = bound.members;
  // The single-member cuts start the search: cheap, and often already the answer.
  double best_bandwidth = std::numeric_limits<double>::infinity();
  for (NodeId member : members) {
    const double cut = transposed ? topology.egress_bandwidth_GBps(member) : topology.ingress_bandwidth_GBps(member);
    best_bandwidth = std::min(best_bandwidth, cut);
  }
  std::uint32_t best_outside = m - 1;
  double rate = best_bandwidth / best_outside;

  const CutGraph graph(topology, members);
  const std::vector<double> capacities = graph.link_capacities(transposed);
  const std::uint64_t affordable = work_budget / (graph.vertex_count() + graph.edge_count());
  // Sinks in the order they are checked; one that finds a better set is queued again.
  std::vector<std::uint32_t> queue = spaced_indices(0, m, affordable);
  bound.sinks = static_cast<std::uint32_t>(queue.size());
  bound.exact = queue.size() == m;
  const std::uint64_t flow_limit = 2 * std::max<std::uint64_t>(affordable, queue.size());

  struct Found {
    double bandwidth = 0.0;
    std::uint32_t outside = 0;
  };
  ThreadLocal<CutGraph::Scratch> scratches;
  for (std::size_t head = 0; head < queue.size();) {
    const std::size_t count = std::min(kSinksPerBatch, queue.size() - head);
    if (bound.max_flows + count > flow_limit) {
      bound.exact = false;  // never seen; the rate is still that of an actual set
      break;
    }
    std::vector<Found> found(count);
    for_each_sink(graph, capacities, scratches, count, [&](CutGraph::Scratch& scratch, std::size_t i) {
      const std::uint32_t sink = queue[head + i];
      for (std::uint32_t j = 0; j < m; ++j) scratch.capacity[graph.source_edge(j)] = j == sink ? 0.0 : rate;
      graph.max_flow(scratch, graph.super_source(), members[sink]);
      for (NodeId member : members) found[i].outside += CutGraph::source_side(scratch, member) ? 1 : 0;
      found[i].bandwidth = graph.cut_capacity(scratch);
    });
    bound.max_flows += static_cast<std::uint32_t>(count);

    double next_rate = rate;
    for (std::size_t i = 0; i < count; ++i) {
      if (found[i].outside == 0) continue;
      const double ratio = found[i].bandwidth / found[i].outside;
      if (ratio >= rate * (1.0 - kImprovement)) continue;
      queue.push_back(queue[head + i]);  // to be checked again at the lower rate
      if (ratio < next_rate) {
        next_rate = ratio;
        best_bandwidth = found[i].bandwidth;
        best_outside = found[i].outside;
      }
    }
    rate = next_rate;
    head += count;
  }
  bound.cut_bandwidth_GBps = best_bandwidth;
  bound.members_outside = best_outside;
  bound.crossing_share = static_cast<double>(best_outside) / m;
}

/// lambda of the file comment: the smallest cut separating two members, either direction.
void search_separating_cut(const Topology& topology, const std::vector<NodeId>& members, std::uint64_t work_budget,
                           CutBound& bound) {
  const std::uint32_t m = bound.members;
  double smallest = std::numeric_limits<double>::infinity();
  for (NodeId member : members) {
    smallest = std::min({smallest, topology.ingress_bandwidth_GBps(member), topology.egress_bandwidth_GBps(member)});
  }

  const CutGraph graph(topology, members);
  const std::vector<double> forward = graph.link_capacities(false);
  const std::vector<double> transposed = graph.link_capacities(true);
  const std::uint64_t affordable = work_budget / (2 * (graph.vertex_count() + graph.edge_count()));
  const std::vector<std::uint32_t> sinks = spaced_indices(1, m, affordable);
  bound.sinks = static_cast<std::uint32_t>(sinks.size()) + 1;  // v0 itself
  bound.exact = bound.sinks == m;
  bound.max_flows = static_cast<std::uint32_t>(2 * sinks.size());

  // Both directions from v0 = members[0], each on its own capacities (the super source is idle).
  std::vector<double> found(sinks.size(), 0.0);
  ThreadLocal<CutGraph::Scratch> forward_scratches;
  for_each_sink(graph, forward, forward_scratches, sinks.size(), [&](CutGraph::Scratch& scratch, std::size_t i) {
    graph.max_flow(scratch, members[0], members[sinks[i]]);
    found[i] = graph.cut_capacity(scratch);
  });
  for (double cut : found) smallest = std::min(smallest, cut);
  ThreadLocal<CutGraph::Scratch> transposed_scratches;
  for_each_sink(graph, transposed, transposed_scratches, sinks.size(), [&](CutGraph::Scratch& scratch, std::size_t i) {
    graph.max_flow(scratch, members[0], members[sinks[i]]);
    found[i] = graph.cut_capacity(scratch);
  });
  for (double cut : found) smallest = std::min(smallest, cut);
  bound.cut_bandwidth_GBps = smallest;
  bound.crossing_share = 1.0;
}

}  // namespace

double CutBound::bandwidth_time_us(std::uint64_t size_bytes) const {
  if (cut_bandwidth_GBps <= 0.0) return 0.0;
  return crossing_share * static_cast<double>(size_bytes) / bytes_per_us(cut_bandwidth_GBps);
}

double CutBound::time_us(std::uint64_t size_bytes) const {
  return cut_bandwidth_GBps <= 0.0 ? 0.0 : latency_us + bandwidth_time_us(size_bytes);
}

CutBound cut_bound(const Topology& topology, CollectiveKind kind, const std::vector<NodeId>& members,
                   const CutBoundOptions& options) {
  CutBound bound;
  bound.members = static_cast<std::uint32_t>(members.size());
  bound.sinks = bound.members;
  if (members.size() < 2) return bound;
  bound.latency_us = smallest_latency_us(topology);
  if (kind == CollectiveKind::kAllReduce) {
    search_separating_cut(topology, members, options.work_budget, bound);
  } else {
    search_gather_cut(topology, members, kind == CollectiveKind::kReduceScatter, options.work_budget, bound);
  }
  return bound;
}

}  // namespace tenet
