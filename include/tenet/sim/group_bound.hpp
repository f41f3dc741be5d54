// SPDX-License-Identifier: MIT
#pragma once
// The all-reduce bound through groups of NPUs: boxes joined by slower links, for example.
//
// Split the nodes into groups (every NPU in one; a switch in a group or in none) and let k groups
// hold members. Summing and spreading each byte then takes at least 2(k - 1) one-way messages
// between groups: order the messages by arrival and let c be the first after which some group has
// heard from every member. Each of the other k - 1 member groups sent a message up to c (its data
// had to leave it), and each still lacked something after c, so received one later: 2(k - 1)
// messages, each entering its receiver's group through a link into that group (switches forward,
// they neither add nor keep). So the links into all groups together carry 2(k - 1) n bytes, and
// the links out of them as many. With one NPU per group this is the ingress bound's sum term; with
// the eight GPUs of a box and their NVSwitch as one group, four boxes of 25 GB/s NICs must carry
// 6 n through 32 NICs: 1.5 n / 200 GB/s, where one GPU alone only has to take in 2 (31/32) n / 325.
// It holds for schedules that move each byte as a partial sum, as tenet's and the runtimes' do.

#include <cstdint>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet {

/// The largest group bound over the groups tried (see all_reduce_group_bound), for one size.
struct GroupBound {
  double time_us = 0.0;         ///< 0: no grouping with three groups of members or more was found
  std::uint32_t groups = 0;     ///< member groups k of the binding grouping
  double bandwidth_GBps = 0.0;  ///< of the links into (or out of) all its groups, the side that binds
  double threshold_GBps = 0.0;  ///< groups are joined by links faster than this
  double latency_us = 0.0;      ///< the cheapest alpha among those links
};

/// Groups are the components of the links faster than a threshold, for each link bandwidth of the
/// topology but the fastest (at most 16 of them, evenly picked, when there are more): boxes,
/// pods, racks, as the network has them; and the same groups each with the switch components
/// that only it reaches (a box's PCIe or NIC switch). One NPU per group is the ingress bound's
/// own term and is not tried here. `members` in ascending order.
GroupBound all_reduce_group_bound(const Topology& topology, const std::vector<NodeId>& members,
                                  std::uint64_t size_bytes);

}  // namespace tenet
