// SPDX-License-Identifier: MIT
// `tenet baseline`: generate one classic algorithm's schedule, verify it, report its simulated
// time, and write it (with the simulated times).

#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/evaluate/evaluate.hpp"
#include "tenet/io/result.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/topology/analysis.hpp"

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
  check_schedule_output(options.output, {options.collective.topology});
  const LoadedCollective loaded = load_collective(options.collective);
  const Topology& topology = loaded.topology;
  const Collective& collective = loaded.collective;
  const std::vector<NodeId> participants = collective.participants(topology);

  const Diameter diameter = compute_diameter(topology, collective.members);
  const LowerBound bound = lower_bound(topology, collective, diameter);
  ProgressLine line;
  // Shown at once: the first share comes only after 16,384 transfers have finished.
  line.show("baseline " + options.algorithm);
  Evaluation evaluation = evaluate_baseline(options.algorithm, topology, collective, bound, "--algorithm",
                                            std::numeric_limits<double>::infinity(),
                                            simulation_progress(line, "simulating " + options.algorithm));
  line.clear();
  CollectiveResult& report = evaluation.result;
  std::string heading = collective_name(collective.kind);
  heading += " of ";
  heading += format_size(collective.size_bytes);
  heading += " on ";
  heading += topology.name;
  heading += ", ";
  heading += std::to_string(participants.size());
  heading += " NPUs";

  if (!report.applicable) {
    // Asked for a file, the user would be left with none (or a stale one): that is an error.
    if (!options.output.path.empty()) {
      throw InputError("", "--algorithm",
                       options.algorithm + " does not apply here, so there is nothing to write to " +
                           options.output.path + ": " + report.reason);
    }
    // Not applying is an answer, not an error: say why and succeed.
    if (options.json) {
      print_json(result_to_json(report));
    } else {
      Table facts({options.algorithm, heading}, false);
      facts.add_row({"applicable", "no: " + report.reason});
      std::cout << facts.render();
    }
    return;
  }

  const Schedule& schedule = evaluation.schedule;
  const bool verified = report.verified;
  report.extra["topology"] = topology.name;
  const double schedule_time_us = report.time_us;
  WrittenFile file;
  if (verified && !options.output.path.empty()) {
    file = write_schedule(options.output, schedule, topology);
    apply_written_file(report, file);
  }

  if (options.json) {
    print_json(result_to_json(report));
  } else {
    Table facts({options.algorithm, heading}, false);
    if (topology.layout.is_grid()) facts.add_row({"layout", topology.layout.describe()});
    facts.add_row({"time", format_time_us(report.time_us) +
                               (file.runtime.empty() ? " (simulated: routed over the topology, links shared)"
                                                     : " (its " + file.runtime + " as the runtime runs it)")});
    add_written_rows(facts, file, schedule_time_us);
    facts.add_row({"algorithm bandwidth", fixed(report.algbw_GBps(), 2) + " GB/s"});
    facts.add_row({"lower bound", bound_summary(bound, report.time_us, "time")});
    facts.add_row({"bound terms", bound_terms_text(bound)});
    facts.add_row({"transfers", std::to_string(schedule.size())});
    for (const std::string& note : schedule.notes) facts.add_row({"note", note});
    facts.add_row({"verified", verified ? "yes" : "NO: " + evaluation.verify_error});
    if (verified && !options.output.path.empty()) facts.add_row({"wrote", options.output.path});
    std::cout << facts.render();
  }
  // A baseline that fails verification is a bug in tenet: say so through the exit code too.
  if (!verified) throw Exit{static_cast<int>(ExitStatus::kFailure)};
}

}  // namespace

void register_baseline_command(CLI::App& app) {
  auto options = std::make_shared<BaselineCommandOptions>();
  std::string description = "Generate a classic collective algorithm (";
  description += algorithm_list();
  description +=
      ") on a topology, verify it,\n"
      "simulate it on the topology, and write the schedule (-o schedule.json or -o algo.xml)";
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
