// SPDX-License-Identifier: MIT
#pragma once
// Finishing a switch-native plan, or one made on virtual links (port_order.cpp,
// covered_port_waits.cpp). Private to src/synth.

#include <optional>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

/// A copy of `schedule` in which every transfer routed through switches also depends on the
/// transfer before it on its lane of the sender's port (fabric.hpp), in planned order.
Schedule with_port_order(const Schedule& schedule, const Topology& topology);

/// A copy of a with_port_order schedule, still timed as planned, without the port waits its data
/// covers: a routed transfer no longer waits for its sender's earlier transfer where the plan has
/// its data there no sooner than that one ends, less its route's alphas (covered_port_waits.cpp).
/// Nullopt when no wait is covered.
std::optional<Schedule> without_covered_port_waits(const Schedule& schedule, const Topology& topology);

/// A copy of a plan made on virtual links (unwound switches, the group overlay, the express
/// topology) with those links forgotten, in which each reduction also depends on the reduction
/// planned before it on its virtual link (planned start order): one connection's sends, in order,
/// as the sender's runtime issues them.
Schedule with_reduction_order(const Schedule& schedule);

}  // namespace tenet::synth
