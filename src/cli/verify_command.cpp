// `tenet verify`: check a schedule file against a topology, symbolically.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/common/error.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

namespace tenet::cli {
namespace {

struct VerifyOptions {
  std::string topology;
  std::string schedule;
  bool json = false;
};

void run_verify(const VerifyOptions& options) {
  if (options.schedule.size() >= 4 && options.schedule.compare(options.schedule.size() - 4, 4, ".xml") == 0) {
    throw InputError(options.schedule, "", "reading MSCCL XML is not supported yet; verify the schedule .json");
  }
  const Topology topology = load_topology(options.topology);
  const Schedule schedule = load_schedule(options.schedule, topology);
  const VerifyResult verdict = verify_schedule(topology, schedule);
  if (options.json) {
    nlohmann::json document = {{"schedule", options.schedule},
                               {"verified", verdict.ok},
                               {"transfers", schedule.size()},
                               {"redundant_copies", verdict.redundant_copies}};
    if (!verdict.ok) document["error"] = verdict.error;
    print_json(document);
  } else if (verdict.ok) {
    std::cout << options.schedule << ": verified: " << collective_name(schedule.collective()) << " of "
              << schedule.members().size() << " NPUs, " << schedule.size() << " transfers, planned time "
              << schedule.planned_time_us() << " us\n";
  } else {
    std::cout << options.schedule << ": NOT verified: " << verdict.error << "\n";
  }
  if (!verdict.ok) throw Exit{static_cast<int>(ExitStatus::kFailure)};
}

}  // namespace

void register_verify_command(CLI::App& app) {
  auto options = std::make_shared<VerifyOptions>();
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check a schedule file on a topology: every transfer possible, causal and race-free, and the\n"
      "collective's result complete with every contribution exactly once. Exit 0 only when it holds");
  verify->add_option("-t,--topology", options->topology, "Topology file (JSON)")->required();
  verify->add_option("SCHEDULE", options->schedule, "Schedule file written by tenet synth -o (.json)")->required();
  verify->add_flag("--json", options->json, "Print one JSON document");
  verify->callback([options] { run_verify(*options); });
}

}  // namespace tenet::cli
