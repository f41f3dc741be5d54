// SPDX-License-Identifier: MIT
#include "mscclpp_cli.hpp"

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"

namespace tenet::cli {

void add_mscclpp_options(CLI::App* command, MscclppOutputOptions& options, const std::string& files) {
  command->add_option("--protocol", options.protocol, "MSCCL++ protocol of " + files + ": simple (default) or ll");
  command->add_flag(
      "--in-place", options.in_place,
      "Write " + files + " for in-place calls (default: out-of-place; the runtime selects plans by this)");
  command
      ->add_option("--ranks-per-node", options.ranks_per_node,
                   "Ranks per node in " + files +
                       ": memory channels inside a node, port channels across (default: "
                       "from the topology's first-level switches; one node without switches)")
      ->check(CLI::Range(1u, 1u << 20));
  command
      ->add_option("--max-threadblocks", options.max_threadblocks,
                   "Threadblocks one rank of " + files + " may run, all at once: the GPU's SM count (default 108)")
      ->check(CLI::Range(1u, 1u << 16));
}

MscclppOptions mscclpp_write_options(const MscclppOutputOptions& options) {
  MscclppOptions write;
  write.protocol = parse_mscclpp_protocol(options.protocol, "--protocol");
  write.in_place = options.in_place;
  write.ranks_per_node = options.ranks_per_node;
  write.max_threadblocks = options.max_threadblocks;
  return write;
}

bool is_plan_path(const std::string& path) {
  const std::string suffix = ".plan.json";
  return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void write_mscclpp_plan(const std::string& path, const Schedule& schedule, const Topology& topology,
                        const MscclppOptions& options) {
  std::string reason;
  const std::optional<std::string> text = schedule_to_mscclpp_plan(schedule, topology, options, reason);
  if (!text)
    throw InputError("", "--output", "'" + path + "': the schedule cannot be written as an MSCCL++ plan: " + reason);
  write_file_atomically(path, *text);
}

void run_verify_plan(const std::string& path, const Topology& topology, bool json, const std::vector<NodeId>& members) {
  const MscclppVerifyResult verdict = verify_mscclpp_plan(read_file(path), path, &topology, members);
  if (json) {
    nlohmann::json document = {{"schedule", path}, {"verified", verdict.ok}, {"format", "mscclpp-plan"}};
    if (verdict.ok) {
      document.update({{"name", verdict.name},
                       {"collective", verdict.collective},
                       {"protocol", verdict.protocol},
                       {"in_place", verdict.in_place},
                       {"ranks", verdict.ranks},
                       {"max_threadblocks", verdict.max_threadblocks},
                       {"max_ops", verdict.max_ops},
                       {"memory_channels", verdict.memory_channels},
                       {"port_channels", verdict.port_channels},
                       {"races_checked", verdict.races_checked}});
    } else {
      document["error"] = verdict.error;
    }
    print_json(document);
  } else if (verdict.ok) {
    std::cout << path << ": verified: MSCCL++ " << verdict.collective << " (" << verdict.protocol << ", "
              << (verdict.in_place ? "in-place" : "out-of-place") << ") on " << verdict.ranks << " ranks, at most "
              << verdict.max_threadblocks << " threadblocks per rank and " << verdict.max_ops
              << " ops per threadblock, " << verdict.memory_channels << " memory and " << verdict.port_channels
              << " port channels; races " << (verdict.races_checked ? "checked" : "not checked (too many threadblocks)")
              << "\n";
  } else {
    std::cout << path << ": NOT verified: " << verdict.error << "\n";
  }
  if (!verdict.ok) throw Exit{static_cast<int>(ExitStatus::kFailure)};
}

}  // namespace tenet::cli
