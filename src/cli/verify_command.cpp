// SPDX-License-Identifier: MIT
// `tenet verify`: check a schedule file against a topology, symbolically.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/topology/transforms.hpp"
#include "tenet/verify/verifier.hpp"

namespace tenet::cli {
namespace {

struct VerifyOptions {
  std::string topology;
  std::string schedule;
  std::string members;
  bool json = false;
};

/// An MSCCL algorithm: load rules, then execution on the CPU (msccl.hpp).
void run_verify_xml(const VerifyOptions& options, const Topology& topology) {
  const std::vector<NodeId> members =
      options.members.empty() ? std::vector<NodeId>{} : parse_members(options.members, topology, "--members");
  const MscclVerifyResult verdict = verify_msccl_xml(read_file(options.schedule), &topology, true, members);
  if (verdict.beyond_limits || verdict.wrong_topology) throw InputError(options.schedule, "", verdict.error);
  if (options.json) {
    nlohmann::json document = {{"schedule", options.schedule}, {"verified", verdict.ok}, {"format", "msccl-xml"}};
    if (verdict.ok) {
      document.update({{"collective", verdict.coll},
                       {"protocol", verdict.protocol},
                       {"in_place", verdict.in_place},
                       {"ranks", verdict.ranks},
                       {"nchunksperloop", verdict.nchunksperloop},
                       {"channels", verdict.channels},
                       {"max_threadblocks", verdict.max_threadblocks},
                       {"max_steps", verdict.max_steps},
                       {"call_splits_executed", verdict.splits_executed},
                       {"races_checked", verdict.races_checked}});
    } else {
      document["error"] = verdict.error;
    }
    print_json(document);
  } else if (verdict.ok) {
    std::cout << options.schedule << ": verified: MSCCL " << verdict.coll << " (" << verdict.protocol << ", "
              << (verdict.in_place ? "in-place" : "out-of-place") << ") on " << verdict.ranks << " ranks, "
              << verdict.nchunksperloop << " chunks per loop, " << verdict.channels << " channel(s), at most "
              << verdict.max_threadblocks << " threadblocks and " << verdict.max_steps
              << " steps per rank; executed for " << verdict.splits_executed << " call split(s), races "
              << (verdict.races_checked ? "checked" : "not checked (too large)") << "\n";
  } else {
    std::cout << options.schedule << ": NOT verified: " << verdict.error << "\n";
  }
  if (!verdict.ok) throw Exit{static_cast<int>(ExitStatus::kFailure)};
}

void run_verify(const VerifyOptions& options) {
  const Topology topology = load_topology(options.topology);
  const bool xml =
      options.schedule.size() >= 4 && options.schedule.compare(options.schedule.size() - 4, 4, ".xml") == 0;
  if (!options.members.empty() && !xml && !is_plan_path(options.schedule)) {
    throw InputError("", "--members",
                     "applies to MSCCL XML files and MSCCL++ plans; a schedule file names its own members");
  }
  if (is_plan_path(options.schedule)) {
    const std::vector<NodeId> members =
        options.members.empty() ? std::vector<NodeId>{} : parse_members(options.members, topology, "--members");
    run_verify_plan(options.schedule, topology, options.json, members);
    return;
  }
  if (xml) {
    run_verify_xml(options, topology);
    return;
  }
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
  verify
      ->add_option(
          "SCHEDULE", options->schedule,
          "Schedule file written by tenet synth -o (.json), an MSCCL algorithm (.xml) or an MSCCL++ plan (.plan.json)")
      ->required();
  verify->add_option("--members", options->members,
                     "The NPUs an MSCCL file's or MSCCL++ plan's ranks run on, e.g. 0,1,2,3 (default: all NPUs of "
                     "the topology)");
  verify->add_flag("--json", options->json, "Print one JSON document");
  verify->callback([options] { run_verify(*options); });
}

}  // namespace tenet::cli
