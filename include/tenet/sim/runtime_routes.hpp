// SPDX-License-Identifier: MIT
#pragma once
// The routes a runtime takes. MSCCL XML and MSCCL++ plans name a sender and a receiver, never a
// path: between two NPUs without a link of their own the network routes the data as the
// simulator does for a transfer that names no link (topology/routing.hpp). A schedule planned on
// other routes (spanning trees packed through switches pick theirs by max-flow) runs on the
// runtime's routes once it is a file, and only its replay there tells what the file costs.

#include <cstddef>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

/// How many transfers name a link or route other than the one the simulator takes between their
/// NPUs when they name none.
std::size_t transfers_off_runtime_routes(const Schedule& schedule, const Topology& topology);

/// The schedule with every link and route forgotten, timed by its replay on `topology` (the
/// runtime's routes).
Schedule on_runtime_routes(const Schedule& schedule, const Topology& topology);

}  // namespace tenet
