// SPDX-License-Identifier: MIT
#pragma once
// The physical network as switch-native planning sees it. Private to src/synth.
//
// A transfer from NPU u to NPU v either crosses one NPU-to-NPU link, or goes through switches:
// u's port into a switch, a shortest chain of switch-to-switch links (one of several where a
// fabric has equal-cost paths, e.g. fat-tree spines), and the port from the last switch into v.
// It holds every one of those physical links for its whole duration.
//
// Lanes. A link into or out of an NPU carries one transfer at a time. A switch-to-switch link of
// capacity C carries up to L = floor(C / P) at once, P being the fastest NPU port of its switch
// group (at least one). Each lane is then at least as fast as any port, so a transfer's speed is
// always set by a link it has to itself: under max-min fair sharing (the simulator, and the
// network) it runs at exactly its route's bottleneck, which is what the plan assumed. That is why
// a plan made with lanes replays to the planned time on the real switches.

#include <cstdint>
#include <span>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet::synth {

struct Attachment {
  NodeId npu;
  LinkId up;  ///< the NPU's port into the switch
  NodeId sw;
};

class Fabric {
 public:
  explicit Fabric(const Topology& topology);

  /// Transfers a link may carry at once (see the file comment).
  std::uint32_t lanes(LinkId link) const { return lanes_[link]; }
  const std::vector<std::uint32_t>& all_lanes() const { return lanes_; }

  /// The switch group (switches joined by switch-to-switch links) a switch belongs to.
  std::uint32_t group_of(NodeId sw) const { return group_of_[sw - npu_count_]; }
  /// Every NPU port into a switch of a group.
  std::span<const Attachment> attachments(std::uint32_t group) const {
    return {attachments_.data() + attachment_offsets_[group],
            attachment_offsets_[group + 1] - attachment_offsets_[group]};
  }
  /// The shortest switch-to-switch paths (fewest hops; at most kMaxPaths of them) from switch a to
  /// switch b of the same group, as path ids; a path from a switch to itself has no links.
  std::span<const std::uint32_t> paths(NodeId a, NodeId b) const;
  std::span<const LinkId> path_links(std::uint32_t path) const {
    return {path_links_.data() + path_offsets_[path], path_offsets_[path + 1] - path_offsets_[path]};
  }

  static constexpr std::size_t kMaxPaths = 8;

 private:
  std::uint32_t npu_count_ = 0;
  std::vector<std::uint32_t> lanes_;
  std::vector<std::uint32_t> group_of_;        ///< per switch
  std::vector<std::uint32_t> index_in_group_;  ///< per switch
  std::vector<std::uint32_t> group_sizes_;
  std::vector<std::uint64_t> pair_base_;  ///< per group: where its (a, b) table starts
  std::vector<std::uint32_t> attachment_offsets_;
  std::vector<Attachment> attachments_;
  std::vector<std::uint64_t> pair_offsets_;  ///< per (group, a, b): a range of pair_paths_
  std::vector<std::uint32_t> pair_paths_;
  std::vector<std::uint64_t> path_offsets_ = {0};
  std::vector<LinkId> path_links_;
};

}  // namespace tenet::synth
