// SPDX-License-Identifier: MIT
// verify_msccl_xml: the passes of internal.hpp in order, stopping at the first problem. The
// interpreter runs once per distinct call split (in parallel), the finest (each step of cnt c as c
// calls, as with large buffers) with race checking; the others can only change where FIFOs fill up.

#include <map>
#include <set>

#include "internal.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/topology/routing.hpp"

namespace tenet {
namespace msccl_detail {
namespace {

/// Buffer slots of all ranks (about 24 bytes each in the interpreter) up to which a file's call
/// splits are executed in parallel: 100 MB a run.
constexpr double kSideBySideSlots = 4e6;

}  // namespace

std::string map_ranks(const MscclProgram& program, const Topology& topology, std::span<const NodeId> members,
                      std::vector<NodeId>& npus) {
  npus.clear();
  std::vector<NodeId> expected(members.begin(), members.end());
  if (expected.empty()) {
    for (NodeId npu = 0; npu < topology.npu_count(); ++npu) expected.push_back(npu);
  }
  // A file runs on a communicator of exactly its ranks: an 8-rank algorithm checked against a
  // 64-NPU topology says nothing about running there.
  if (static_cast<std::size_t>(program.ngpus) != expected.size()) {
    std::string message = "ngpus=\"" + std::to_string(program.ngpus) + "\" but ";
    if (members.empty()) {
      message += "topology '" + topology.name + "' has " + std::to_string(topology.npu_count()) +
                 " NPUs: the runtime runs a file only on a communicator of exactly its ranks; to check it on some of "
                 "the NPUs, give them with --members";
    } else {
      message += "--members lists " + std::to_string(members.size()) + " NPUs";
    }
    return message;
  }
  if (program.rank_to_npu.empty()) {
    npus = std::move(expected);
    return "";
  }
  if (program.rank_to_npu.size() != static_cast<std::size_t>(program.ngpus)) {
    return "the rank_to_npu comment lists " + std::to_string(program.rank_to_npu.size()) + " NPUs for ngpus=\"" +
           std::to_string(program.ngpus) + "\"";
  }
  std::map<NodeId, NodeId> by_file_id;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) by_file_id.emplace(topology.original_npu_id(npu), npu);
  const std::set<NodeId> allowed(expected.begin(), expected.end());
  std::set<NodeId> seen;
  for (std::size_t rank = 0; rank < program.rank_to_npu.size(); ++rank) {
    const NodeId file_id = program.rank_to_npu[rank];
    const auto found = by_file_id.find(file_id);
    if (found == by_file_id.end()) {
      return "rank_to_npu maps rank " + std::to_string(rank) + " to NPU " + std::to_string(file_id) +
             ", which topology '" + topology.name + "' does not have (or has failed)";
    }
    if (!seen.insert(file_id).second) return "rank_to_npu maps two ranks to NPU " + std::to_string(file_id);
    if (allowed.count(found->second) == 0) {
      return "rank_to_npu maps rank " + std::to_string(rank) + " to NPU " + std::to_string(file_id) +
             ", which is not one of --members";
    }
    npus.push_back(found->second);
  }
  return "";
}

std::string check_routes(const LoadedProgram& loaded, const Topology& topology, const std::vector<NodeId>& npus) {
  const Router router(topology);
  for (int rank = 0; rank < loaded.ranks; ++rank) {
    std::set<int> peers;
    for (const LoadedThreadblock& tb : loaded.by_rank[static_cast<std::size_t>(rank)].threadblocks) {
      if (tb.send >= 0) peers.insert(tb.send);
    }
    if (peers.empty()) continue;
    const RouteTree tree = router.tree_from(npus[static_cast<std::size_t>(rank)]);
    for (int peer : peers) {
      const NodeId to = npus[static_cast<std::size_t>(peer)];
      if (tree.hops[to] != ~std::uint32_t{0}) continue;
      return "rank " + std::to_string(rank) + " (NPU " +
             std::to_string(topology.original_npu_id(npus[static_cast<std::size_t>(rank)])) + ") sends to rank " +
             std::to_string(peer) + " (NPU " + std::to_string(topology.original_npu_id(to)) + "), but topology '" +
             topology.name + "' has no link or route between them";
    }
  }
  return "";
}

}  // namespace msccl_detail

MscclVerifyResult verify_msccl_xml(const std::string& text, const Topology* topology, bool check_races,
                                   std::span<const NodeId> members) {
  using namespace msccl_detail;
  MscclVerifyResult result;
  MscclProgram program;
  result.error = parse_program(text, program);
  if (!result.error.empty()) return result;
  result.coll = program.coll;
  result.protocol = msccl_protocol_name(program.protocol);
  result.in_place = program.in_place;
  result.ranks = program.ngpus;
  result.nchunksperloop = program.nchunksperloop;
  LoadedProgram loaded;
  result.error = load_program(program, loaded);
  result.beyond_limits = loaded.beyond_limits;
  if (!result.error.empty()) return result;
  if (topology != nullptr) {
    std::vector<NodeId> npus;
    result.error = map_ranks(program, *topology, members, npus);
    if (result.error.empty()) result.error = check_routes(loaded, *topology, npus);
    result.wrong_topology = !result.error.empty();
    if (!result.error.empty()) return result;
  }
  result.max_threadblocks = loaded.max_threadblocks;
  result.max_steps = loaded.max_steps;
  result.channels = program.nchannels;
  // Each split runs on its own (a 64-rank file of 1,024 chunks has 24); the first problem in
  // split order is the one reported, whatever the threads. A run holds every rank's buffers, so
  // only files whose buffers are small run their splits side by side (1,024 ranks of 32,767
  // chunks take about 2 GB a run).
  const std::vector<int> splits = distinct_splits(loaded);
  std::vector<ExecutionOutcome> outcomes(splits.size());
  const auto run = [&](std::size_t i) { outcomes[i] = execute_program(loaded, splits[i], check_races && i == 0); };
  double slots = 0.0;
  for (const LoadedRank& rank : loaded.by_rank)
    slots += static_cast<double>(rank.i_chunks) + rank.o_chunks + rank.s_chunks;
  if (slots <= kSideBySideSlots) {
    parallel_for(std::size_t{0}, splits.size(), run);
  } else {
    for (std::size_t i = 0; i < splits.size(); ++i) run(i);
  }
  for (std::size_t i = 0; i < splits.size(); ++i) {
    if (i == 0) result.races_checked = outcomes[i].races_checked;
    if (!outcomes[i].problem.empty()) {
      result.error = outcomes[i].problem;
      return result;
    }
    ++result.splits_executed;
  }
  result.ok = true;
  return result;
}

}  // namespace tenet
