// SPDX-License-Identifier: MIT
#include "schedule_assembly.hpp"

#include <algorithm>
#include <atomic>
#include <span>

#include "tenet/common/parallel.hpp"
#include "tenet/common/uninitialized.hpp"

namespace tenet::synth {
namespace {

double to_us(Tick ticks) { return static_cast<double>(ticks) / kTicksPerUs; }

/// Transfers per parallel task while converting: large enough to amortize scheduling.
constexpr std::size_t kGrain = 4096;

/// Where a trace's transfers go on the schedule's topology: per link (or channel) of the trace,
/// the sender, the receiver and the value of the schedule's link column (the link, or the route
/// through switches, added to the schedule here).
struct Placement {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  std::vector<LinkId> planned;
};

/// `reversed`: the trace ran on the transpose, so each transfer runs the other way, over its
/// route's links in reverse order.
Placement place(Schedule& schedule, const Topology& topology, const AllGatherTrace& trace, bool reversed) {
  Placement placement;
  if (trace.channels.size() == 0) {
    // Link l of the transpose is link l of the topology turned around: reversed, it is link l.
    for (const Link& link : topology.links()) {
      placement.src.push_back(link.src);
      placement.dst.push_back(link.dst);
    }
    placement.planned.resize(topology.link_count());
    for (LinkId id = 0; id < topology.link_count(); ++id) placement.planned[id] = id;
    return placement;
  }
  const ChannelTable& channels = trace.channels;
  placement.src = reversed ? channels.dst : channels.src;
  placement.dst = reversed ? channels.src : channels.dst;
  placement.planned.resize(channels.size());
  std::vector<LinkId> route;
  for (std::uint32_t channel = 0; channel < channels.size(); ++channel) {
    const std::span<const LinkId> links = channels.route(channel);
    if (links.size() == 1) {
      placement.planned[channel] = links.front();
      continue;
    }
    route.assign(links.begin(), links.end());
    if (reversed) std::reverse(route.begin(), route.end());
    placement.planned[channel] = Schedule::on_route(schedule.add_route(route));
  }
  return placement;
}

/// Writes new transfer `i` of `room` and its one chunk; dependencies are the caller's.
void write_transfer(Schedule& schedule, const Schedule::Extension& room, std::size_t i, const Placement& placement,
                    const MatchedTransfer& transfer, TransferKind kind, std::uint32_t start_at, std::uint32_t end_at) {
  room.src[i] = placement.src[transfer.link];
  room.dst[i] = placement.dst[transfer.link];
  room.link[i] = placement.planned[transfer.link];
  room.kind[i] = kind;
  room.start_at[i] = start_at;
  room.end_at[i] = end_at;
  *schedule.chunk_slot(room.first_id + static_cast<TransferId>(i)) = transfer.chunk;
}

/// A grouped trace's transfers: entries [starts[g], starts[g + 1]) are group g's chunks.
std::vector<std::size_t> group_starts(const AllGatherTrace& trace) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < trace.transfers.size(); ++i) {
    if (i == 0 || trace.group_of[i] != trace.group_of[i - 1]) starts.push_back(i);
  }
  starts.push_back(trace.transfers.size());
  return starts;
}

/// Collects a transfer's dependencies once each, sorted: an aggregated transfer out of an owner
/// would otherwise list every reduction into it once per chunk it carries.
class DependencySet {
 public:
  explicit DependencySet(std::size_t transfers) : stamp_(transfers, 0) {}
  void clear() {
    ids_.clear();
    ++round_;
  }
  void add(TransferId id) {
    if (stamp_[id] == round_) return;
    stamp_[id] = round_;
    ids_.push_back(id);
  }
  std::span<const TransferId> sorted() {
    std::sort(ids_.begin(), ids_.end());
    return ids_;
  }

 private:
  std::vector<std::uint32_t> stamp_;
  std::uint32_t round_ = 0;
  std::vector<TransferId> ids_;
};

/// append_all_gather for a grouped trace: one transfer per group, carrying its chunks and
/// depending on every transfer that brought one of them. Aggregated traces are small (they pay
/// off where alphas dominate), so this goes transfer by transfer.
void append_grouped_all_gather(Schedule& schedule, const Topology& topology, AllGatherTrace& trace, Tick offset,
                               const std::vector<std::vector<TransferId>>& ready) {
  const Placement placement = place(schedule, topology, trace, false);
  const std::vector<std::size_t> starts = group_starts(trace);
  const TransferId first_id = static_cast<TransferId>(schedule.size());
  std::vector<TransferId> transfer_of(trace.transfers.size());
  std::vector<ChunkId> chunks;
  DependencySet deps(first_id + starts.size());
  for (std::size_t g = 0; g + 1 < starts.size(); ++g) {
    chunks.clear();
    deps.clear();
    for (std::size_t i = starts[g]; i < starts[g + 1]; ++i) {
      const MatchedTransfer& entry = trace.transfers[i];
      transfer_of[i] = first_id + static_cast<TransferId>(g);
      chunks.push_back(entry.chunk);
      if (entry.feeder != kNotDelivered) {
        deps.add(transfer_of[entry.feeder]);
      } else if (!ready.empty()) {
        for (TransferId id : ready[entry.chunk]) deps.add(id);
      }
    }
    std::sort(chunks.begin(), chunks.end());
    const MatchedTransfer& first = trace.transfers[starts[g]];
    schedule.add(placement.src[first.link], placement.dst[first.link], TransferKind::kCopy, chunks, deps.sorted(),
                 to_us(offset + trace.event_times[first.event]),
                 to_us(offset + trace.event_times[trace.end_event_of(starts[g])]), placement.planned[first.link]);
  }
  trace.transfers = TransferLog(trace.transfers.block_bits());
}

/// append_reduce_scatter for a grouped trace: each group reversed is one reduction of its chunks,
/// after every reversed forward of one of them.
std::vector<std::vector<TransferId>> append_grouped_reduce_scatter(Schedule& schedule, const Topology& topology,
                                                                   AllGatherTrace& trace) {
  const std::size_t count = trace.transfers.size();
  const std::vector<std::size_t> starts = group_starts(trace);
  const std::size_t groups = starts.size() - 1;
  std::vector<std::uint32_t> ordinal(count);
  for (std::size_t g = 0; g < groups; ++g) {
    for (std::size_t i = starts[g]; i < starts[g + 1]; ++i) ordinal[i] = static_cast<std::uint32_t>(g);
  }
  // Per group, the groups that forwarded what it delivered (reversed, the reductions it waits
  // for), in one flat array: group g's are children[child_offsets[g] .. child_offsets[g + 1]).
  std::vector<std::uint32_t> child_offsets(groups + 1, 0);
  for (std::size_t j = 0; j < count; ++j) {
    const std::uint32_t feeder = trace.transfers[j].feeder;
    if (feeder != kNotDelivered) ++child_offsets[ordinal[feeder] + 1];
  }
  for (std::size_t g = 0; g < groups; ++g) child_offsets[g + 1] += child_offsets[g];
  std::vector<std::uint32_t> children(child_offsets.back());
  {
    std::vector<std::uint32_t> fill(child_offsets.begin(), child_offsets.end() - 1);
    for (std::size_t j = 0; j < count; ++j) {
      const std::uint32_t feeder = trace.transfers[j].feeder;
      if (feeder != kNotDelivered) children[fill[ordinal[feeder]]++] = ordinal[j];
    }
  }
  const Placement placement = place(schedule, topology, trace, true);
  const TransferId first_id = static_cast<TransferId>(schedule.size());
  std::vector<std::vector<TransferId>> into_owner(trace.chunk_count);
  std::vector<ChunkId> chunks;
  DependencySet deps(first_id + groups);
  for (std::size_t g = groups; g-- > 0;) {
    const TransferId id = first_id + static_cast<TransferId>(groups - 1 - g);
    chunks.clear();
    deps.clear();
    for (std::uint32_t c = child_offsets[g]; c < child_offsets[g + 1]; ++c) {
      deps.add(first_id + static_cast<TransferId>(groups - 1 - children[c]));
    }
    for (std::size_t i = starts[g]; i < starts[g + 1]; ++i) {
      const MatchedTransfer& entry = trace.transfers[i];
      chunks.push_back(entry.chunk);
      if (entry.feeder == kNotDelivered) into_owner[entry.chunk].push_back(id);
    }
    std::sort(chunks.begin(), chunks.end());
    const MatchedTransfer& first = trace.transfers[starts[g]];
    schedule.add(placement.src[first.link], placement.dst[first.link], TransferKind::kReduce, chunks, deps.sorted(),
                 to_us(trace.finish - trace.event_times[trace.end_event_of(starts[g])]),
                 to_us(trace.finish - trace.event_times[first.event]), placement.planned[first.link]);
  }
  trace.transfers = TransferLog(trace.transfers.block_bits());
  return into_owner;
}

}  // namespace

Topology transpose(const Topology& topology) {
  Topology reversed(topology.npu_count(), topology.switch_names());
  reversed.name = topology.name;
  reversed.description = topology.description;
  reversed.original_npu_ids = topology.original_npu_ids;
  for (const Link& link : topology.links())
    reversed.add_link({link.dst, link.src, link.latency_us, link.bandwidth_GBps});
  return reversed;
}

void append_all_gather(Schedule& schedule, const Topology& topology, AllGatherTrace& trace, Tick offset,
                       const std::vector<std::vector<TransferId>>& ready) {
  if (trace.grouped()) {
    append_grouped_all_gather(schedule, topology, trace, offset, ready);
    return;
  }
  std::vector<double> times(trace.event_times.size());
  for (std::size_t e = 0; e < times.size(); ++e) times[e] = to_us(offset + trace.event_times[e]);
  const std::uint32_t time_base = schedule.add_times(times);
  const TransferId first_id = static_cast<TransferId>(schedule.size());
  const std::size_t count = trace.transfers.size();
  const Placement placement = place(schedule, topology, trace, false);
  std::vector<std::uint32_t> dep_counts;
  for (std::size_t b = 0; b < trace.transfers.block_count(); ++b) {
    const std::size_t begin = trace.transfers.block_begin(b);
    const std::size_t n = std::min(trace.transfers.block_size(), count - begin);
    dep_counts.resize(n);
    parallel_for_range(std::size_t{0}, n, kGrain, [&](std::size_t first, std::size_t last) {
      for (std::size_t i = first; i != last; ++i) {
        const MatchedTransfer& transfer = trace.transfers[begin + i];
        dep_counts[i] = transfer.feeder != kNotDelivered ? 1
                        : ready.empty()                  ? 0
                                                         : static_cast<std::uint32_t>(ready[transfer.chunk].size());
      }
    });
    const Schedule::Extension room = schedule.extend(n, dep_counts);
    parallel_for_range(std::size_t{0}, n, kGrain, [&](std::size_t first, std::size_t last) {
      for (std::size_t i = first; i != last; ++i) {
        const MatchedTransfer& transfer = trace.transfers[begin + i];
        const TransferId id = room.first_id + static_cast<TransferId>(i);
        write_transfer(schedule, room, i, placement, transfer, TransferKind::kCopy, time_base + transfer.event,
                       time_base + trace.end_event_of(begin + i));
        if (transfer.feeder != kNotDelivered) {
          *schedule.dep_slots(id) = first_id + transfer.feeder;
        } else if (!ready.empty()) {
          std::copy(ready[transfer.chunk].begin(), ready[transfer.chunk].end(), schedule.dep_slots(id));
        }
      }
    });
    trace.transfers.release_block(b);
  }
}

std::vector<std::vector<TransferId>> append_reduce_scatter(Schedule& schedule, const Topology& topology,
                                                           AllGatherTrace& transposed_trace) {
  AllGatherTrace& trace = transposed_trace;
  if (trace.grouped()) return append_grouped_reduce_scatter(schedule, topology, trace);
  const std::size_t count = trace.transfers.size();
  // children[i]: the forward transfers that sent on what transfer i delivered. Reversed, they are
  // the reductions that must reach a node before it passes its partial sum on. Fewer than 2^32
  // transfers, so 32-bit offsets.
  // Filled in parallel with atomic counters, then each short list sorted so the order does not
  // depend on the threads.
  std::vector<std::uint32_t> child_offsets(count + 1, 0);
  parallel_for_range(std::size_t{0}, count, kGrain, [&](std::size_t first, std::size_t last) {
    for (std::size_t j = first; j != last; ++j) {
      const std::uint32_t feeder = trace.transfers[j].feeder;
      if (feeder != kNotDelivered) std::atomic_ref(child_offsets[feeder + 1]).fetch_add(1, std::memory_order_relaxed);
    }
  });
  for (std::size_t i = 0; i < count; ++i) child_offsets[i + 1] += child_offsets[i];
  UninitializedVector<std::uint32_t> children(child_offsets.back());
  {
    std::vector<std::uint32_t> fill(child_offsets.begin(), child_offsets.end() - 1);
    parallel_for_range(std::size_t{0}, count, kGrain, [&](std::size_t first, std::size_t last) {
      for (std::size_t j = first; j != last; ++j) {
        const std::uint32_t feeder = trace.transfers[j].feeder;
        if (feeder == kNotDelivered) continue;
        children[std::atomic_ref(fill[feeder]).fetch_add(1, std::memory_order_relaxed)] = static_cast<std::uint32_t>(j);
      }
    });
    parallel_for_range(std::size_t{0}, count, kGrain, [&](std::size_t first, std::size_t last) {
      for (std::size_t i = first; i != last; ++i) {
        std::sort(children.begin() + child_offsets[i], children.begin() + child_offsets[i + 1]);
      }
    });
  }

  // Reduce-scatter transfer k is the reversal of forward transfer count-1-k, so reversed
  // dependencies (on children, which came later forward) point to earlier transfers. Time t
  // forward is finish - t reversed: a transfer's reversed start is its forward end.
  std::vector<double> times(trace.event_times.size());
  for (std::size_t e = 0; e < times.size(); ++e) times[e] = to_us(trace.finish - trace.event_times[e]);
  const std::uint32_t time_base = schedule.add_times(times);
  const TransferId first_id = static_cast<TransferId>(schedule.size());
  const Placement placement = place(schedule, topology, trace, true);
  std::vector<std::vector<TransferId>> into_owner(trace.chunk_count);
  std::vector<std::uint32_t> dep_counts;
  // Forward blocks from the last: reduce-scatter ids grow as forward indices fall.
  for (std::size_t b = trace.transfers.block_count(); b-- > 0;) {
    const std::size_t begin = trace.transfers.block_begin(b);
    const std::size_t end = std::min(begin + trace.transfers.block_size(), count);
    const std::size_t n = end - begin;
    dep_counts.resize(n);
    parallel_for_range(std::size_t{0}, n, kGrain, [&](std::size_t first, std::size_t last) {
      for (std::size_t k = first; k != last; ++k) {
        const std::size_t i = end - 1 - k;
        dep_counts[k] = child_offsets[i + 1] - child_offsets[i];
      }
    });
    const Schedule::Extension room = schedule.extend(n, dep_counts);
    parallel_for_range(std::size_t{0}, n, kGrain, [&](std::size_t first, std::size_t last) {
      for (std::size_t k = first; k != last; ++k) {
        const std::size_t i = end - 1 - k;
        const MatchedTransfer& transfer = trace.transfers[i];
        // On the transpose, link l runs from topology's link l destination to its source: the
        // reversal runs on link l as `topology` has it.
        write_transfer(schedule, room, k, placement, transfer, TransferKind::kReduce, time_base + trace.end_event_of(i),
                       time_base + transfer.event);
        TransferId* deps = schedule.dep_slots(room.first_id + static_cast<TransferId>(k));
        for (std::uint32_t c = child_offsets[i]; c < child_offsets[i + 1]; ++c) {
          *deps++ = first_id + static_cast<TransferId>(count - 1 - children[c]);
        }
      }
    });
    for (std::size_t k = 0; k < n; ++k) {
      const MatchedTransfer& transfer = trace.transfers[end - 1 - k];
      if (transfer.feeder == kNotDelivered)
        into_owner[transfer.chunk].push_back(room.first_id + static_cast<TransferId>(k));
    }
    trace.transfers.release_block(b);
  }
  return into_owner;
}

}  // namespace tenet::synth
