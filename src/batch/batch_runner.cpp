// SPDX-License-Identifier: MIT
#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>

#include "tenet/batch/batch.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/evaluate/evaluate.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet {
namespace {

/// The scenario's failures as a FailureSet on the healthy topology: a cable fails in both
/// directions, whichever of them exist.
FailureSet failures_of(const Scenario& scenario, const Topology& healthy) {
  FailureSet failures;
  failures.npus = scenario.failed_npus;
  for (const auto& [a, b] : scenario.failed_cables) {
    if (healthy.has_link(a, b)) failures.links.emplace_back(a, b);
    if (healthy.has_link(b, a)) failures.links.emplace_back(b, a);
  }
  return failures;
}

/// Members in the degraded topology's numbering; a failed member makes the scenario impossible.
std::vector<NodeId> degraded_members(const Scenario& scenario, const Topology& healthy, const Topology& degraded,
                                     std::string& status) {
  std::vector<NodeId> members;
  if (scenario.members.empty()) return members;
  for (NodeId member : scenario.members) {
    const NodeId original = healthy.original_npu_id(member);
    NodeId found = kNoNode;
    for (NodeId npu = 0; npu < degraded.npu_count(); ++npu) {
      if (degraded.original_npu_id(npu) == original) found = npu;
    }
    if (found == kNoNode) {
      status = "member NPU " + std::to_string(original) + " failed";
      return {};
    }
    members.push_back(found);
  }
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  if (members.size() < 2) status = "fewer than 2 members";
  return members;
}

/// Runs one scenario end to end. Never throws for a scenario's own trouble: it becomes a status.
ScenarioOutcome run_scenario(const Topology& healthy, const Scenario& scenario, std::size_t index,
                             const BatchOptions& options, const ScheduleSink& sink) {
  ScenarioOutcome outcome;
  outcome.index = index;
  outcome.scenario = scenario;
  Topology degraded;
  try {
    degraded = apply_failures(healthy, failures_of(scenario, healthy), "", "");
  } catch (const InputError& error) {
    outcome.status = error.problems().empty() ? "cannot run" : error.problems().front().message;
    return outcome;
  }
  if (degraded.npu_count() < 2) {
    outcome.status = "fewer than 2 NPUs survive";
    return outcome;
  }
  Collective collective = options.collective;
  collective.members = degraded_members(scenario, healthy, degraded, outcome.status);
  if (outcome.status != "ok") return outcome;

  const Diameter diameter = compute_diameter(degraded, collective.members);
  const LowerBound bound = lower_bound(degraded, collective, diameter);

  // The same evaluation as synth and compare: every time is on the degraded network as it runs.
  SynthOptions synth = options.synth;
  if (options.fit_synthesis) options.fit_synthesis(synth, degraded, collective);
  Evaluation synthesized = evaluate_synth(degraded, collective, synth, bound);
  outcome.synth = std::move(synthesized.result);
  if (!outcome.synth.applicable) {
    outcome.status = "synth cannot plan it: " + outcome.synth.reason;
    return outcome;
  }
  const nlohmann::json extra = outcome.synth.extra;
  outcome.synth.extra = {{"unwind_degree", extra["unwind_degree"]},
                         {"chunks_per_npu", extra["chunks_per_npu"]},
                         {"switches", extra["switches"]}};
  if (!outcome.synth.verified) {
    outcome.status = "synthesized schedule failed verification: " + synthesized.verify_error;
    return outcome;
  }
  double best_time = 0.0;
  std::vector<NamedSchedule> kept;
  for (const std::string& name : options.baselines) {
    // A baseline that provably cannot beat the best one so far is not simulated when that would
    // take long, unless its file may be written (files are ranked by their own times).
    const double slower_than = options.keep_baseline_schedules || outcome.best_baseline.empty()
                                   ? std::numeric_limits<double>::infinity()
                                   : best_time;
    Evaluation baseline = evaluate_baseline(name, degraded, collective, bound, "--baselines", slower_than);
    CollectiveResult& row = baseline.result;
    const nlohmann::json not_simulated = row.extra.value("not_simulated", nlohmann::json());
    row.extra = nlohmann::json::object();
    if (!not_simulated.is_null()) row.extra["not_simulated"] = not_simulated;
    if (row.timed() && row.verified && (outcome.best_baseline.empty() || row.time_us < best_time)) {
      outcome.best_baseline = name;
      best_time = row.time_us;
    }
    if (options.keep_baseline_schedules && row.timed() && row.verified) {
      kept.push_back({name, std::move(baseline.schedule), row.time_us});
    }
    outcome.baselines.push_back(std::move(row));
  }
  if (!outcome.best_baseline.empty()) outcome.speedup_over_best_baseline = best_time / outcome.synth.time_us;
  if (sink) sink(outcome, degraded, synthesized.schedule, kept);
  return outcome;
}

}  // namespace

void parse_shard(const std::string& text, const std::string& option, std::uint32_t& index, std::uint32_t& count) {
  const std::size_t slash = text.find('/');
  auto number = [&](const std::string& part) -> long long {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoll(part);
  };
  const long long i = slash == std::string::npos ? -1 : number(text.substr(0, slash));
  const long long n = slash == std::string::npos ? -1 : number(text.substr(slash + 1));
  if (i < 0 || n < 1 || i >= n) {
    throw InputError("", option, "'" + text + "' is not a shard; expected I/N with 0 <= I < N, e.g. 0/4");
  }
  index = static_cast<std::uint32_t>(i);
  count = static_cast<std::uint32_t>(n);
}

std::vector<ScenarioOutcome> run_batch(const Topology& healthy, const std::vector<Scenario>& scenarios,
                                       const BatchOptions& options, const ScheduleSink& sink,
                                       const std::function<void(std::size_t, std::size_t)>& progress) {
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    if (i % options.shard_count == options.shard_index) mine.push_back(i);
  }
  // The healthy reference first, alone: every slowdown divides by it.
  const bool healthy_is_mine = !mine.empty() && mine.front() == 0;
  ScenarioOutcome reference = run_scenario(healthy, scenarios[0], 0, options, healthy_is_mine ? sink : ScheduleSink{});
  if (reference.status != "ok") {
    throw InputError("", "--topology", "the healthy topology cannot run the collective: " + reference.status);
  }
  reference.slowdown = 1.0;
  const double healthy_time = reference.synth.time_us;

  std::vector<ScenarioOutcome> outcomes(mine.size());
  std::atomic<std::size_t> done{healthy_is_mine ? 1u : 0u};
  std::mutex progress_mutex;
  parallel_for(std::size_t{0}, mine.size(), [&](std::size_t k) {
    if (mine[k] == 0) {
      outcomes[k] = reference;
      return;
    }
    outcomes[k] = run_scenario(healthy, scenarios[mine[k]], mine[k], options, sink);
    if (outcomes[k].status == "ok") outcomes[k].slowdown = outcomes[k].synth.time_us / healthy_time;
    const std::size_t finished = ++done;
    if (progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      progress(finished, mine.size());
    }
  });
  return outcomes;
}

}  // namespace tenet
