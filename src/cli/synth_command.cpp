// SPDX-License-Identifier: MIT
// `tenet synth`: synthesize, verify, report, and write the schedule.

#include <chrono>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/evaluate/evaluate.hpp"
#include "tenet/io/result.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/topology/analysis.hpp"

namespace tenet::cli {
namespace {

struct SynthCommandOptions {
  CollectiveOptions collective;
  std::string policy = "tenet";
  PlanningOptions planning;
  std::uint64_t seed = 1;
  std::uint32_t restarts = 1;
  int threads = 0;
  ScheduleOutput output;
  bool json = false;
};

/// What made the schedule, in words: the result's "method" with its shape.
std::string method_text(const nlohmann::json& extra) {
  const std::string method = extra["method"].get<std::string>();
  if (method == "spanning trees") {
    const nlohmann::json& trees = extra["trees"];
    const std::uint32_t pieces = trees["pieces"].get<std::uint32_t>() * trees["units_per_member"].get<std::uint32_t>();
    return "spanning trees: " + std::to_string(trees["trees"].get<std::uint32_t>()) + ", each member's data cut into " +
           std::to_string(pieces) + (pieces == 1 ? " piece" : " pieces") + " pipelined along them";
  }
  if (method == "boxes and rails") {
    const nlohmann::json& boxes = extra["box_rails"];
    return "boxes and rails: " + std::to_string(boxes["boxes"].get<std::uint32_t>()) + " boxes of " +
           std::to_string(boxes["members_per_box"].get<std::uint32_t>()) +
           ", spanning trees inside each box, the direct algorithm across each rail (members at one position)";
  }
  return "greedy matching of chunks to links, event by event";
}

void run_synth(const SynthCommandOptions& options) {
  auto thread_limit = limit_threads(options.threads);
  check_schedule_output(options.output, {options.collective.topology});
  const LoadedCollective loaded = load_collective(options.collective);
  const Topology& topology = loaded.topology;
  const Collective& collective = loaded.collective;
  SynthOptions synth_options = synth_options_for(loaded, options.planning);
  synth_options.policy = parse_synth_policy(options.policy, "--policy");
  synth_options.seed = options.seed;
  synth_options.restarts = options.restarts;
  if (options.output.xml())
    fit_synthesis_to_msccl_xml(synth_options, topology, collective.participants(topology).size(),
                               msccl_write_options(options.output.msccl));
  if (options.output.plan())
    fit_synthesis_to_mscclpp_plan(synth_options, topology, mscclpp_write_options(options.output.mscclpp));

  ProgressLine line;
  const std::string what =
      "synthesizing " + collective_name(collective.kind) + " on " + std::to_string(topology.npu_count()) + " NPUs";
  if (!options.json) {
    line.show(what);
    // Called by one worker at a time (synthesize rate-limits it under a lock).
    synth_options.progress = [&line, &what](double done) {
      line.show(what + ": " + std::to_string(static_cast<int>(done * 100.0)) + "% matched");
    };
  }
  const Diameter diameter = compute_diameter(topology, collective.members);
  const LowerBound bound = lower_bound(topology, collective, diameter);
  Evaluation evaluation = evaluate_synth(topology, collective, synth_options, bound);
  line.clear();
  // Synthesis is all this command does, so a plan that does not fit is its error.
  if (!evaluation.result.applicable) throw InputError("", "--size", evaluation.result.reason);
  CollectiveResult& report = evaluation.result;
  const bool verified = report.verified;
  report.extra["policy"] = options.policy;
  report.extra["topology"] = topology.name;
  report.extra["peak_memory_MiB"] = peak_memory_MiB();

  // Files name no routes: what a schedule planned on routes of its own becomes in one.
  add_runtime_routes_facts(report.extra, evaluation.schedule, topology);
  const nlohmann::json& extra = report.extra;
  const double schedule_time_us = report.time_us;
  WrittenFile file;
  if (verified && !options.output.path.empty()) {
    file = write_schedule(options.output, evaluation.schedule, topology, report.extra["seed"].get<std::uint64_t>());
    apply_written_file(report, file);
  }

  if (options.json) {
    print_json(result_to_json(report));
  } else {
    const std::uint32_t chunks = extra["chunks_per_npu"].get<std::uint32_t>();
    Table facts({"synth", collective_name(collective.kind) + " of " + format_size(collective.size_bytes) + " on " +
                              topology.name + ", " + std::to_string(report.npus) + " NPUs"},
                false);
    std::string time = format_time_us(report.time_us);
    if (!file.runtime.empty())
      time += " (its " + file.runtime + " as the runtime runs it)";
    else if (topology.switch_count() > 0)
      time += " (replayed on the real switches)";
    facts.add_row({"time", time});
    add_written_rows(facts, file, schedule_time_us);
    facts.add_row({"algorithm bandwidth", fixed(report.algbw_GBps(), 2) + " GB/s"});
    facts.add_row({"lower bound", bound_summary(bound, report.time_us)});
    facts.add_row({"bound terms", bound_terms_text(bound)});
    facts.add_row({"chunks per NPU", std::to_string(chunks) + (loaded.auto_chunks ? " (auto)" : "")});
    facts.add_row({"method", method_text(extra)});
    if (extra["transfers_carry"] != "one chunk" || extra["transfers_routed"] == true) {
      std::string carry;
      const std::string carries = extra["transfers_carry"].get<std::string>();
      if (extra["transfers_in_rounds"] == true) {
        carry =
            "aggregated, in synchronous rounds: every link of a round starts together, with every chunk it is given";
      } else if (carries == "aggregated chunks") {
        carry = "aggregated: each carries every chunk it is given at once";
      } else if (carries != "one chunk") {
        carry = "aggregated: each carries " + carries;
      }
      if (extra["transfers_routed"] == true)
        carry += std::string(carry.empty() ? "" : "; ") + "routed: straight between members, through the NPUs between";
      facts.add_row({"transfers", carry});
    }
    if (topology.switch_count() > 0) {
      std::string switches = extra["switches"].get<std::string>();
      if (extra.contains("unwound_plan_us")) {
        switches += " (its plan on the unwound links: " + format_time_us(extra["unwound_plan_us"].get<double>()) + ")";
        if (extra["winning_rule"] == "tacos" && options.policy != "tacos")
          switches += "; the paper's matching rule won";
      } else if (extra.contains("overlay_plan_us")) {
        switches =
            "planned on their group overlay (each NPU linked to its switch group and to its peers in the "
            "other groups; plan " +
            format_time_us(extra["overlay_plan_us"].get<double>()) + "), routed through the switches";
      } else if (extra["method"] == "spanning trees") {
        switches = "each tree edge a route through the switches";
      } else if (extra["method"] == "boxes and rails") {
        switches = "routed by the switches";
      } else if (extra.contains("sender_order")) {
        switches += " (planned on the physical links), " + extra["sender_order"].get<std::string>() + " matching";
      } else {
        switches += " (transfers straight between members, timed on the physical links)";
      }
      if (const std::string routes = runtime_routes_text(extra); !routes.empty()) switches += "; " + routes;
      facts.add_row({"switches", switches});
    }
    facts.add_row({"candidates", std::to_string(extra["candidates"].get<std::uint32_t>())});
    facts.add_row({"transfers", std::to_string(*report.transfers)});
    facts.add_row({"synthesis", format_time_us(*report.synthesis_ms * 1e3)});
    facts.add_row({"verified", verified ? "yes" : "NO: " + evaluation.verify_error});
    if (verified && !options.output.path.empty()) facts.add_row({"wrote", options.output.path});
    std::cout << facts.render();
  }
  // A schedule that fails verification is a bug in tenet: say so through the exit code too.
  if (!verified) throw Exit{static_cast<int>(ExitStatus::kFailure)};
}

}  // namespace

void register_synth_command(CLI::App& app) {
  auto options = std::make_shared<SynthCommandOptions>();
  CLI::App* synth = app.add_subcommand(
      "synth",
      "Synthesize a topology-aware collective (TACOS-style time-expanded network with greedy link-chunk\n"
      "matching), verify it, print a summary, and write the schedule (-o schedule.json)");
  add_collective_options(synth, options->collective, true);
  synth->add_option("--policy", options->policy, "Matching rule: tenet (default) or tacos (the paper's)");
  synth->add_option("--seed", options->seed, "Random seed (default 1): the same seed gives the same schedule")
      ->check(not_negative());
  synth->add_option("--restarts", options->restarts, "Seeds tried in parallel, the best kept (default 1)")
      ->check(CLI::Range(1u, 1024u));
  add_planning_options(synth, options->planning);
  add_schedule_output_options(synth, options->output);
  synth->add_flag("--json", options->json, "Print one JSON result object instead of the table");
  add_threads_option(synth, options->threads);
  synth->callback([options] { run_synth(*options); });
}

}  // namespace tenet::cli
