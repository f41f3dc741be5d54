// verify_msccl_xml: the passes of internal.hpp in order, stopping at the first problem. The
// interpreter runs once per distinct call split, the finest (each step of cnt c as c calls, as with
// large buffers) first with race checking; the others can only change where FIFOs fill up.

#include <map>
#include <set>

#include "internal.hpp"

namespace tenet {
namespace msccl_detail {

std::string map_ranks(const MscclProgram& program, const Topology& topology, std::vector<NodeId>& npus) {
  npus.clear();
  if (program.rank_to_npu.empty()) {
    if (static_cast<std::uint32_t>(program.ngpus) != topology.npu_count()) {
      return "ngpus=\"" + std::to_string(program.ngpus) + "\" but topology '" + topology.name + "' has " +
             std::to_string(topology.npu_count()) + " NPUs, and no rank_to_npu comment maps ranks to some of them";
    }
    for (NodeId npu = 0; npu < topology.npu_count(); ++npu) npus.push_back(npu);
    return "";
  }
  if (program.rank_to_npu.size() != static_cast<std::size_t>(program.ngpus)) {
    return "the rank_to_npu comment lists " + std::to_string(program.rank_to_npu.size()) + " NPUs for ngpus=\"" +
           std::to_string(program.ngpus) + "\"";
  }
  std::map<NodeId, NodeId> by_file_id;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) by_file_id.emplace(topology.original_npu_id(npu), npu);
  std::set<NodeId> seen;
  for (std::size_t rank = 0; rank < program.rank_to_npu.size(); ++rank) {
    const NodeId file_id = program.rank_to_npu[rank];
    const auto found = by_file_id.find(file_id);
    if (found == by_file_id.end()) {
      return "rank_to_npu maps rank " + std::to_string(rank) + " to NPU " + std::to_string(file_id) + ", which topology '" +
             topology.name + "' does not have (or has failed)";
    }
    if (!seen.insert(file_id).second) return "rank_to_npu maps two ranks to NPU " + std::to_string(file_id);
    npus.push_back(found->second);
  }
  return "";
}

}  // namespace msccl_detail

MscclVerifyResult verify_msccl_xml(const std::string& text, const Topology* topology, bool check_races) {
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
    result.error = map_ranks(program, *topology, npus);
    if (!result.error.empty()) return result;
  }
  result.max_threadblocks = loaded.max_threadblocks;
  result.max_steps = loaded.max_steps;
  result.channels = program.nchannels;
  const std::vector<int> splits = distinct_splits(loaded);
  for (std::size_t i = 0; i < splits.size(); ++i) {
    const ExecutionOutcome outcome = execute_program(loaded, splits[i], check_races && i == 0);
    if (i == 0) result.races_checked = outcome.races_checked;
    if (!outcome.problem.empty()) {
      result.error = outcome.problem;
      return result;
    }
    ++result.splits_executed;
  }
  result.ok = true;
  return result;
}

}  // namespace tenet
