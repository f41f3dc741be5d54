// SPDX-License-Identifier: MIT
// Fitting a schedule's concurrency into the runtime's channels and threadblocks. A connection
// (sender, receiver, channel) runs its transfers one after the other, so k transfers in flight
// between one pair of ranks need k channels, and every (peer, channel, direction) is a
// threadblock. A schedule retimed on a real network (an unwound plan replayed through the
// switches) can have dozens in flight between one pair; MSCCL has 32 channels and 216
// threadblocks per rank. Here the transfers of each pair are dealt in start order onto at most
// `lanes` lanes, each waiting for the one before it on its lane, and the schedule is retimed by
// the simulator: the serialization MSCCL forces, made explicit and timed, so the layout stays
// within the limits and the cost shows in the file's time. Likewise a transfer of chunks that are
// not consecutive is several steps, one after the other.

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <span>
#include <stdexcept>

#include "tenet/schedule/effective_times.hpp"
#include "tenet/sim/simulator.hpp"
#include "writer.hpp"

namespace tenet::msccl_detail {

int lanes_needed(const Schedule& schedule, const EffectiveTimes& times) {
  std::map<std::pair<NodeId, NodeId>, std::vector<double>> lane_ends;
  std::size_t most = 1;
  for (TransferId id : times.by_start) {
    std::vector<double>& ends = lane_ends[{schedule.src(id), schedule.dst(id)}];
    const auto free = std::find_if(ends.begin(), ends.end(), [&](double end) { return end <= times.start[id]; });
    if (free == ends.end())
      ends.push_back(times.end[id]);
    else
      *free = times.end[id];
    most = std::max(most, ends.size());
  }
  return static_cast<int>(most);
}

Schedule serialized_pairs(const Schedule& schedule, const EffectiveTimes& times, const Topology& topology, int lanes) {
  const std::size_t count = schedule.size();
  constexpr TransferId kNone = ~TransferId{0};
  std::map<std::pair<NodeId, NodeId>, std::vector<TransferId>> last_on_lane;
  std::vector<TransferId> lane_before(count, kNone);
  for (TransferId id : times.by_start) {
    std::vector<TransferId>& last = last_on_lane[{schedule.src(id), schedule.dst(id)}];
    // A free lane (the one released last), else a new one, else the lane that frees first.
    std::size_t chosen = last.size();
    for (std::size_t lane = 0; lane < last.size(); ++lane) {
      if (times.end[last[lane]] > times.start[id]) continue;
      if (chosen == last.size() || times.end[last[lane]] > times.end[last[chosen]]) chosen = lane;
    }
    if (chosen == last.size() && last.size() < static_cast<std::size_t>(lanes)) {
      last.push_back(id);
      continue;
    }
    if (chosen == last.size()) {
      chosen = static_cast<std::size_t>(
          std::min_element(last.begin(), last.end(),
                           [&](TransferId a, TransferId b) { return times.end[a] < times.end[b]; }) -
          last.begin());
    }
    // Also on a lane that is free now: once delays propagate, the lane must still be one at a time.
    lane_before[id] = last[chosen];
    last[chosen] = id;
  }

  // Dependencies must point to smaller ids: renumber in an order that respects the old ones and
  // the lanes, earliest start first.
  std::vector<std::uint32_t> waiting(count, 0);
  std::vector<std::vector<TransferId>> followers(count);
  for (TransferId id = 0; id < count; ++id) {
    for (TransferId dep : schedule.deps_of(id)) {
      ++waiting[id];
      followers[dep].push_back(id);
    }
    if (lane_before[id] != kNone) {
      ++waiting[id];
      followers[lane_before[id]].push_back(id);
    }
  }
  using Ready = std::pair<double, TransferId>;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (TransferId id = 0; id < count; ++id) {
    if (waiting[id] == 0) ready.push({times.start[id], id});
  }
  std::vector<TransferId> new_id(count, kNone);
  std::vector<TransferId> order;
  order.reserve(count);
  while (!ready.empty()) {
    const TransferId id = ready.top().second;
    ready.pop();
    new_id[id] = static_cast<TransferId>(order.size());
    order.push_back(id);
    for (TransferId next : followers[id]) {
      if (--waiting[next] == 0) ready.push({times.start[next], next});
    }
  }
  if (order.size() != count) throw std::logic_error("serializing a schedule's pairs made its dependencies cyclic");

  Schedule serialized = schedule.empty_like(schedule.chunks_per_member());
  std::vector<TransferId> deps;
  for (TransferId id : order) {
    const Transfer transfer = schedule.transfer(id);
    deps.clear();
    for (TransferId dep : schedule.deps_of(transfer)) deps.push_back(new_id[dep]);
    if (lane_before[id] != kNone) deps.push_back(new_id[lane_before[id]]);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    serialized.add(transfer.src, transfer.dst, transfer.kind, schedule.chunks_of(transfer), deps, transfer.start_us,
                   transfer.end_us, schedule.planned_link(id));
  }
  SimOptions options;
  options.record_times = true;
  const SimResult replay = simulate(topology, serialized, options);
  serialized.retime(replay.start_us, replay.end_us);
  return serialized;
}

std::size_t consecutive_runs(std::span<const ChunkId> chunks) {
  std::size_t count = chunks.empty() ? 0 : 1;
  for (std::size_t i = 1; i < chunks.size(); ++i) count += chunks[i] == chunks[i - 1] + 1 ? 0 : 1;
  return count;
}

std::optional<Schedule> one_transfer_per_step(const Schedule& schedule, const Topology& topology) {
  // Up to a step's worth of chunks, the layout stages chunks that lie apart through scratch and
  // sends them in one step; only larger transfers go as a step per run.
  const auto runs = [&](TransferId id) {
    const std::span<const ChunkId> chunks = schedule.chunks_of(schedule.transfer(id));
    return chunks.size() <= static_cast<std::size_t>(kMaxCount) ? std::size_t{1} : consecutive_runs(chunks);
  };
  bool cut = false;
  for (TransferId id = 0; id < schedule.size() && !cut; ++id) cut = runs(id) > 1;
  if (!cut) return std::nullopt;

  Schedule stepped = schedule.empty_like(schedule.chunks_per_member());
  // Transfers keep their order, so dependencies (on the last step of a cut transfer) still point
  // to earlier ones.
  std::vector<TransferId> last_step(schedule.size());
  std::vector<TransferId> deps;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    const std::span<const ChunkId> chunks = schedule.chunks_of(transfer);
    const LinkId planned = schedule.planned_link(id);
    deps.clear();
    for (TransferId dep : schedule.deps_of(transfer)) deps.push_back(last_step[dep]);
    const double share =
        (transfer.end_us - transfer.start_us) / static_cast<double>(std::max<std::size_t>(1, runs(id)));
    double start = transfer.start_us;
    std::size_t begin = 0;
    while (true) {
      std::size_t end = begin + 1;
      while (end < chunks.size() && chunks[end] == chunks[end - 1] + 1) ++end;
      last_step[id] = stepped.add(transfer.src, transfer.dst, transfer.kind, chunks.subspan(begin, end - begin), deps,
                                  start, start + share, planned);
      if (end >= chunks.size()) break;
      deps.assign(1, last_step[id]);
      start += share;
      begin = end;
    }
  }
  SimOptions options;
  options.record_times = true;
  const SimResult replay = simulate(topology, stepped, options);
  stepped.retime(replay.start_us, replay.end_us);
  return stepped;
}

Schedule split_chunks(const Schedule& schedule, std::uint32_t pieces) {
  Schedule split = schedule.empty_like(schedule.chunks_per_member() * pieces);
  // Piece j of chunk c is chunk c * pieces + j: a member's chunks stay its own, in order. Piece j
  // of a transfer waits for piece j of what the transfer waited for, so the pieces run as
  // `pieces` copies of the schedule side by side, which the channels keep apart.
  std::vector<TransferId> deps;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    const std::span<const ChunkId> chunks = schedule.chunks_of(transfer);
    if (chunks.size() != 1) throw std::logic_error("split_chunks: a transfer of several chunks");
    const LinkId planned = schedule.planned_link(id);
    for (std::uint32_t piece = 0; piece < pieces; ++piece) {
      deps.clear();
      for (TransferId dep : schedule.deps_of(transfer)) deps.push_back(dep * pieces + piece);
      const ChunkId chunk = chunks.front() * pieces + piece;
      split.add(transfer.src, transfer.dst, transfer.kind, std::span<const ChunkId>(&chunk, 1), deps, transfer.start_us,
                transfer.end_us, planned);
    }
  }
  return split;
}

std::optional<Schedule> calls_side_by_side(const Schedule& schedule, int max_allowed_count) {
  const auto most = static_cast<std::size_t>(std::max(1, max_allowed_count));
  bool over = false;
  for (TransferId id = 0; id < schedule.size() && !over; ++id) over = schedule.chunk_count(id) > most;
  if (!over) return std::nullopt;
  Schedule cut = schedule.empty_like(schedule.chunks_per_member());
  // Transfer t becomes the transfers first[t] .. first[t + 1] - 1; a dependency on t is one on
  // each of them.
  std::vector<TransferId> first(schedule.size() + 1, 0);
  // The pieces take lanes of their own, so the next transfer on a lane no longer waits for the
  // pieces on the others: torus-8x8 reduce-scatter of 64 MiB cut 57 chunks into 28 and 29, and the
  // next transfer on the first lane took the link's bandwidth from the 29 (0.8 us late, and all
  // that waited for it). So each transfer also waits for the one before it between the same pair
  // (a sender's order, kept by the layouts that keep the schedule's order).
  std::map<std::pair<NodeId, NodeId>, TransferId> before_on_pair;
  std::vector<TransferId> deps;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    deps.clear();
    const auto add_all_pieces = [&](TransferId dep) {
      for (TransferId piece = first[dep]; piece < first[dep + 1]; ++piece) deps.push_back(piece);
    };
    for (TransferId dep : schedule.deps_of(transfer)) add_all_pieces(dep);
    const auto [previous, is_first] = before_on_pair.try_emplace({transfer.src, transfer.dst}, id);
    if (!is_first) {
      const TransferId before = previous->second;
      if (schedule.transfer(before).end_us <= transfer.start_us) add_all_pieces(before);
      if (schedule.transfer(before).end_us <= transfer.end_us) previous->second = id;
    }
    const std::span<const ChunkId> chunks = schedule.chunks_of(transfer);
    // Equal parts (to a chunk), so that they end together.
    const std::size_t parts = (chunks.size() + most - 1) / most;
    const LinkId planned = schedule.planned_link(id);
    first[id] = static_cast<TransferId>(cut.size());
    for (std::size_t part = 0; part < parts; ++part) {
      const std::size_t from = part * chunks.size() / parts;
      const std::size_t to = (part + 1) * chunks.size() / parts;
      cut.add(transfer.src, transfer.dst, transfer.kind, chunks.subspan(from, to - from), deps, transfer.start_us,
              transfer.end_us, planned);
    }
    first[id + 1] = static_cast<TransferId>(cut.size());
  }
  return cut;
}

}  // namespace tenet::msccl_detail
