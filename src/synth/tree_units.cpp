// SPDX-License-Identifier: MIT
// Step 1 of the tree packing (tree_packing.hpp): how many units a member's data is cut into, and
// how much bandwidth a unit gets.

#include <algorithm>
#include <cmath>

#include "tenet/sim/cut_bound.hpp"
#include "tree_flow.hpp"
#include "tree_packing.hpp"

namespace tenet::synth {
namespace {

/// Units are weighed against the pipeline they leave room for: at kChunksPerMember chunks per
/// member a unit has kChunksPerMember / k pieces, and filling a pipeline of trees about
/// kFillPieces pieces deep costs that share of the time. That weighs tree depth only roughly, so
/// the fewest units reaching kCloseShare of r* are offered too.
constexpr double kCloseShare = 0.98;
/// Bisection steps for a unit's bandwidth: 2^-24 relative.
constexpr int kBisections = 24;

bool fits(const Topology& topology, const Topology* transposed, const std::vector<NodeId>& members,
          std::uint32_t per_member, double unit_GBps) {
  TreeFlowGraph forward = tree_flow_graph(topology, members, per_member, unit_GBps);
  if (!every_member_reached(forward)) return false;
  if (transposed == nullptr) return true;
  TreeFlowGraph backward = tree_flow_graph(*transposed, members, per_member, unit_GBps);
  return every_member_reached(backward);
}

}  // namespace

TreeFlowGraph tree_flow_graph(const Topology& topology, const std::vector<NodeId>& members, std::uint32_t per_member,
                              double unit_GBps) {
  TreeFlowGraph graph(topology.node_count());
  for (NodeId member : members) graph.is_member[member] = 1;
  // A tree edge is a route through switches: an NPU outside the collective runs no program that
  // would forward, so its links are left out (dgx1-8, members 0-3: routes through the other GPUs
  // were refused when the schedule was built).
  auto forwards = [&](NodeId node) { return !topology.is_npu(node) || graph.is_member[node]; };
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (!forwards(link.src) || !forwards(link.dst)) continue;
    const auto units = static_cast<IntMaxFlow::Capacity>(std::floor(link.bandwidth_GBps / unit_GBps + 1e-9));
    if (units <= 0) continue;
    const std::uint32_t edge = graph.flow.add_edge(link.src, link.dst, units);
    if (graph.routes.size() <= edge / 2) graph.routes.resize(edge / 2 + 1);
    graph.routes[edge / 2] = {id};
  }
  for (NodeId member : members) {
    graph.demand[member] = per_member;
    graph.total_demand += per_member;
    graph.flow.set_capacity(graph.flow.from_source(member), per_member);
  }
  return graph;
}

bool every_member_reached(TreeFlowGraph& graph) {
  for (NodeId node = 0; node < graph.is_member.size(); ++node) {
    if (!graph.is_member[node]) continue;
    const std::uint32_t edge = graph.flow.to_sink(node);
    graph.flow.set_capacity(edge, IntMaxFlow::kUnlimited);
    const bool reached = graph.flow.max_flow(graph.total_demand) >= graph.total_demand;
    graph.flow.set_capacity(edge, 0);
    if (!reached) return false;
  }
  return true;
}

std::optional<TreeUnits> units_of_count(const Topology& topology, const std::vector<NodeId>& members,
                                        std::uint32_t per_member, double optimal_GBps) {
  double high = optimal_GBps / per_member;
  double low = high / 8.0;
  if (!(optimal_GBps > 0.0) || !fits(topology, nullptr, members, per_member, low)) return std::nullopt;
  if (!fits(topology, nullptr, members, per_member, high)) {
    for (int step = 0; step < kBisections; ++step) {
      const double middle = 0.5 * (low + high);
      (fits(topology, nullptr, members, per_member, middle) ? low : high) = middle;
    }
    high = low;
  }
  return TreeUnits{per_member, high, per_member * high / optimal_GBps};
}

std::vector<TreeUnits> choose_tree_units(const Topology& topology, const Topology* transposed,
                                         const std::vector<NodeId>& members, double optimal_GBps) {
  if (!(optimal_GBps > 0.0) || members.size() < 2) return {};
  std::optional<TreeUnits> weighed;
  std::optional<TreeUnits> close;
  auto worth = [](const TreeUnits& units) {
    return units.share * (1.0 - kFillPieces * units.per_member / kChunksPerMember);
  };
  for (std::uint32_t k = 1; k <= kMaxUnits && !close; ++k) {
    // At k y = r* the units fit exactly when the bandwidths are multiples of y; otherwise the
    // largest y that fits lies below, and below half of r* a k is not worth having.
    double high = optimal_GBps / k;
    double low = high / 2.0;
    if (!fits(topology, transposed, members, k, low)) continue;
    if (!fits(topology, transposed, members, k, high)) {
      for (int step = 0; step < kBisections; ++step) {
        const double middle = 0.5 * (low + high);
        (fits(topology, transposed, members, k, middle) ? low : high) = middle;
      }
      high = low;
    }
    const TreeUnits units{k, high, k * high / optimal_GBps};
    if (!weighed || worth(units) > worth(*weighed) + 1e-12) weighed = units;
    if (units.share >= kCloseShare) close = units;
  }
  std::vector<TreeUnits> offered;
  if (weighed) offered.push_back(*weighed);
  if (close && close->per_member != weighed->per_member) offered.push_back(*close);
  return offered;
}

double optimal_rate_GBps(const Topology& topology, CollectiveKind kind, const std::vector<NodeId>& members) {
  if (kind == CollectiveKind::kAllReduce) {
    return std::min(optimal_rate_GBps(topology, CollectiveKind::kAllGather, members),
                    optimal_rate_GBps(topology, CollectiveKind::kReduceScatter, members));
  }
  const CutBound cut = cut_bound(topology, kind, members);
  if (cut.members_outside == 0) return 0.0;
  return cut.cut_bandwidth_GBps / cut.members_outside;
}

}  // namespace tenet::synth
