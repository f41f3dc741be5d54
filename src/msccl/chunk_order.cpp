// SPDX-License-Identifier: MIT
// Which of a member's chunks is which is the schedule's choice, not the collective's: chunk k of
// member m is the k-th piece of m's data (all-gather), of what m ends with (reduce-scatter) or of
// m's share (all-reduce), and any numbering of a member's pieces is the same algorithm. A file's
// step carries a contiguous piece of a buffer, though, so the numbering decides how many steps or
// staging copies an aggregated transfer costs. The synthesizer deals a member's chunks over the
// links round robin (torus-8x8 reduce-scatter of 64 MiB, 16 chunks per NPU: chunks 0, 4, 8, 12 of
// a member go one way, 1, 5, 9, 13 the next), which leaves every chunk of a transfer apart: one
// copy per chunk to stage it, and threadblocks past the runtime's 256 steps on one channel. Here a
// member's chunks are renumbered so that chunks travelling in the same transfers sit side by side.

#include <algorithm>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "writer.hpp"

namespace tenet::msccl_detail {
namespace {

std::size_t total_runs(const Schedule& schedule) {
  std::size_t runs = 0;
  for (TransferId id = 0; id < schedule.size(); ++id) runs += consecutive_runs(schedule.chunks_of(id));
  return runs;
}

}  // namespace

std::optional<Schedule> chunks_side_by_side(const Schedule& schedule) {
  if (schedule.at_most_one_chunk_each()) return std::nullopt;
  const std::size_t chunks = static_cast<std::size_t>(schedule.chunks_per_member()) * schedule.members().size();
  // The transfers carrying each chunk, in id order (flat: offsets, then ids).
  std::vector<std::size_t> begin(chunks + 1, 0);
  for (TransferId id = 0; id < schedule.size(); ++id) {
    for (ChunkId chunk : schedule.chunks_of(id)) ++begin[chunk + 1];
  }
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<TransferId> carriers(begin.back());
  std::vector<std::size_t> filled(begin.begin(), begin.end() - 1);
  for (TransferId id = 0; id < schedule.size(); ++id) {
    for (ChunkId chunk : schedule.chunks_of(id)) carriers[filled[chunk]++] = id;
  }
  const auto carried_by = [&](ChunkId chunk) {
    return std::span<const TransferId>(carriers.data() + begin[chunk], begin[chunk + 1] - begin[chunk]);
  };
  // Each member's chunks in the lexicographic order of their carrier lists: chunks that travel
  // together have equal lists and become neighbours; those that part late stay close.
  const std::uint32_t per_member = schedule.chunks_per_member();
  std::vector<ChunkId> renamed(chunks);
  std::vector<ChunkId> order(per_member);
  for (std::size_t first = 0; first < chunks; first += per_member) {
    std::iota(order.begin(), order.end(), static_cast<ChunkId>(first));
    std::stable_sort(order.begin(), order.end(), [&](ChunkId a, ChunkId b) {
      const std::span<const TransferId> x = carried_by(a);
      const std::span<const TransferId> y = carried_by(b);
      return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
    });
    for (std::uint32_t k = 0; k < per_member; ++k) renamed[order[k]] = static_cast<ChunkId>(first + k);
  }
  Schedule relabeled = schedule;
  for (TransferId id = 0; id < relabeled.size(); ++id) {
    ChunkId* slots = relabeled.chunk_slot(id);
    const std::size_t count = relabeled.chunk_count(id);
    for (std::size_t i = 0; i < count; ++i) slots[i] = renamed[slots[i]];
    std::sort(slots, slots + count);
  }
  // Where few transfers gain, their staging costs little and another file to lay out costs
  // seconds (mi250-2x16-ib all-reduce of 64 MiB on boxes and rails: 1,024 runs fewer in 46,592
  // transfers, no faster a file, 3.5 s a layout search).
  if (total_runs(schedule) < total_runs(relabeled) + std::max<std::size_t>(1, schedule.size() / 10))
    return std::nullopt;
  return relabeled;
}

}  // namespace tenet::msccl_detail
