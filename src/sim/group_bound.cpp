// SPDX-License-Identifier: MIT
#include "tenet/sim/group_bound.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

#include "tenet/common/units.hpp"

namespace tenet {
namespace {

constexpr std::size_t kMaxGroupThresholds = 16;

/// Components of the links faster than a threshold (directions ignored), by union-find with path
/// halving.
class LinkComponents {
 public:
  explicit LinkComponents(std::uint32_t nodes) : parent_(nodes) {}

  void join_faster_than(const Topology& topology, double threshold_GBps) {
    std::iota(parent_.begin(), parent_.end(), NodeId{0});
    for (const Link& link : topology.links()) {
      if (link.bandwidth_GBps <= threshold_GBps) continue;
      const NodeId a = root(link.src);
      const NodeId b = root(link.dst);
      if (a != b) parent_[std::max(a, b)] = std::min(a, b);
    }
  }

  NodeId root(NodeId node) {
    while (parent_[node] != node) {
      parent_[node] = parent_[parent_[node]];
      node = parent_[node];
    }
    return node;
  }

 private:
  std::vector<NodeId> parent_;
};

/// The thresholds to try: every link bandwidth but the fastest (faster than the fastest joins
/// nothing: one NPU per group), evenly thinned to kMaxGroupThresholds. A network with very many
/// speeds keeps its kMaxDistinctSpeeds slowest: a valid grouping all the same, and no sort of
/// every link of a large network.
std::vector<double> group_thresholds(const Topology& topology) {
  constexpr std::size_t kMaxDistinctSpeeds = 1024;
  std::vector<double> speeds;  // ascending, distinct
  for (const Link& link : topology.links()) {
    const auto at = std::lower_bound(speeds.begin(), speeds.end(), link.bandwidth_GBps);
    if (at != speeds.end() && *at == link.bandwidth_GBps) continue;
    if (speeds.size() == kMaxDistinctSpeeds) {
      if (at == speeds.end()) continue;
      speeds.pop_back();
    }
    speeds.insert(at, link.bandwidth_GBps);
  }
  if (!speeds.empty()) speeds.pop_back();
  if (speeds.size() <= kMaxGroupThresholds) return speeds;
  std::vector<double> picked;
  for (std::size_t i = 0; i < kMaxGroupThresholds; ++i) {
    picked.push_back(speeds[i * (speeds.size() - 1) / (kMaxGroupThresholds - 1)]);
  }
  return picked;
}

}  // namespace

GroupBound all_reduce_group_bound(const Topology& topology, const std::vector<NodeId>& members,
                                  std::uint64_t size_bytes) {
  GroupBound best;
  if (members.size() < 2) return best;
  LinkComponents components(topology.node_count());
  std::vector<char> holds_npu(topology.node_count());
  std::vector<char> holds_member(topology.node_count());
  for (double threshold : group_thresholds(topology)) {
    components.join_faster_than(topology, threshold);
    std::fill(holds_npu.begin(), holds_npu.end(), 0);
    std::fill(holds_member.begin(), holds_member.end(), 0);
    for (NodeId npu = 0; npu < topology.npu_count(); ++npu) holds_npu[components.root(npu)] = 1;
    std::uint32_t member_groups = 0;
    for (NodeId member : members) {
      char& seen = holds_member[components.root(member)];
      member_groups += seen == 0 ? 1 : 0;
      seen = 1;
    }
    // Two groups need 2 n through the links into both, never more than the cut bound's n through
    // the links into the slower one.
    if (member_groups < 3) continue;

    // A component without NPUs (a spine switch) only forwards: it is no group, and a message
    // crossing it still enters its receiver's group. Links from one group into another count at both.
    double into = 0.0;
    double out_of = 0.0;
    double into_alpha = std::numeric_limits<double>::infinity();
    double out_alpha = std::numeric_limits<double>::infinity();
    for (const Link& link : topology.links()) {
      const NodeId from = components.root(link.src);
      const NodeId to = components.root(link.dst);
      if (from == to) continue;
      if (holds_npu[to] != 0) {
        into += link.bandwidth_GBps;
        into_alpha = std::min(into_alpha, link.latency_us);
      }
      if (holds_npu[from] != 0) {
        out_of += link.bandwidth_GBps;
        out_alpha = std::min(out_alpha, link.latency_us);
      }
    }
    const double bytes = 2.0 * (member_groups - 1.0) * static_cast<double>(size_bytes);
    const auto consider = [&](double bandwidth, double alpha) {
      if (bandwidth <= 0.0) return;
      const double time = alpha + bytes / bytes_per_us(bandwidth);
      if (time <= best.time_us) return;
      best = {time, member_groups, bandwidth, threshold, alpha};
    };
    consider(into, into_alpha);
    consider(out_of, out_alpha);
  }
  return best;
}

}  // namespace tenet
