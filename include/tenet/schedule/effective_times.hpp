// SPDX-License-Identifier: MIT
#pragma once
// When each transfer of a schedule actually runs if it waits for its dependencies: the times the
// writers lay files out by and the order they walk transfers in. (The verifier keeps its own,
// parallel and allocation-free for already-ordered schedules: verify/replay_order.cpp.)

#include <vector>

#include "tenet/schedule/schedule.hpp"

namespace tenet {

struct EffectiveTimes {
  std::vector<double> start;         ///< by transfer id: max(planned start, every dependency's end)
  std::vector<double> end;           ///< by transfer id: max(start, planned end)
  std::vector<TransferId> by_start;  ///< transfer ids by start, ties in id order
};

EffectiveTimes effective_times(const Schedule& schedule);

}  // namespace tenet
