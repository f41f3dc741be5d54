// SPDX-License-Identifier: MIT
#pragma once
// The result object of DESIGN.md's JSON contract: one collective run by one algorithm.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tenet/collective.hpp"
#include "tenet/sim/bounds.hpp"

namespace tenet {

struct CollectiveResult {
  std::string algorithm;  ///< "synth" or a baseline's name
  CollectiveKind collective = CollectiveKind::kAllReduce;
  std::uint32_t npus = 0;  ///< participants
  std::uint64_t size_bytes = 0;
  double time_us = 0.0;
  LowerBound bound;  ///< the lower bound of this collective on this topology
  bool verified = false;
  bool applicable = true;  ///< false: the algorithm does not apply; `reason` says why
  std::string reason;
  std::optional<double> synthesis_ms;  ///< synth only
  std::optional<std::uint64_t> transfers;
  /// Set when the simulation was skipped because the schedule provably takes at least this long,
  /// more than an algorithm already timed (SimOptions::skip_slower_than_us); time_us is then not
  /// a time and must not be shown or ranked as one.
  std::optional<double> time_at_least_us;
  /// Anything else worth reporting (chunks_per_npu, unwind_degree, seed, notes, ...).
  nlohmann::json extra = nlohmann::json::object();

  /// Applicable and timed: time_us is its time on the network.
  bool timed() const { return applicable && !time_at_least_us; }
  double algbw_GBps() const { return time_us > 0.0 ? static_cast<double>(size_bytes) / time_us / 1e3 : 0.0; }
};

/// The DESIGN.md result object: algorithm, collective, npus, size_bytes, time_us, algbw_GBps,
/// lower_bound_us (the tightest bound), lower_bound_term (the term that binds),
/// lower_bound_terms (lower_bound_terms_json), time_over_lower_bound, verified (+ synthesis_ms,
/// transfers, applicable/reason, and the extras). Not simulated (time_at_least_us): time_us and
/// algbw_GBps are null, with simulated false and time_at_least_us.
nlohmann::json result_to_json(const CollectiveResult& result);

/// The terms of a bound: {ingress_us, cut_us, cut_bandwidth_us, latency_us, cut_exact}, and, when
/// the cut is not exact, cut_members_checked and cut_note.
nlohmann::json lower_bound_terms_json(const LowerBound& bound);

}  // namespace tenet
