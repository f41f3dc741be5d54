// SPDX-License-Identifier: MIT
#pragma once
// `tenet batch`: synthesize, verify and simulate a collective over many failure scenarios.
//
// Each scenario applies its failures to the healthy topology; a scenario that cannot run (the
// failures disconnect the survivors, leave too few members, ...) gets a status saying why and the
// batch goes on. Scenarios run in parallel; every result lands in its scenario's slot, so the
// output is identical for any thread count and completion order. Shards take every N-th scenario,
// so N processes (a Slurm array, mpirun) split one sweep and `batch merge` puts it back together.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tenet/baselines/baseline.hpp"
#include "tenet/batch/scenario.hpp"
#include "tenet/collective.hpp"
#include "tenet/io/result.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

struct BatchOptions {
  Collective collective;  ///< kind, size, chunks per NPU; members come per scenario
  SynthOptions synth;
  std::vector<std::string> baselines = baseline_names();  ///< simulated on each degraded topology
  std::uint32_t shard_index = 0;
  std::uint32_t shard_count = 1;
  /// Hand the sink the applicable, verified baselines' schedules too (to write the best file).
  bool keep_baseline_schedules = false;
  /// Fits each scenario's synthesis to the file its schedule will be written to (batch --xml,
  /// --mscclpp), as synth -o does: called with a copy of `synth` and the scenario's own network
  /// and collective, which outlive that scenario's synthesis. Called from worker threads.
  std::function<void(SynthOptions&, const Topology&, const Collective&)> fit_synthesis;
};

struct ScenarioOutcome {
  std::size_t index = 0;  ///< position in the whole scenario list (0: healthy)
  Scenario scenario;
  std::string status = "ok";  ///< "ok", or why the scenario could not run
  CollectiveResult synth;
  std::vector<CollectiveResult> baselines;
  double slowdown = 0.0;      ///< synth time / healthy synth time
  std::string best_baseline;  ///< fastest applicable baseline, "" when none
  double speedup_over_best_baseline = 0.0;
};

/// A baseline's schedule on a scenario, by name.
struct NamedSchedule {
  std::string algorithm;
  Schedule schedule;
  double time_us = 0.0;  ///< simulated on the degraded network
};

/// Called from worker threads with each ok scenario's degraded topology, verified synthesized
/// schedule and (with BatchOptions::keep_baseline_schedules) the applicable verified baselines'
/// schedules, e.g. to write files; must be safe to call concurrently for different scenarios.
using ScheduleSink =
    std::function<void(const ScenarioOutcome&, const Topology&, const Schedule&, const std::vector<NamedSchedule>&)>;

/// Runs this shard's scenarios of `scenarios` (index % shard_count == shard_index), plus the
/// healthy reference (scenarios[0]) that every slowdown is measured against. Returns the shard's
/// outcomes in scenario order. `progress(done, total)` is called as scenarios finish.
std::vector<ScenarioOutcome> run_batch(const Topology& healthy, const std::vector<Scenario>& scenarios,
                                       const BatchOptions& options, const ScheduleSink& sink = {},
                                       const std::function<void(std::size_t, std::size_t)>& progress = {});

/// Parses "I/N" (0 <= I < N); throws InputError naming `option`.
void parse_shard(const std::string& text, const std::string& option, std::uint32_t& index, std::uint32_t& count);

/// What identifies a sweep, so shard outputs of different sweeps are never merged.
struct BatchIdentity {
  std::string topology;
  std::string fingerprint;
  std::string collective;
  std::uint64_t size_bytes = 0;
  std::string chunks_per_npu = "auto";  ///< as given: auto or a number
  std::string switches = "auto";
  std::string transfers = "auto";
  std::uint64_t seed = 0;
  std::string policy;
  std::string scenarios;           ///< the --scenarios value as given
  std::size_t scenario_count = 0;  ///< including the healthy reference
  std::vector<std::string> baselines;
};

/// The summary document (summary.json): identity, shard, and one row per scenario sorted worst
/// first (scenarios that could not run, then by slowdown, then by scenario order). Only
/// deterministic fields: no wall-clock times, so a merged sweep equals a single run byte for byte.
nlohmann::json batch_summary(const BatchIdentity& identity, const std::string& shard, nlohmann::json rows);

/// One row as JSON (the DESIGN result fields plus index, scenario, failed, status, slowdown,
/// best baseline and each baseline's result); NPUs by their ids in the topology file.
nlohmann::json scenario_row(const ScenarioOutcome& outcome, const Topology& healthy);

/// CSV of a summary's rows (header line first).
std::string summary_csv(const nlohmann::json& summary);

/// Merges shard summaries (read from DIR/summary.json of each folder) into the summary of the
/// whole sweep. Throws InputError when they come from different sweeps, when a shard is missing
/// or given twice, or when a file is not a tenet batch summary.
nlohmann::json merge_batch_summaries(const std::vector<std::string>& folders);

}  // namespace tenet
