// SPDX-License-Identifier: MIT
#pragma once
// The CLI side of MSCCL++ plans: the options that shape a .plan.json, writing one, and verifying
// or loading one for `verify` and `simulate`.

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "tenet/mscclpp/mscclpp_plan.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::cli {

/// How schedules written as MSCCL++ plans are laid out: --protocol, --in-place, --ranks-per-node,
/// --max-threadblocks.
struct MscclppOutputOptions {
  std::string protocol = "simple";
  bool in_place = false;
  std::uint32_t ranks_per_node = 0;
  std::uint32_t max_threadblocks = 108;
};

/// Adds the options; `files` says which files they shape ("the .plan.json").
void add_mscclpp_options(CLI::App* command, MscclppOutputOptions& options, const std::string& files);

/// The writer's options; an unknown protocol is an InputError naming --protocol.
MscclppOptions mscclpp_write_options(const MscclppOutputOptions& options);

/// True for a path tenet reads and writes as an MSCCL++ plan (ends with ".plan.json").
bool is_plan_path(const std::string& path);

/// Writes the schedule as a plan to `path` atomically; when it cannot be written, an InputError
/// naming --output with the writer's reason, and nothing is written.
void write_mscclpp_plan(const std::string& path, const Schedule& schedule, const Topology& topology,
                        const MscclppOptions& options);

/// `tenet verify` of a plan: prints the verdict (or JSON), throws Exit{1} when it does not verify.
void run_verify_plan(const std::string& path, const Topology& topology, bool json,
                     const std::vector<NodeId>& members = {});

}  // namespace tenet::cli
