// SPDX-License-Identifier: MIT
#pragma once
// The simulator's two tolerances, in one place (internal to the simulator).

namespace tenet::sim {

/// Refill restart margin (flow_network.cpp). A refill restarts at the rate of the slowest flow
/// that ended (or a lower bound on the rate of a flow that started) and keeps every flow below
/// that level as it is. Rates that are equal on paper can differ in their last bits (residuals
/// summed in different orders), so the level is lowered by this relative margin, never to keep
/// a flow that sits at the level. Lowering the level only makes a refill a little larger: results
/// do not depend on this value.
constexpr double kLevelMargin = 1e-9;

/// Batch window (simulator.cpp), relative to the current time. Flows that end together on paper
/// (the symmetric flows of an all-to-all on a torus) end a few ulps apart after rounding; each
/// would trigger its own refill of the same large component. Events within this window of the
/// first change since the last refill are applied before one refill, so a rate change can take
/// effect up to this fraction of the current time late: results move by at most about this much
/// relative, far below anything the model resolves.
constexpr double kBatchWindow = 1e-12;

}  // namespace tenet::sim
