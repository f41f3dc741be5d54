// SPDX-License-Identifier: MIT
#include "fabric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tenet::synth {

Fabric::Fabric(const Topology& topology) : npu_count_(topology.npu_count()) {
  const std::uint32_t switches = topology.switch_count();
  const Adjacency adjacency(topology);
  constexpr std::uint32_t kNone = ~std::uint32_t{0};

  // Groups: switches joined by switch-to-switch links, either way.
  group_of_.assign(switches, kNone);
  index_in_group_.assign(switches, 0);
  std::vector<std::vector<NodeId>> members;
  for (std::uint32_t first = 0; first < switches; ++first) {
    if (group_of_[first] != kNone) continue;
    const std::uint32_t group = static_cast<std::uint32_t>(members.size());
    members.emplace_back();
    std::vector<NodeId> stack = {npu_count_ + first};
    group_of_[first] = group;
    while (!stack.empty()) {
      const NodeId sw = stack.back();
      stack.pop_back();
      index_in_group_[sw - npu_count_] = static_cast<std::uint32_t>(members[group].size());
      members[group].push_back(sw);
      auto visit = [&](NodeId other) {
        if (!topology.is_switch(other) || group_of_[other - npu_count_] != kNone) return;
        group_of_[other - npu_count_] = group;
        stack.push_back(other);
      };
      for (LinkId id : adjacency.out(sw)) visit(topology.link(id).dst);
      for (LinkId id : adjacency.in(sw)) visit(topology.link(id).src);
    }
  }
  const std::uint32_t groups = static_cast<std::uint32_t>(members.size());

  // Attachments, by group, in link order.
  attachment_offsets_.assign(groups + 1, 0);
  for (const Link& link : topology.links()) {
    if (link.src < npu_count_ && topology.is_switch(link.dst)) ++attachment_offsets_[group_of(link.dst) + 1];
  }
  for (std::uint32_t g = 0; g < groups; ++g) attachment_offsets_[g + 1] += attachment_offsets_[g];
  attachments_.resize(attachment_offsets_[groups]);
  {
    std::vector<std::uint32_t> fill(attachment_offsets_.begin(), attachment_offsets_.end() - 1);
    for (LinkId id = 0; id < topology.link_count(); ++id) {
      const Link& link = topology.link(id);
      if (link.src < npu_count_ && topology.is_switch(link.dst))
        attachments_[fill[group_of(link.dst)]++] = {link.src, id, link.dst};
    }
  }

  // Lanes: one per link, floor(C / fastest port) on switch-to-switch links.
  std::vector<double> fastest_port(groups, 0.0);
  for (const Link& link : topology.links()) {
    if (topology.is_switch(link.src) != topology.is_switch(link.dst)) {
      const NodeId sw = topology.is_switch(link.src) ? link.src : link.dst;
      fastest_port[group_of(sw)] = std::max(fastest_port[group_of(sw)], link.bandwidth_GBps);
    }
  }
  lanes_.assign(topology.link_count(), 1);
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (!topology.is_switch(link.src) || !topology.is_switch(link.dst)) continue;
    const double port = fastest_port[group_of(link.src)];
    if (port > 0.0)
      lanes_[id] = static_cast<std::uint32_t>(std::clamp(std::floor(link.bandwidth_GBps / port), 1.0, 1e6));
  }

  // Shortest switch paths per ordered pair of a group: breadth-first from each switch over
  // switch-to-switch links, then up to kMaxPaths paths walked back over the predecessor links.
  pair_base_.assign(groups + 1, 0);
  group_sizes_.resize(groups);
  for (std::uint32_t g = 0; g < groups; ++g) {
    group_sizes_[g] = static_cast<std::uint32_t>(members[g].size());
    pair_base_[g + 1] = pair_base_[g] + std::uint64_t{group_sizes_[g]} * group_sizes_[g];
  }
  pair_offsets_.assign(pair_base_[groups] + 1, 0);
  std::vector<std::uint32_t> distance(switches, kNone);
  std::vector<NodeId> queue;
  std::vector<LinkId> partial;
  std::uint64_t pair = 0;
  for (std::uint32_t g = 0; g < groups; ++g) {
    for (NodeId source : members[g]) {
      for (NodeId sw : members[g]) distance[sw - npu_count_] = kNone;
      distance[source - npu_count_] = 0;
      queue.assign(1, source);
      for (std::size_t head = 0; head < queue.size(); ++head) {
        const NodeId sw = queue[head];
        for (LinkId id : adjacency.out(sw)) {
          const NodeId next = topology.link(id).dst;
          if (!topology.is_switch(next) || distance[next - npu_count_] != kNone) continue;
          distance[next - npu_count_] = distance[sw - npu_count_] + 1;
          queue.push_back(next);
        }
      }
      for (NodeId target : members[g]) {
        const std::uint64_t begin = pair_paths_.size();
        if (distance[target - npu_count_] != kNone) {
          // Backwards from the target over links that step one hop closer to the source.
          partial.clear();
          auto walk = [&](auto&& self, NodeId at) -> void {
            if (pair_paths_.size() - begin >= kMaxPaths) return;
            if (at == source) {
              path_links_.insert(path_links_.end(), partial.rbegin(), partial.rend());
              path_offsets_.push_back(path_links_.size());
              pair_paths_.push_back(static_cast<std::uint32_t>(path_offsets_.size() - 2));
              return;
            }
            for (LinkId id : adjacency.in(at)) {
              const NodeId from = topology.link(id).src;
              if (!topology.is_switch(from) || distance[from - npu_count_] + 1 != distance[at - npu_count_]) continue;
              partial.push_back(id);
              self(self, from);
              partial.pop_back();
            }
          };
          walk(walk, target);
        }
        pair_offsets_[++pair] = pair_paths_.size();
      }
    }
  }
}

std::span<const std::uint32_t> Fabric::paths(NodeId a, NodeId b) const {
  const std::uint32_t group = group_of(a);
  const std::uint64_t pair = pair_base_[group] + std::uint64_t{index_in_group_[a - npu_count_]} * group_sizes_[group] +
                             index_in_group_[b - npu_count_];
  return {pair_paths_.data() + pair_offsets_[pair], pair_offsets_[pair + 1] - pair_offsets_[pair]};
}

}  // namespace tenet::synth
