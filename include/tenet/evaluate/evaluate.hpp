// SPDX-License-Identifier: MIT
#pragma once
// One evaluation path for every command (synth, baseline, compare, batch): make the schedule,
// verify it, and time it on the real network, so one schedule gets one time wherever it is shown.
//
// The time is that of what the user runs: a synthesized schedule as replayed through the real
// switches (the synthesizer scores its candidates the same way), a baseline simulated with its
// transfers routed over the topology. Never a plan on an abstraction.

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/io/result.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

struct Evaluation {
  /// algorithm, collective, npus, size, time on the real network, bound, verified, and extras.
  CollectiveResult result;
  /// What was timed, on the topology (empty when the algorithm does not apply).
  Schedule schedule;
  /// Bytes and busy time per link of the topology: from the simulation that timed it, and for a
  /// point-to-point plan (its own replay, never simulated) only when asked for.
  std::vector<LinkLoad> link_loads;
  /// Why verification failed; empty when it passed.
  std::string verify_error;
};

/// Synthesizes, verifies and reports. `bound` is the collective's lower bound on `topology`
/// (passed in: callers evaluating several algorithms compute it once). A collective whose plan
/// would not fit in picoseconds (PlanTooLong) is a result (applicable = false, with the reason),
/// as a baseline that does not apply is; the synth command makes it the error it reports.
Evaluation evaluate_synth(const Topology& topology, const Collective& collective, const SynthOptions& options,
                          const LowerBound& bound, bool want_link_loads = false);

/// Generates baseline `name`, verifies it and simulates it on `topology`. Not applicable is a
/// result (applicable = false, with the reason), not an error. `option` names the CLI option an
/// unknown name came from.
///
/// `slower_than_us`: callers ranking algorithms pass the best time they have; a baseline whose
/// simulation would be long and that provably takes longer is then not simulated
/// (result.time_at_least_us, SimOptions::skip_slower_than_us), and its schedule keeps its own
/// planned times. `progress`: SimOptions::progress of its simulation.
Evaluation evaluate_baseline(const std::string& name, const Topology& topology, const Collective& collective,
                             const LowerBound& bound, const std::string& option = "--algorithm",
                             double slower_than_us = std::numeric_limits<double>::infinity(),
                             const std::function<void(double)>& progress = {});

}  // namespace tenet
