#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include <tbb/parallel_for.h>

#include "tenet/baselines/baseline.hpp"
#include "tenet/batch/batch.hpp"
#include "tenet/common/error.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/transforms.hpp"
#include "tenet/verify/verifier.hpp"

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
  const std::uint32_t participants = static_cast<std::uint32_t>(collective.participants(degraded).size());

  const auto started = std::chrono::steady_clock::now();
  SynthResult result = synthesize(degraded, collective, options.synth);
  const double synthesis_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const VerifyResult verdict = verify_schedule(result.synthesis_topology, result.schedule);
  CollectiveResult& synth = outcome.synth;
  synth.algorithm = "synth";
  synth.collective = collective.kind;
  synth.npus = participants;
  synth.size_bytes = collective.size_bytes;
  synth.time_us = result.time_us;
  synth.bound = bound;
  synth.verified = verdict.ok;
  synth.synthesis_ms = synthesis_ms;
  synth.transfers = result.schedule.size();
  synth.extra = {{"unwind_degree", result.unwind_degree}};
  if (!verdict.ok) {
    outcome.status = "synthesized schedule failed verification: " + verdict.error;
    return outcome;
  }
  if (sink) {
    if (result.unwind_degree != 0) result.schedule.forget_links();
    sink(outcome, degraded, result.schedule);
  }

  double best_time = 0.0;
  for (const std::string& name : options.baselines) {
    CollectiveResult row;
    row.algorithm = name;
    row.collective = collective.kind;
    row.npus = participants;
    row.size_bytes = collective.size_bytes;
    row.bound = bound;
    BaselineResult baseline = generate_baseline(name, degraded, collective);
    if (!baseline.applicable) {
      row.applicable = false;
      row.reason = baseline.reason;
    } else {
      row.verified = verify_schedule(degraded, baseline.schedule).ok;
      row.time_us = simulate(degraded, baseline.schedule).time_us;
      if (row.verified && (outcome.best_baseline.empty() || row.time_us < best_time)) {
        outcome.best_baseline = name;
        best_time = row.time_us;
      }
    }
    outcome.baselines.push_back(std::move(row));
  }
  if (!outcome.best_baseline.empty()) outcome.speedup_over_best_baseline = best_time / synth.time_us;
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
  tbb::parallel_for(std::size_t{0}, mine.size(), [&](std::size_t k) {
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
