// SPDX-License-Identifier: MIT
#pragma once
// Finishing a switch-native plan (port_order.cpp). Private to src/synth.

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

/// A copy of `schedule` in which every transfer routed through switches also depends on the
/// transfer before it on its lane of the sender's port (fabric.hpp), in planned order.
Schedule with_port_order(const Schedule& schedule, const Topology& topology);

}  // namespace tenet::synth
