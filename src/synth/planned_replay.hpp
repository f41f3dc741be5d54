// SPDX-License-Identifier: MIT
#pragma once
// The times the simulator gives a point-to-point plan, without simulating it. Private to src/synth.

#include <optional>
#include <vector>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

struct ReplayTimes {
  std::vector<double> start;  ///< by transfer id
  std::vector<double> end;
  double finish = 0.0;
};

/// When every transfer names its planned link, the simulator runs each link's transfers one at a
/// time in planned order (ties by id), each alone on its link: a transfer starts once its
/// dependencies and the transfer before it on its link have ended, and takes its link's alpha plus
/// its bytes at the link's bandwidth. So its replay is this one pass in planned order, O(transfers
/// + dependencies), where the simulator's events and heaps cost far more. A reduce-scatter planned
/// as a time-reversed all-gather replays faster than planned (a transfer need not wait for its
/// planned start). nullopt when some transfer has no planned link.
std::optional<ReplayTimes> replay_planned_links(const Schedule& schedule, const Topology& topology);

}  // namespace tenet::synth
