// SPDX-License-Identifier: MIT
#pragma once
// The classic algorithms, generated as Schedules on the user's topology so that they are verified
// and simulated exactly like the synthesized one. Each lives in its own file, whose first comment
// cites the paper section it implements; this header is their common entry point.
//
// Baseline schedules are logical: a transfer goes from NPU to NPU (link = kNoLink) and the
// simulator routes it. Their planned times are the contention-free alpha-beta estimate (each
// transfer as soon as its dependencies end, at the bottleneck bandwidth of its route, paying the
// route's alphas); the simulator computes the real, congested ones.
//
// Granularity: each baseline picks its own Schedule::chunks_per_member (ring: 1, or 2 when it runs
// two directions; direct and rhd: 1, blocks as chunk lists). Collective::chunks_per_npu is the
// synthesizer's knob and baselines ignore it.

#include <string>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

struct BaselineResult {
  bool applicable = false;
  std::string reason;  ///< why not, when !applicable (e.g. "bucket needs a torus layout")
  Schedule schedule;   ///< when applicable; schedule.algorithm() is the baseline's name
};

/// The baselines tenet knows, in the order reports list them:
/// ring, direct, rhd, swing, swing-latency, bucket, circulant.
const std::vector<std::string>& baseline_names();

/// Generates one baseline. Throws InputError (naming `option`, with a suggestion) for an unknown
/// name; returns applicable = false with a reason when the algorithm does not apply to this
/// topology or collective. Never crashes on any valid topology.
BaselineResult generate_baseline(const std::string& name, const Topology& topology, const Collective& collective,
                                 const std::string& option = "--algorithm");

}  // namespace tenet
