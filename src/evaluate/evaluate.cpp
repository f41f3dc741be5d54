// SPDX-License-Identifier: MIT
#include "tenet/evaluate/evaluate.hpp"

#include <chrono>

#include "tenet/baselines/baseline.hpp"
#include "tenet/verify/verifier.hpp"

namespace tenet {
namespace {

CollectiveResult result_frame(const std::string& algorithm, const Topology& topology, const Collective& collective,
                              const LowerBound& bound) {
  CollectiveResult result;
  result.algorithm = algorithm;
  result.collective = collective.kind;
  result.npus = static_cast<std::uint32_t>(collective.participants(topology).size());
  result.size_bytes = collective.size_bytes;
  result.bound = bound;
  return result;
}

}  // namespace

Evaluation evaluate_synth(const Topology& topology, const Collective& collective, const SynthOptions& options,
                          const LowerBound& bound, bool want_link_loads) {
  Evaluation evaluation;
  CollectiveResult& result = evaluation.result = result_frame("synth", topology, collective, bound);
  const auto started = std::chrono::steady_clock::now();
  SynthResult synthesized;
  try {
    synthesized = synthesize(topology, collective, options);
  } catch (const PlanTooLong& error) {
    // The baselines, timed in floating point, still run: a comparison shows them with synth n/a.
    result.applicable = false;
    result.reason = error.problems().empty() ? error.what() : error.problems().front().message;
    return evaluation;
  }
  result.synthesis_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const VerifyResult verdict = verify_schedule(topology, synthesized.schedule);
  result.verified = verdict.ok;
  evaluation.verify_error = verdict.error;
  result.time_us = synthesized.time_us;
  result.transfers = synthesized.schedule.size();
  std::string switches = "none";
  if (synthesized.switch_native) switches = "native";
  if (synthesized.unwind_degree != 0) switches = "unwound at degree " + std::to_string(synthesized.unwind_degree);
  if (synthesized.unwind_radix != 0)
    switches = "unwound in radix " + std::to_string(synthesized.unwind_radix) + ", " +
               std::to_string(synthesized.unwind_degree) + " links per NPU";
  if (synthesized.routed && topology.switch_count() > 0) switches = "routed through";
  if (synthesized.grouped) switches = "group overlay";
  if (synthesized.trees && topology.switch_count() > 0) switches = "tree routes";
  if (synthesized.box_rails) switches = "box rails";
  result.extra = {{"chunks_per_npu", synthesized.chunks_per_npu},
                  {"chunks_per_npu_auto", options.auto_chunks},
                  {"switches", switches},
                  {"winning_rule", synthesized.policy == SynthPolicy::kTacos ? "tacos" : "tenet"},
                  {"seed", synthesized.seed},
                  {"candidates", synthesized.candidates},
                  {"unwind_degree", synthesized.unwind_degree},
                  {"unwind_radix", synthesized.unwind_radix},
                  {"transfers_carry", !synthesized.aggregated() ? "one chunk"
                                      : synthesized.max_chunks_per_transfer == 0
                                          ? "aggregated chunks"
                                          : "up to " + std::to_string(synthesized.max_chunks_per_transfer) + " chunks"},
                  {"transfers_routed", synthesized.routed},
                  {"transfers_in_rounds", synthesized.rounds}};
  if (synthesized.switch_native) {
    const SenderOrder order = synthesized.sender_order;
    const char* names[] = {"any", "near-first", "far-first", "ring-first"};
    result.extra["sender_order"] = names[static_cast<int>(order)];
  }
  if (synthesized.unwind_degree != 0) result.extra["unwound_plan_us"] = synthesized.plan_us;
  if (synthesized.grouped) result.extra["overlay_plan_us"] = synthesized.plan_us;
  result.extra["method"] = synthesized.trees       ? "spanning trees"
                           : synthesized.box_rails ? "boxes and rails"
                                                   : "greedy matching";
  if (synthesized.trees) {
    const TreeSummary& trees = *synthesized.trees;
    result.extra["trees"] = {{"units_per_member", trees.units_per_member},
                             {"unit_GBps", trees.unit_GBps},
                             {"share_of_optimal", trees.share_of_optimal},
                             {"pieces", trees.pieces},
                             {"trees", trees.trees}};
  }
  if (synthesized.box_rails) {
    const BoxRailsSummary& boxes = *synthesized.box_rails;
    result.extra["box_rails"] = {{"boxes", boxes.boxes},
                                 {"members_per_box", boxes.positions},
                                 {"units_per_member", boxes.units},
                                 {"pieces", boxes.pieces},
                                 {"round_groups", boxes.groups}};
  }
  if (!verdict.ok) result.extra["verify_error"] = verdict.error;
  // Point-to-point plans are their own replay and come without link loads: simulated only if asked.
  evaluation.link_loads = std::move(synthesized.link_loads);
  if (evaluation.link_loads.empty() && want_link_loads)
    evaluation.link_loads = simulate(topology, synthesized.schedule).links;
  evaluation.schedule = std::move(synthesized.schedule);
  return evaluation;
}

Evaluation evaluate_baseline(const std::string& name, const Topology& topology, const Collective& collective,
                             const LowerBound& bound, const std::string& option, double slower_than_us,
                             const std::function<void(double)>& progress) {
  Evaluation evaluation;
  CollectiveResult& result = evaluation.result = result_frame(name, topology, collective, bound);
  BaselineResult baseline = generate_baseline(name, topology, collective, option);
  if (!baseline.applicable) {
    result.applicable = false;
    result.reason = baseline.reason;
    return evaluation;
  }
  const VerifyResult verdict = verify_schedule(topology, baseline.schedule);
  result.verified = verdict.ok;
  evaluation.verify_error = verdict.error;
  // A baseline's own times assume every transfer has its route to itself; the file written
  // carries the times it runs at on the network (links shared), so its planned time is its time.
  SimOptions record;
  record.record_times = true;
  record.skip_slower_than_us = slower_than_us;
  record.progress = progress;
  SimResult simulated = simulate(topology, baseline.schedule, record);
  result.transfers = baseline.schedule.size();
  result.extra = {{"chunks_per_member", baseline.schedule.chunks_per_member()}, {"notes", baseline.schedule.notes}};
  if (!verdict.ok) result.extra["verify_error"] = verdict.error;
  evaluation.link_loads = simulated.links;
  if (!simulated.simulated) {
    result.time_at_least_us = simulated.time_us;
    result.extra["not_simulated"] =
        "its busiest link alone needs longer than an algorithm already timed takes, so "
        "its " +
        std::to_string(baseline.schedule.size()) + " transfers, routed over shared links, were not simulated";
    evaluation.schedule = std::move(baseline.schedule);
    return evaluation;
  }
  baseline.schedule.retime(simulated.start_us, simulated.end_us);
  simulated.start_us = {};
  simulated.end_us = {};
  result.time_us = simulated.time_us;
  evaluation.schedule = std::move(baseline.schedule);
  return evaluation;
}

}  // namespace tenet
