// SPDX-License-Identifier: MIT
// What both all-gather engines share: their starting state, and the finishing of a trace (feeders
// and the pruning of unforwarded relays).

#include <algorithm>

#include "all_gather_engine.hpp"
#include "tenet/common/parallel.hpp"

namespace tenet::synth {

std::uint32_t initial_chunk_state(const AllGatherProblem& problem, std::uint32_t nodes, std::uint32_t chunks,
                                  std::size_t words, std::vector<std::uint64_t>& holds,
                                  std::vector<std::uint64_t>& have, std::vector<std::uint32_t>& held_count,
                                  std::vector<std::uint32_t>& have_count, std::vector<char>& is_member) {
  const std::size_t slots = static_cast<std::size_t>(nodes) * words;
  holds.assign(slots, 0);
  have.assign(slots, 0);
  const std::uint64_t tail = chunks % 64 == 0 ? 0 : ~std::uint64_t{0} << (chunks % 64);
  for (NodeId v = 0; v < nodes; ++v) have[static_cast<std::size_t>(v) * words + words - 1] |= tail;
  held_count.assign(nodes, 0);
  have_count.assign(nodes, 0);
  is_member.assign(nodes, 0);
  for (NodeId member : problem.members) is_member[member] = 1;
  for (ChunkId chunk = 0; chunk < chunks; ++chunk) {
    const NodeId owner = problem.members[chunk / problem.chunks_per_member];
    const std::size_t at = static_cast<std::size_t>(owner) * words + chunk / 64;
    holds[at] |= std::uint64_t{1} << (chunk % 64);
    have[at] |= std::uint64_t{1} << (chunk % 64);
    ++held_count[owner];
    ++have_count[owner];
  }
  std::uint32_t unfinished = 0;
  for (NodeId member : problem.members) unfinished += held_count[member] == chunks ? 0 : 1;
  return unfinished;
}

/// Gives every transfer its feeder: the transfer that brought its chunk to its source. Done
/// once at the end, NPU by NPU in parallel: each NPU's arrivals and departures are bucketed
/// together, so the lookup table is one NPU's chunks (cache-resident), not every (NPU, chunk).
void link_feeders(TransferLog& transfers, std::uint32_t nodes, std::uint32_t chunks, std::span<const NodeId> src_of,
                  std::span<const NodeId> dst_of) {
  const std::size_t count = transfers.size();
  std::vector<std::uint64_t> in_offsets(nodes + 1, 0);
  std::vector<std::uint64_t> out_offsets(nodes + 1, 0);
  for (std::size_t i = 0; i < count; ++i) {
    ++in_offsets[dst_of[transfers[i].link] + 1];
    ++out_offsets[src_of[transfers[i].link] + 1];
  }
  for (NodeId v = 0; v < nodes; ++v) {
    in_offsets[v + 1] += in_offsets[v];
    out_offsets[v + 1] += out_offsets[v];
  }
  std::vector<std::uint32_t> arrivals(count);
  std::vector<std::uint32_t> departures(count);
  {
    std::vector<std::uint64_t> in_fill(in_offsets.begin(), in_offsets.end() - 1);
    std::vector<std::uint64_t> out_fill(out_offsets.begin(), out_offsets.end() - 1);
    for (std::size_t i = 0; i < count; ++i) {
      arrivals[in_fill[dst_of[transfers[i].link]]++] = static_cast<std::uint32_t>(i);
      departures[out_fill[src_of[transfers[i].link]]++] = static_cast<std::uint32_t>(i);
    }
  }
  ThreadLocal<std::vector<std::uint32_t>> tables([&] { return std::vector<std::uint32_t>(chunks, kNotDelivered); });
  parallel_for_range(NodeId{0}, nodes, 16, [&](NodeId first, NodeId last) {
    std::vector<std::uint32_t>& arrived_by = tables.local();
    for (NodeId u = first; u != last; ++u) {
      for (std::uint64_t k = in_offsets[u]; k < in_offsets[u + 1]; ++k) {
        arrived_by[transfers[arrivals[k]].chunk] = arrivals[k];
      }
      for (std::uint64_t k = out_offsets[u]; k < out_offsets[u + 1]; ++k) {
        MatchedTransfer& transfer = transfers[departures[k]];
        transfer.feeder = arrived_by[transfer.chunk];
      }
      for (std::uint64_t k = in_offsets[u]; k < in_offsets[u + 1]; ++k) {
        arrived_by[transfers[arrivals[k]].chunk] = kNotDelivered;
      }
    }
  });
}

/// Drops deliveries to relays that are never forwarded (walking backwards, a transfer is kept
/// when it feeds a member or a kept transfer), then renumbers.
void prune_unforwarded(AllGatherTrace& trace, TransferLog& transfers, std::span<const char> is_member,
                       std::span<const NodeId> dst_of) {
  if (std::all_of(is_member.begin(), is_member.end(), [](char member) { return member != 0; })) {
    trace.transfers = std::move(transfers);
    return;
  }
  const std::size_t count = transfers.size();
  std::vector<char> keep(count, 0);
  for (std::size_t i = count; i-- > 0;) {
    const MatchedTransfer& transfer = transfers[i];
    // A relay's delivery still in flight at the finish never arrived: it cannot be needed.
    if (!is_member[dst_of[transfer.link]] && !keep[i]) continue;
    keep[i] = 1;
    if (transfer.feeder != kNotDelivered) keep[transfer.feeder] = 1;
  }
  std::vector<std::uint32_t> new_index(count, kNotDelivered);
  trace.transfers = TransferLog(transfers.block_bits());
  // A group loses its pruned chunks and keeps its planned time: the replay can only be earlier.
  std::vector<std::uint32_t> group_of;
  for (std::size_t i = 0; i < count; ++i) {
    if (!keep[i]) continue;
    new_index[i] = static_cast<std::uint32_t>(trace.transfers.size());
    MatchedTransfer kept = transfers[i];
    if (kept.feeder != kNotDelivered) kept.feeder = new_index[kept.feeder];
    trace.transfers.push_back(kept);
    if (trace.grouped()) group_of.push_back(trace.group_of[i]);
  }
  if (trace.grouped()) trace.group_of = std::move(group_of);
}

}  // namespace tenet::synth
