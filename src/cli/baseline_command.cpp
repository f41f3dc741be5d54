// `tenet baseline`: generate one classic algorithm's schedule, verify it, report its
// contention-free planned time, and write it.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/io/result.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/verify/verifier.hpp"

namespace tenet::cli {
namespace {

struct BaselineCommandOptions {
  CollectiveOptions collective;
  std::string algorithm;
  ScheduleOutput output;
  bool json = false;
};

std::string algorithm_list() {
  std::string list;
  for (const std::string& name : baseline_names()) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}

void run_baseline(const BaselineCommandOptions& options) {
  check_schedule_output(options.output);
  const LoadedCollective loaded = load_collective(options.collective);
  const Topology& topology = loaded.topology;
  const Collective& collective = loaded.collective;
  const std::vector<NodeId> participants = collective.participants(topology);

  const BaselineResult generated = generate_baseline(options.algorithm, topology, collective, "--algorithm");

  CollectiveResult report;
  report.algorithm = options.algorithm;
  report.collective = collective.kind;
  report.npus = static_cast<std::uint32_t>(participants.size());
  report.size_bytes = collective.size_bytes;
  std::string heading = collective_name(collective.kind);
  heading += " of ";
  heading += format_size(collective.size_bytes);
  heading += " on ";
  heading += topology.name;
  heading += ", ";
  heading += std::to_string(participants.size());
  heading += " NPUs";

  if (!generated.applicable) {
    // Not applying is an answer, not an error: say why and succeed.
    report.applicable = false;
    report.reason = generated.reason;
    if (options.json) {
      print_json(result_to_json(report));
    } else {
      Table facts({options.algorithm, heading}, false);
      facts.add_row({"applicable", "no: " + generated.reason});
      std::cout << facts.render();
    }
    return;
  }

  const Schedule& schedule = generated.schedule;
  const VerifyResult verdict = verify_schedule(topology, schedule);
  const Diameter diameter = compute_diameter(topology, collective.members);
  const LowerBound bound = lower_bound(topology, collective, diameter);
  report.time_us = schedule.planned_time_us();
  report.bound = bound;
  report.verified = verdict.ok;
  report.transfers = schedule.size();
  report.extra = {{"time_model", "contention-free planned (alpha-beta)"},
                  {"chunks_per_member", schedule.chunks_per_member()},
                  {"topology", topology.name},
                  {"notes", schedule.notes}};
  if (!verdict.ok) report.extra["verify_error"] = verdict.error;

  if (verdict.ok && !options.output.path.empty()) write_schedule(options.output, schedule, topology);

  if (options.json) {
    print_json(result_to_json(report));
  } else {
    Table facts({options.algorithm, heading}, false);
    facts.add_row({"planned time", format_time_us(report.time_us) + " (contention-free alpha-beta estimate)"});
    facts.add_row({"algorithm bandwidth", fixed(report.algbw_GBps(), 2) + " GB/s"});
    facts.add_row({"lower bound", bound_summary(bound, report.time_us, "planned time")});
    facts.add_row({"bound terms", bound_terms_text(bound)});
    if (report.time_us < bound.total_us) {
      facts.add_row({"note", "the planned time is below the lower bound: the contention-free estimate ignores links "
                             "the transfers share; tenet simulate gives the real time"});
    }
    facts.add_row({"transfers", std::to_string(schedule.size())});
    for (const std::string& note : schedule.notes) facts.add_row({"note", note});
    facts.add_row({"verified", verdict.ok ? "yes" : "NO: " + verdict.error});
    if (verdict.ok && !options.output.path.empty()) facts.add_row({"wrote", options.output.path});
    std::cout << facts.render();
  }
  // A baseline that fails verification is a bug in tenet: say so through the exit code too.
  if (!verdict.ok) throw Exit{static_cast<int>(ExitStatus::kFailure)};
}

}  // namespace

void register_baseline_command(CLI::App& app) {
  auto options = std::make_shared<BaselineCommandOptions>();
  std::string description = "Generate a classic collective algorithm (";
  description += algorithm_list();
  description +=
      ") on a topology, verify it,\n"
      "print its contention-free planned time, and write the schedule (-o schedule.json or -o algo.xml)";
  CLI::App* baseline = app.add_subcommand("baseline", description);
  add_collective_options(baseline, options->collective, false);
  std::string algorithm_help = "The baseline: ";
  algorithm_help += algorithm_list();
  baseline->add_option("-a,--algorithm", options->algorithm, algorithm_help)->required();
  add_schedule_output_options(baseline, options->output);
  baseline->add_flag("--json", options->json, "Print one JSON result object instead of the table");
  baseline->callback([options] { run_baseline(*options); });
}

}  // namespace tenet::cli
