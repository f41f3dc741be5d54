// SPDX-License-Identifier: MIT
// The public face of the reader: verify a plan, or turn it into a Schedule for the simulator.

#include <algorithm>
#include <cctype>
#include <numeric>

#include "plan_model.hpp"
#include "tenet/common/error.hpp"
#include "tenet/mscclpp/mscclpp_plan.hpp"

namespace tenet {

using namespace mscclpp_detail;
// Plan is named in full: in a unity batch after src/msccl/, msccl_detail::Plan is visible too.

MscclppProtocol parse_mscclpp_protocol(const std::string& text, const std::string& option) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "simple") return MscclppProtocol::kSimple;
  if (lower == "ll") return MscclppProtocol::kLL;
  throw InputError("", option, "unknown MSCCL++ protocol '" + text + "'; expected simple or ll");
}

namespace {

void check_rank_count(const mscclpp_detail::Plan& plan, const Topology& topology, const std::string& source,
                      const std::vector<NodeId>& members) {
  if (!members.empty()) {
    if (plan.gpus.size() != members.size()) {
      throw InputError(source, "/gpus",
                       "the plan has " + std::to_string(plan.gpus.size()) + " ranks but --members names " +
                           std::to_string(members.size()) + " NPUs; rank r runs on the r-th of them");
    }
    return;
  }
  if (plan.gpus.size() != topology.npu_count()) {
    throw InputError(source, "/gpus",
                     "the plan has " + std::to_string(plan.gpus.size()) + " ranks but topology '" + topology.name +
                         "' has " + std::to_string(topology.npu_count()) +
                         " NPUs; rank r runs on NPU r (--members names the NPUs of a plan of fewer ranks)");
  }
}

}  // namespace

MscclppVerifyResult verify_mscclpp_plan(const std::string& text, const std::string& source, const Topology* topology,
                                        const std::vector<NodeId>& members) {
  const mscclpp_detail::Plan plan = parse_plan(text, source);
  if (topology != nullptr) check_rank_count(plan, *topology, source, members);
  MscclppVerifyResult result;
  result.name = plan.name;
  result.collective = plan.collective;
  result.protocol = plan.protocol;
  result.in_place = plan.in_place;
  result.ranks = static_cast<int>(plan.gpus.size());
  for (const PlanGpu& gpu : plan.gpus) {
    result.max_threadblocks = std::max(result.max_threadblocks, static_cast<int>(gpu.threadblocks.size()));
    for (const PlanThreadblock& block : gpu.threadblocks)
      result.max_ops = std::max(result.max_ops, static_cast<int>(block.ops.size()));
    result.memory_channels += static_cast<int>(gpu.memory_peers.size());
    result.port_channels += static_cast<int>(gpu.port_peers.size());
  }
  result.error = check_plan_rules(plan);
  if (!result.error.empty()) return result;
  const ExecutionResult execution = execute_plan(plan, true, false);
  result.error = execution.error;
  result.races_checked = execution.races_checked;
  result.ok = result.error.empty();
  return result;
}

Schedule mscclpp_plan_to_schedule(const std::string& text, const std::string& source, const Topology& topology,
                                  std::uint64_t size_bytes, const std::vector<NodeId>& members) {
  const mscclpp_detail::Plan plan = parse_plan(text, source);
  check_rank_count(plan, topology, source, members);
  std::string problem = check_plan_rules(plan);
  ExecutionResult execution;
  if (problem.empty()) {
    execution = execute_plan(plan, false, true);
    problem = execution.error;
  }
  if (!problem.empty()) throw InputError(source, "", "the plan does not execute: " + problem);

  // A plan says nothing of where its ranks run: rank r on NPU r unless the caller says.
  std::vector<NodeId> on = members;
  if (on.empty()) {
    on.resize(plan.gpus.size());
    std::iota(on.begin(), on.end(), NodeId{0});
  }
  return mscclpp_detail::executed_schedule(plan, execution, size_bytes, on);
}

namespace mscclpp_detail {

Schedule executed_schedule(const Plan& plan, const ExecutionResult& execution, std::uint64_t size_bytes,
                           const std::vector<NodeId>& members) {
  const CollectiveKind kind = plan.collective == "allgather"       ? CollectiveKind::kAllGather
                              : plan.collective == "reducescatter" ? CollectiveKind::kReduceScatter
                                                                   : CollectiveKind::kAllReduce;
  const std::uint32_t ranks = static_cast<std::uint32_t>(plan.gpus.size());
  // The schedule's chunks: the buffer the collective size measures (output for all-gather, input
  // otherwise), in units that every rank owns equally many of.
  const std::uint32_t plan_chunks = static_cast<std::uint32_t>(
      kind == CollectiveKind::kAllGather ? plan.gpus[0].output_chunks : plan.gpus[0].input_chunks);
  const std::uint32_t per_member = plan_chunks % ranks == 0 ? plan_chunks / ranks : plan_chunks;
  const std::uint32_t split = per_member * ranks / plan_chunks;  // schedule chunks per plan chunk
  if (members.size() != ranks) throw std::logic_error("executed_schedule: a member per rank is needed");
  Schedule schedule(kind, size_bytes, members, per_member, plan.name.empty() ? "mscclpp plan" : plan.name);
  const std::uint32_t count = schedule.chunk_count();
  std::vector<ChunkId> chunks;
  for (const ObservedTransfer& transfer : execution.transfers) {
    chunks.clear();
    for (int k = 0; k < transfer.chunks; ++k) {
      for (std::uint32_t part = 0; part < split; ++part) {
        chunks.push_back(
            static_cast<ChunkId>((static_cast<std::uint64_t>(transfer.first_chunk + k) * split + part) % count));
      }
    }
    schedule.add(members[static_cast<std::size_t>(transfer.src_rank)],
                 members[static_cast<std::size_t>(transfer.dst_rank)], TransferKind::kCopy, chunks, transfer.deps, 0.0,
                 0.0);
  }
  return schedule;
}

}  // namespace mscclpp_detail

}  // namespace tenet
