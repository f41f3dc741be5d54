// SPDX-License-Identifier: MIT
// Where each chunk of each transfer is read and written (the mapping at the top of layout.cpp),
// from one replay of the schedule in the verifier's event order. It depends on the schedule and
// the call (in or out of place) only, so write.cpp computes it once and every layout it tries
// reads it.
#include <queue>
#include <utility>

#include "tenet/schedule/effective_times.hpp"
#include "writer.hpp"

namespace tenet::msccl_detail {

namespace {

bool own(const WriterContext& context, int rank, int chunk) { return chunk / context.per_rank == rank; }

}  // namespace

Location initial_place(const WriterContext& context, int rank, int chunk) {
  if (context.coll != CollectiveKind::kAllGather) return {MscclBuffer::kInput, chunk};
  if (!own(context, rank, chunk)) return {};
  return context.in_place ? Location{MscclBuffer::kOutput, chunk}
                          : Location{MscclBuffer::kInput, chunk - rank * context.per_rank};
}

Location work_place(const WriterContext& context, int rank, int chunk) {
  switch (context.coll) {
    case CollectiveKind::kAllGather: return {MscclBuffer::kOutput, chunk};
    case CollectiveKind::kAllReduce: return {context.in_place ? MscclBuffer::kInput : MscclBuffer::kOutput, chunk};
    case CollectiveKind::kReduceScatter:
      if (context.in_place) return {MscclBuffer::kInput, chunk};
      if (own(context, rank, chunk)) return {MscclBuffer::kOutput, chunk - rank * context.per_rank};
      return {MscclBuffer::kScratch, chunk < rank * context.per_rank ? chunk : chunk - context.per_rank};
  }
  return {};
}

ChunkPlaces place_chunks(const WriterContext& context) {
  const Schedule& schedule = *context.schedule;
  ChunkPlaces places;
  const std::size_t count = schedule.size();
  places.entry_base.assign(count + 1, 0);
  for (std::size_t t = 0; t < count; ++t)
    places.entry_base[t + 1] = places.entry_base[t] + schedule.transfer(static_cast<TransferId>(t)).chunk_count;
  const std::uint64_t entries = places.entry_base.back();
  places.read.assign(entries, {});
  places.write.assign(entries, {});
  places.operand.assign(entries, {});
  places.writer_of_read.assign(entries, kNoTransfer);
  places.written.assign(static_cast<std::size_t>(context.ranks) * static_cast<std::size_t>(context.chunks), 0);
  std::vector<TransferId> last_writer(places.written.size(), kNoTransfer);
  places.send_event.assign(count, 0);
  places.recv_event.assign(count, 0);

  EffectiveTimes times = effective_times(schedule);
  const std::vector<double>& start = times.start;
  const std::vector<double>& end = times.end;
  places.start_order = std::move(times.by_start);

  const auto home = [&](int rank, ChunkId chunk) {
    return places.written[context.slot(rank, chunk)] ? work_place(context, rank, static_cast<int>(chunk))
                                                     : initial_place(context, rank, static_cast<int>(chunk));
  };
  using Pending = std::pair<double, TransferId>;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
  std::uint64_t event = 0;
  const auto apply_end = [&](TransferId t) {
    const Transfer& transfer = schedule.transfer(t);
    const int rank = context.rank_of[transfer.dst];
    places.recv_event[t] = event++;
    const auto chunks = schedule.chunks_of(transfer);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const std::uint64_t e = places.entry_base[t] + i;
      const std::size_t slot = context.slot(rank, chunks[i]);
      places.operand[e] = home(rank, chunks[i]);
      places.write[e] = work_place(context, rank, static_cast<int>(chunks[i]));
      places.written[slot] = 1;
      last_writer[slot] = t;
    }
  };
  for (TransferId t : places.start_order) {
    while (!pending.empty() && pending.top().first <= start[t]) {
      const TransferId done = pending.top().second;
      pending.pop();
      apply_end(done);
    }
    const Transfer& transfer = schedule.transfer(t);
    const int rank = context.rank_of[transfer.src];
    places.send_event[t] = event++;
    const auto chunks = schedule.chunks_of(transfer);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const std::uint64_t e = places.entry_base[t] + i;
      places.read[e] = home(rank, chunks[i]);
      places.writer_of_read[e] = last_writer[context.slot(rank, chunks[i])];
    }
    pending.push({end[t], t});
  }
  while (!pending.empty()) {
    const TransferId done = pending.top().second;
    pending.pop();
    apply_end(done);
  }
  return places;
}

}  // namespace tenet::msccl_detail
