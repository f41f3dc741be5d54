// SPDX-License-Identifier: MIT
#include "tenet/sim/group_bound.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>
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
  // Per component without NPUs: the one group its links reach, or none, or several.
  constexpr NodeId kNoGroup = ~NodeId{0};
  constexpr NodeId kManyGroups = kNoGroup - 1;
  std::vector<NodeId> reached_by(topology.node_count());
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
    const auto consider = [&](const auto& group_of) {
      double into = 0.0;
      double out_of = 0.0;
      double into_alpha = std::numeric_limits<double>::infinity();
      double out_alpha = std::numeric_limits<double>::infinity();
      for (const Link& link : topology.links()) {
        const NodeId from = group_of(link.src);
        const NodeId to = group_of(link.dst);
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
      for (const auto& [bandwidth, alpha] : {std::pair{into, into_alpha}, std::pair{out_of, out_alpha}}) {
        if (bandwidth <= 0.0) continue;
        const double time = alpha + bytes / bytes_per_us(bandwidth);
        if (time <= best.time_us) continue;
        best = {time, member_groups, bandwidth, threshold, alpha};
      }
    };
    consider([&](NodeId node) { return components.root(node); });

    // Any split into groups gives a bound, so also the one where a switch that only one group
    // reaches (a box's PCIe or NIC switch, up to the shared fabric) belongs to that group: its
    // links into the group are then inside it, and its uplink is what the group takes in (boxes
    // of eight GPUs behind one 12.5 GB/s NIC each: 1.5 n through the four NICs, where the 32
    // GPU-to-switch links would allow 1.5 n / 384 GB/s). Not always tighter (a switch behind a
    // thin link with a fat uplink), so both count.
    std::fill(reached_by.begin(), reached_by.end(), kNoGroup);
    bool joined = false;
    const auto note = [&](NodeId fabric, NodeId group) {
      NodeId& seen = reached_by[fabric];
      seen = seen == kNoGroup || seen == group ? group : kManyGroups;
    };
    for (const Link& link : topology.links()) {
      const NodeId a = components.root(link.src);
      const NodeId b = components.root(link.dst);
      if (a == b || (holds_npu[a] != 0) == (holds_npu[b] != 0)) continue;
      if (holds_npu[a] == 0) note(a, b);
      if (holds_npu[b] == 0) note(b, a);
    }
    for (NodeId node = 0; node < topology.node_count(); ++node) {
      joined = joined || (reached_by[node] != kNoGroup && reached_by[node] != kManyGroups);
    }
    if (!joined) continue;
    consider([&](NodeId node) {
      const NodeId root = components.root(node);
      const NodeId group = reached_by[root];
      return holds_npu[root] == 0 && group != kNoGroup && group != kManyGroups ? group : root;
    });
  }
  return best;
}

}  // namespace tenet
