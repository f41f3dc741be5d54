// `tenet synth`: synthesize, verify, report, and write the schedule.

#include <chrono>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/io/result.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/verify/verifier.hpp"

namespace tenet::cli {
namespace {

/// Largest schedule on switches that synth simulates on the real network by itself (about a second).
constexpr std::size_t kSimulateOnSwitchesMax = 250000;

struct SynthCommandOptions {
  CollectiveOptions collective;
  std::string policy = "tenet";
  std::uint64_t seed = 1;
  std::uint32_t restarts = 1;
  std::uint32_t unwind_degree = 0;
  int threads = 0;
  ScheduleOutput output;
  bool json = false;
};

void run_synth(const SynthCommandOptions& options) {
  auto thread_limit = limit_threads(options.threads);
  SynthOptions synth_options;
  synth_options.policy = parse_synth_policy(options.policy, "--policy");
  synth_options.seed = options.seed;
  synth_options.restarts = options.restarts;
  synth_options.unwind_degree = options.unwind_degree;
  check_schedule_output(options.output);
  const LoadedCollective loaded = load_collective(options.collective);
  const Topology& topology = loaded.topology;
  const Collective& collective = loaded.collective;

  const bool show_progress = stderr_is_terminal() && !options.json;
  const std::string what = "synthesizing " + collective_name(collective.kind) + " on " +
                           std::to_string(topology.npu_count()) + " NPUs";
  if (show_progress) {
    std::cerr << what << "...\r" << std::flush;
    synth_options.progress = [&what](double done) {
      std::cerr << what << ": " << static_cast<int>(done * 100.0) << "% matched  \r" << std::flush;
    };
  }
  const auto started = std::chrono::steady_clock::now();
  SynthResult result = synthesize(topology, collective, synth_options);
  const double synthesis_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (show_progress) {
    std::cerr << std::string(72, ' ') << "\rverifying " << result.schedule.size() << " transfers...\r" << std::flush;
  }
  const VerifyResult verdict = verify_schedule(result.synthesis_topology, result.schedule);
  if (show_progress) std::cerr << std::string(72, ' ') << "\r" << std::flush;

  const std::vector<NodeId> participants = collective.participants(topology);
  const Diameter diameter = compute_diameter(topology, collective.members);
  const LowerBound bound = lower_bound(topology, collective, diameter);

  CollectiveResult report;
  report.algorithm = "synth";
  report.collective = collective.kind;
  report.npus = static_cast<std::uint32_t>(participants.size());
  report.size_bytes = collective.size_bytes;
  report.time_us = result.time_us;
  report.bound = bound;
  report.verified = verdict.ok;
  report.synthesis_ms = synthesis_ms;
  report.transfers = result.schedule.size();
  report.extra = {{"chunks_per_npu", collective.chunks_per_npu},
                  {"policy", options.policy},
                  {"winning_rule", result.policy == SynthPolicy::kTacos ? "tacos" : "tenet"},
                  {"seed", result.seed},
                  {"unwind_degree", result.unwind_degree},
                  {"topology", topology.name}};
  if (!verdict.ok) report.extra["verify_error"] = verdict.error;

  // Links of an unwound topology do not exist in the user's file: there the transfers are routed
  // through the switches, where they share ports the unwinding gave each a slice of. The planned
  // time holds on the unwound links only, so the real network's is simulated and shown beside it.
  std::optional<double> on_switches_us;
  if (verdict.ok && result.unwind_degree != 0) result.schedule.forget_links();
  // Routed flows contend at every switch port, so simulating costs far more per transfer than
  // synthesizing (minutes at millions of transfers): done here for small schedules only.
  const bool simulate_on_switches = result.unwind_degree != 0 && result.schedule.size() <= kSimulateOnSwitchesMax;
  if (verdict.ok && simulate_on_switches) {
    if (show_progress) std::cerr << "simulating on the switches...\r" << std::flush;
    on_switches_us = simulate(topology, result.schedule).time_us;
    if (show_progress) std::cerr << std::string(72, ' ') << "\r" << std::flush;
    report.extra["simulated_time_us"] = *on_switches_us;
  }
  report.extra["peak_memory_MiB"] = peak_memory_MiB();

  if (verdict.ok && !options.output.path.empty()) write_schedule(options.output, result.schedule, topology, result.seed);

  if (options.json) {
    print_json(result_to_json(report));
  } else {
    Table facts({"synth", collective_name(collective.kind) + " of " + format_size(collective.size_bytes) + " on " +
                              topology.name + ", " + std::to_string(participants.size()) + " NPUs, " +
                              std::to_string(collective.chunks_per_npu) + " chunk(s) per NPU"},
                false);
    facts.add_row({result.unwind_degree != 0 ? "time (planned)" : "time", format_time_us(result.time_us)});
    if (on_switches_us) {
      facts.add_row({"on the switches", format_time_us(*on_switches_us) + " simulated (transfers routed through the switches)"});
    } else if (verdict.ok && result.unwind_degree != 0) {
      facts.add_row({"on the switches", "not simulated (" + std::to_string(result.schedule.size()) +
                                            " transfers): tenet simulate the written schedule"});
    }
    facts.add_row({"algorithm bandwidth", fixed(report.algbw_GBps(), 2) + " GB/s"});
    // On switches the planned time holds on the unwound links only; the bound is the real
    // network's, so it is set against the time on the switches when there is one.
    if (on_switches_us) {
      facts.add_row({"lower bound", bound_summary(bound, *on_switches_us, "on the switches")});
    } else {
      facts.add_row({"lower bound", bound_summary(bound, result.time_us)});
    }
    facts.add_row({"bound terms", bound_terms_text(bound)});
    facts.add_row({"transfers", std::to_string(result.schedule.size())});
    facts.add_row({"synthesis", format_time_us(synthesis_ms * 1e3)});
    if (result.unwind_degree != 0) {
      std::string switches = "unwound at degree " + std::to_string(result.unwind_degree);
      if (result.policy == SynthPolicy::kTacos && options.policy != "tacos") switches += " (the paper's matching rule won)";
      facts.add_row({"switches", switches});
    }
    facts.add_row({"verified", verdict.ok ? "yes" : "NO: " + verdict.error});
    if (verdict.ok && !options.output.path.empty()) facts.add_row({"wrote", options.output.path});
    std::cout << facts.render();
  }
  // A schedule that fails verification is a bug in tenet: say so through the exit code too.
  if (!verdict.ok) throw Exit{static_cast<int>(ExitStatus::kFailure)};
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
  synth->add_option("--seed", options->seed, "Random seed (default 1): the same seed gives the same schedule");
  synth->add_option("--restarts", options->restarts, "Seeds tried in parallel, the best kept (default 1)")
      ->check(CLI::Range(1u, 1024u));
  synth->add_option("--unwind-degree", options->unwind_degree,
                    "Switch unwinding degree; 0 (default) tries 1, 2, 3, 4, 6, 8 and keeps the best")
      ->check(CLI::Range(0u, 4096u));
  add_schedule_output_options(synth, options->output);
  synth->add_flag("--json", options->json, "Print one JSON result object instead of the table");
  add_threads_option(synth, options->threads);
  synth->callback([options] { run_synth(*options); });
}

}  // namespace tenet::cli
