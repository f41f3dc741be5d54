// The survey: structural checks (everything decidable from one transfer at a time, before any data
// moves), reported in transfer order so the first problem of the earliest bad transfer wins, plus
// the facts later passes need, gathered in the same walk.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "verify_internal.hpp"

namespace tenet::verify_detail {
namespace {

std::string topology_size(const Topology& topology) {
  std::string size = cat(topology.npu_count(), " NPUs");
  if (topology.switch_count() > 0) size += cat(" and ", topology.switch_count(), " switches");
  return size;
}

/// "" when `node` is an NPU of the topology.
std::string endpoint_problem(const Topology& topology, TransferId id, NodeId node, const char* role) {
  if (topology.is_npu(node)) return "";
  if (node >= topology.node_count()) {
    return cat("transfer ", id, ": ", role, " node ", node, " does not exist (the topology has ",
               topology_size(topology), ")");
  }
  return cat("transfer ", id, ": ", role, " is ", topology.node_label(node), ", not an NPU (switches hold no data)");
}

std::string schedule_problem(const Topology& topology, const Schedule& schedule) {
  const std::vector<NodeId>& members = schedule.members();
  if (members.empty()) return "the schedule has no members";
  if (schedule.chunks_per_member() == 0) return "the schedule has 0 chunks per member";
  if (static_cast<std::uint64_t>(members.size()) * schedule.chunks_per_member() > UINT32_MAX) {
    return cat("the schedule has ", members.size(), " members x ", schedule.chunks_per_member(),
               " chunks, more than tenet supports (at most ", UINT32_MAX, " chunks)");
  }
  std::vector<bool> is_member(topology.npu_count(), false);
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i] >= topology.npu_count()) {
      return cat("member ", i, " is NPU id ", members[i], ", but the topology has ", topology.npu_count(),
                 " NPUs (ids 0 to ", topology.npu_count() - 1, ")");
    }
    if (is_member[members[i]]) return cat(topology.node_label(members[i]), " is listed twice among the members");
    is_member[members[i]] = true;
  }
  if (schedule.size() > kMaxTransfers) {
    return cat("the schedule has ", schedule.size(), " transfers, more than the verifier supports (at most ",
               kMaxTransfers, ")");
  }
  return "";
}

/// The first problem of one transfer, or "".
std::string transfer_problem(const Topology& topology, const Schedule& schedule, TransferId id,
                             std::vector<TransferId>& seen_in) {
  const Transfer& transfer = schedule.transfer(id);
  if (std::string problem = endpoint_problem(topology, id, transfer.src, "source"); !problem.empty()) return problem;
  if (std::string problem = endpoint_problem(topology, id, transfer.dst, "destination"); !problem.empty()) return problem;
  if (transfer.src == transfer.dst) return cat("transfer ", id, ": ", topology.node_label(transfer.src), " sends to itself");
  // Built only for a message: a schedule has millions of transfers and (almost) no problems.
  const auto label = [&] { return transfer_label(topology, schedule, id); };
  if (transfer.chunk_count == 0) return cat(label(), ": moves no chunks");
  const ChunkId chunk_count = schedule.chunk_count();
  for (ChunkId chunk : schedule.chunks_of(transfer)) {
    if (chunk >= chunk_count) {
      return cat(transfer_label(topology, schedule, id, chunk), ": chunk ", chunk, " does not exist (the schedule has ",
                 chunk_count, " chunks)");
    }
    if (seen_in[chunk] == id + 1) return cat(transfer_label(topology, schedule, id, chunk), ": chunk ", chunk, " is listed twice");
    seen_in[chunk] = id + 1;
  }
  if (transfer.kind != TransferKind::kCopy && transfer.kind != TransferKind::kReduce) {
    return cat(label(), ": unknown transfer kind ", static_cast<int>(transfer.kind));
  }
  if (schedule.collective() == CollectiveKind::kAllGather && transfer.kind == TransferKind::kReduce) {
    return cat(label(), ": a reduce in an all-gather (all-gather moves copies only)");
  }
  if (schedule.collective() == CollectiveKind::kReduceScatter && transfer.kind == TransferKind::kCopy) {
    return cat(label(), ": a copy in a reduce-scatter (reduce-scatter moves reduces only)");
  }
  for (TransferId dep : schedule.deps_of(transfer)) {
    if (dep >= id) return cat(label(), ": dependency ", dep, " is not an earlier transfer");
  }
  if (!std::isfinite(transfer.start_us) || transfer.start_us < 0.0) {
    return cat(label(), ": starts at ", transfer.start_us, " us (times must be finite and >= 0)");
  }
  if (!std::isfinite(transfer.end_us) || transfer.end_us < 0.0) {
    return cat(label(), ": ends at ", transfer.end_us, " us (times must be finite and >= 0)");
  }
  if (!time_leq(transfer.start_us, transfer.end_us)) {
    return cat(label(), ": ends at ", transfer.end_us, " us, before it starts at ", transfer.start_us, " us");
  }
  if (transfer.link != kNoLink) {
    if (transfer.link >= topology.link_count()) {
      return cat(label(), ": planned link ", transfer.link, " does not exist (the topology has ", topology.link_count(),
                 " links)");
    }
    const Link& link = topology.link(transfer.link);
    if (link.src != transfer.src || link.dst != transfer.dst) {
      return cat(label(), ": planned link ", transfer.link, " goes ", topology.node_label(link.src), " -> ",
                 topology.node_label(link.dst), ", not ", topology.node_label(transfer.src), " -> ",
                 topology.node_label(transfer.dst));
    }
  }
  return "";
}

}  // namespace

Survey survey_schedule(const Topology& topology, const Schedule& schedule) {
  Survey survey;
  survey.problem = schedule_problem(topology, schedule);
  if (!survey.problem.empty()) return survey;
  SlotRows& rows = survey.rows;
  rows.row_of.assign(topology.npu_count(), SlotRows::kNoRow);
  for (NodeId member : schedule.members()) rows.row_of[member] = rows.rows++;
  const std::size_t count = schedule.size();
  survey.links_planned = count != 0;
  // seen_in[c] == id + 1 while transfer `id` is checked: finds a chunk listed twice in O(chunks).
  std::vector<TransferId> seen_in(schedule.chunk_count(), 0);
  for (TransferId id = 0; id < count; ++id) {
    survey.problem = transfer_problem(topology, schedule, id, seen_in);
    if (!survey.problem.empty()) return survey;
    const Transfer transfer = schedule.transfer(id);
    if (rows.row_of[transfer.src] == SlotRows::kNoRow) rows.row_of[transfer.src] = rows.rows++;
    if (rows.row_of[transfer.dst] == SlotRows::kNoRow) rows.row_of[transfer.dst] = rows.rows++;
    survey.links_planned = survey.links_planned && transfer.link != kNoLink;
    survey.starts_sorted = survey.starts_sorted && (id == 0 || schedule.start_us(id - 1) <= transfer.start_us);
    survey.times_monotone = survey.times_monotone && transfer.start_us <= transfer.end_us;
    for (TransferId dep : schedule.deps_of(transfer)) {
      survey.times_monotone = survey.times_monotone && schedule.end_us(dep) <= transfer.start_us;
    }
    survey.chunk_entries += transfer.chunk_count;
  }
  return survey;
}

}  // namespace tenet::verify_detail
