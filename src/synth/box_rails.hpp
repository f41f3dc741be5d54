// SPDX-License-Identifier: MIT
#pragma once
// The box-and-rail method: the hierarchical collective of clusters built from identical boxes
// (GPUs on an NVSwitch or on point-to-point links) whose members at the same position are joined
// by a slower fabric (a rail switch, a NIC per GPU). Private to src/synth.
//
// Why. The spanning trees reach the cut bound but are packed over the whole network, which takes
// a minute at 128 members and is not tried past that; the matching does not see the fabric's cut
// and stays near twice the bound at 1,024 NPUs (ring-fc-switch-2x4x128 all-reduce of 1 GiB: 11.1
// ms against a 5.3 ms bound). The hierarchy is what reaches that bound: every block crosses the
// fabric once, between members at one position (its rail), and spreads inside the boxes, where
// bandwidth is plentiful.
//
// How. All-gather: each member sends its block to its rail's other members (the direct algorithm
// among them, in shifted rounds: in round s the member at rail index i sends to i + s, so every
// port carries one stream), then each member broadcasts the blocks of its rail inside its box on
// spanning trees packed on the box alone (tree_packing.hpp: a box has a handful of members, so
// packing is cheap), all of them in one transfer per tree edge. Reduce-scatter is the mirror:
// reduce inside the box to the member at the block's position, then across the rail to the
// block's owner. All-reduce does both. Data is cut into pieces that pipeline through the phases,
// so the box phases of one piece run beside the rail phase of another.
//
// Boxes are found from link speeds: the components of the network over its fastest links, at the
// slowest speed where they still hold every member in at least two equal boxes. A member's
// position in its box follows the fabric node it reaches first over the slower links, then its id.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/sim/simulator.hpp"
#include "tree_packing.hpp"

namespace tenet::synth {

/// One box: its members by position, and the network inside it as a topology of its own (its
/// NPUs first, members in position order, then its switches) whose link ids map to the input's.
struct Box {
  std::vector<NodeId> members;
  Topology inside;
  std::vector<LinkId> link_of;  ///< per link of `inside`: the input topology's link
};

struct BoxRails {
  std::vector<Box> boxes;      ///< same member count each
  double box_link_GBps = 0.0;  ///< the slowest link that counts as inside a box
  /// A rail transfer's estimate: the slowest fabric link, and two of its longest alphas (a hop
  /// up to the fabric, one down).
  double rail_GBps = 0.0;
  double rail_alpha_us = 0.0;
  std::uint32_t positions() const { return static_cast<std::uint32_t>(boxes.front().members.size()); }
};

/// The boxes of `members` on `topology`, or std::nullopt where link speeds do not split the
/// members into at least two boxes of equal size (at least two members each).
std::optional<BoxRails> find_box_rails(const Topology& topology, const std::vector<NodeId>& members);

struct BoxRailsResult {
  Schedule schedule;  ///< retimed by its replay
  SimResult replay;
  double score_us = 0.0;  ///< its file's time where `file_time` was given, else its replay's
  std::uint32_t pieces = 0;
  std::uint32_t groups = 0;  ///< of rail rounds (round_groups)
  std::uint32_t units = 0;   ///< tree units per member inside a box
  std::uint32_t tried = 0;   ///< schedules built and replayed
};

/// The fastest box-and-rail schedule of `kind` at a few pipeline depths within `max_transfers`,
/// each replayed on `topology` (scored by `file_time` of the retimed schedule when given), or
/// std::nullopt where trees cannot be packed inside the boxes or nothing fits the budget.
std::optional<BoxRailsResult> synthesize_box_rails(const Topology& topology, CollectiveKind kind,
                                                   std::uint64_t size_bytes, const std::vector<NodeId>& members,
                                                   const BoxRails& boxes, double max_transfers,
                                                   const std::function<double(const Schedule&)>& file_time = {});

/// The schedule of one choice (exposed for tests): `gather` and `reduce` per box (packed on the
/// box and on its transpose; only those the collective needs), `pieces` per unit, the rail's
/// rounds in `groups` groups (round_groups), each moved inside the boxes on its own.
Schedule box_rails_schedule(const Topology& topology, CollectiveKind kind, std::uint64_t size_bytes,
                            const std::vector<NodeId>& members, const BoxRails& boxes,
                            const std::vector<TreePacking>* gather, const std::vector<TreePacking>* reduce,
                            std::uint32_t pieces, std::uint32_t groups);

/// The group of each of `rounds` rail rounds (round 0: a member's own block), in `groups`
/// groups of consecutive rounds, as even as can be. The box phase of a group runs as one transfer
/// per tree edge: a reduction's rounds wait for their group to be reduced in the box, a
/// broadcast's group for its rounds, so smaller groups pipeline the two phases more finely (at
/// one transfer per group and tree edge). Groups no larger than the box's lead over the rail
/// keep the rail busy: on ring-fc-switch-2x4x128 (box and rail equally loaded), all-reduce of
/// 1 GiB at 16, 32, 64 and 128 groups 6.02, 5.76, 5.62 and 5.56 ms (bound 5.33); groups
/// doubling toward the middle up to 16 rounds, 6.53.
std::vector<std::uint32_t> round_groups(std::uint32_t rounds, std::uint32_t groups);

}  // namespace tenet::synth
