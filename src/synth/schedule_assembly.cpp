#include "schedule_assembly.hpp"

#include <tbb/parallel_for.h>

namespace tenet::synth {
namespace {

double to_us(Tick ticks) { return static_cast<double>(ticks) / kTicksPerUs; }

/// Exclusive prefix sums of `counts` (one more entry than counts: the total last).
std::vector<std::uint64_t> offsets_of(const std::vector<std::uint32_t>& counts) {
  std::vector<std::uint64_t> offsets(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) offsets[i + 1] = offsets[i] + counts[i];
  return offsets;
}

}  // namespace

Topology transpose(const Topology& topology) {
  Topology reversed(topology.npu_count(), topology.switch_names());
  reversed.name = topology.name;
  reversed.description = topology.description;
  reversed.original_npu_ids = topology.original_npu_ids;
  for (const Link& link : topology.links()) reversed.add_link({link.dst, link.src, link.latency_us, link.bandwidth_GBps});
  return reversed;
}

void append_all_gather(Schedule& schedule, const Topology& topology, const AllGatherTrace& trace, Tick offset,
                       const std::vector<std::vector<TransferId>>& ready) {
  const auto& forward = trace.transfers;
  const std::size_t count = forward.size();
  std::vector<std::uint32_t> dep_counts(count);
  for (std::size_t i = 0; i < count; ++i) {
    const MatchedTransfer& transfer = forward[i];
    dep_counts[i] = transfer.feeder != kNotDelivered ? 1
                    : ready.empty()                 ? 0
                                                    : static_cast<std::uint32_t>(ready[transfer.chunk].size());
  }
  const std::vector<std::uint64_t> dep_offsets = offsets_of(dep_counts);
  Schedule::Extension room = schedule.extend(count, count, dep_offsets.back());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 4096), [&](const auto& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      const MatchedTransfer& transfer = forward[i];
      const Link& link = topology.link(transfer.link);
      Transfer& out = room.transfers[i];
      out.src = link.src;
      out.dst = link.dst;
      out.link = transfer.link;
      out.kind = TransferKind::kCopy;
      out.start_us = to_us(offset + transfer.start);
      out.end_us = to_us(offset + transfer.start + trace.link_ticks[transfer.link]);
      out.chunk_begin = room.chunk_base + i;
      out.chunk_count = 1;
      room.chunk_ids[i] = transfer.chunk;
      out.dep_begin = room.dep_base + dep_offsets[i];
      out.dep_count = dep_counts[i];
      if (transfer.feeder != kNotDelivered) {
        room.dep_ids[dep_offsets[i]] = room.first_id + transfer.feeder;
      } else if (!ready.empty()) {
        std::copy(ready[transfer.chunk].begin(), ready[transfer.chunk].end(), room.dep_ids.begin() + static_cast<std::ptrdiff_t>(dep_offsets[i]));
      }
    }
  });
}

std::vector<std::vector<TransferId>> append_reduce_scatter(Schedule& schedule, const Topology& topology,
                                                           const AllGatherTrace& transposed_trace) {
  const auto& forward = transposed_trace.transfers;
  const std::size_t count = forward.size();
  // children[i]: the forward transfers that sent on what transfer i delivered. Reversed, they are
  // the reductions that must reach a node before it passes its partial sum on.
  std::vector<std::uint32_t> child_counts(count, 0);
  for (const MatchedTransfer& transfer : forward) {
    if (transfer.feeder != kNotDelivered) ++child_counts[transfer.feeder];
  }
  const std::vector<std::uint64_t> child_offsets = offsets_of(child_counts);
  std::vector<std::uint32_t> children(child_offsets.back());
  {
    std::vector<std::uint64_t> fill(child_offsets.begin(), child_offsets.end() - 1);
    for (std::size_t j = 0; j < count; ++j) {
      if (forward[j].feeder != kNotDelivered) children[fill[forward[j].feeder]++] = static_cast<std::uint32_t>(j);
    }
  }

  // Reduce-scatter transfer k is the reversal of forward transfer count-1-k, so reversed
  // dependencies (on children, which came later forward) point to earlier transfers.
  std::vector<std::uint32_t> dep_counts(count);
  for (std::size_t k = 0; k < count; ++k) dep_counts[k] = child_counts[count - 1 - k];
  const std::vector<std::uint64_t> dep_offsets = offsets_of(dep_counts);
  Schedule::Extension room = schedule.extend(count, count, dep_offsets.back());
  const Tick finish = transposed_trace.finish;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 4096), [&](const auto& range) {
    for (std::size_t k = range.begin(); k != range.end(); ++k) {
      const std::size_t i = count - 1 - k;
      const MatchedTransfer& transfer = forward[i];
      // On the transpose, link l runs from topology's link l destination to its source.
      const Link& link = topology.link(transfer.link);
      const Tick end = finish - transfer.start;
      Transfer& out = room.transfers[k];
      out.src = link.src;
      out.dst = link.dst;
      out.link = transfer.link;
      out.kind = TransferKind::kReduce;
      out.start_us = to_us(end - transposed_trace.link_ticks[transfer.link]);
      out.end_us = to_us(end);
      out.chunk_begin = room.chunk_base + k;
      out.chunk_count = 1;
      room.chunk_ids[k] = transfer.chunk;
      out.dep_begin = room.dep_base + dep_offsets[k];
      out.dep_count = dep_counts[k];
      for (std::uint64_t c = child_offsets[i]; c < child_offsets[i + 1]; ++c) {
        room.dep_ids[dep_offsets[k] + (c - child_offsets[i])] =
            room.first_id + static_cast<TransferId>(count - 1 - children[c]);
      }
    }
  });
  std::vector<std::vector<TransferId>> into_owner(transposed_trace.chunk_count);
  for (std::size_t i = count; i-- > 0;) {
    if (forward[i].feeder == kNotDelivered) {
      into_owner[forward[i].chunk].push_back(room.first_id + static_cast<TransferId>(count - 1 - i));
    }
  }
  return into_owner;
}

}  // namespace tenet::synth
