// SPDX-License-Identifier: MIT
#pragma once
// The group overlay of a switched network (issue: synthesis at every size). Most switched
// clusters are groups of NPUs on a fast local switch (a leaf, an NVSwitch box) joined by a slower
// fabric. Unwinding each switch into a ring (TACOS Sec. IV-G) hides that shape; the overlay keeps
// it: every member gets a virtual link to each member of its own group and to the member at its
// own position in every other group (a two-dimensional HyperX over groups x positions). On it the
// rounds engine finds the hierarchical exchanges: blocks cross the fabric once, to one member per
// group, and spread inside the groups (tree-4x8 all-gather of 64 KiB: 2 rounds, not rhd's 5).
//
// Each virtual link takes the route the simulator gives the pair, and is priced by it: the sum
// of its alphas, and the smallest share of a physical link's bandwidth among the virtual links
// that cross it. A plan on those shares fits the real network when every virtual link is busy,
// and its replay on the real switches (which is what scores it) is never slower. Private to src/synth.

#include <cstddef>
#include <optional>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet::synth {

struct GroupOverlay {
  Topology topology;       ///< the same NPU ids, links between members only
  std::size_t groups = 0;  ///< groups of members (each member has a virtual link to at most groups - 1 peers)
};

/// The group overlay of `members` on `topology`. A member's group is the switch of its fastest
/// link into a switch (ties: the lower link id). std::nullopt unless at least two groups of
/// members exist and one has two members.
std::optional<GroupOverlay> group_overlay(const Topology& topology, const std::vector<NodeId>& members);

}  // namespace tenet::synth
