// SPDX-License-Identifier: MIT
// The exact overlap sweep (see find_first_overlap in verify_internal.hpp).
//
// A set kept as (count, sum of keys) cannot say whether two sets intersect; a bitset over members
// can, but one per slot would be rows x chunks x members bits. Chunks never mix, though, so the
// sweep replays one chunk at a time with one bitset per row: first it files every event under
// the chunks it touches (in replay order), then it replays each chunk's list. Rows are reset
// lazily (a stamp per row), so a chunk costs only the rows its transfers touch.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "verify_internal.hpp"

namespace tenet::verify_detail {
namespace {

constexpr std::uint32_t kEndTag = std::uint32_t{1} << 31;

}  // namespace

Overlap find_first_overlap(const Schedule& schedule, const ReplayOrder& order, const SlotRows& rows,
                           std::uint64_t last_position) {
  const std::uint64_t chunk_count = schedule.chunk_count();
  const std::uint64_t words = words_per_set(schedule);
  const std::uint32_t members = static_cast<std::uint32_t>(schedule.members().size());

  // Each transfer files a start and an end under each of its chunks.
  std::vector<std::uint64_t> offsets(chunk_count + 1, 0);
  for (const Transfer& transfer : schedule.transfers()) {
    for (ChunkId chunk : schedule.chunks_of(transfer)) offsets[chunk + 1] += 2;
  }
  for (std::uint64_t chunk = 0; chunk < chunk_count; ++chunk) offsets[chunk + 1] += offsets[chunk];
  // Left uninitialised: every entry is written before it is read, and a sweep that stops early
  // (the common failure) then touches, and pages in, only what it uses.
  const auto events = std::make_unique_for_overwrite<std::uint32_t[]>(offsets[chunk_count]);
  std::vector<std::uint64_t> filled(offsets.begin(), offsets.end() - 1);
  // 2 x transfers < 2^32 events (kMaxTransfers), so positions fit 32 bits.
  const auto end_position = std::make_unique_for_overwrite<std::uint32_t[]>(schedule.size());
  PendingEnds pending;
  replay_events(
      order, pending,
      [&](TransferId id, std::uint64_t position, std::uint64_t&) {
        if (position > last_position) return false;
        for (ChunkId chunk : schedule.chunks_of(schedule.transfer(id))) events[filled[chunk]++] = id;
        return true;
      },
      [&](const PendingEnd& done, std::uint64_t position) {
        if (position > last_position) return false;
        end_position[done.id] = static_cast<std::uint32_t>(position);
        for (ChunkId chunk : schedule.chunks_of(schedule.transfer(done.id)))
          events[filled[chunk]++] = done.id | kEndTag;
        return true;
      });

  Overlap best;
  std::vector<std::uint64_t> sets(static_cast<std::uint64_t>(rows.rows) * words);
  std::vector<std::uint32_t> row_stamp(rows.rows, 0);  // == chunk + 1: the row's set is current
  std::vector<std::uint64_t> snapshots;
  std::vector<std::uint32_t> free_snapshots;
  const auto snapshot_of = std::make_unique_for_overwrite<std::uint32_t[]>(schedule.size());
  for (std::uint64_t chunk = 0; chunk < chunk_count; ++chunk) {
    const std::uint32_t stamp = static_cast<std::uint32_t>(chunk + 1);
    auto row_set = [&](NodeId npu) {
      const std::uint32_t row = rows.row_of[npu];
      std::uint64_t* set = sets.data() + row * words;
      if (row_stamp[row] != stamp) {
        row_stamp[row] = stamp;
        std::fill(set, set + words, 0);
        // Rows 0..members-1 are the members, each starting with its own contribution.
        if (row < members) set[row / 64] = std::uint64_t{1} << (row % 64);
      }
      return set;
    };
    free_snapshots.clear();
    std::uint32_t snapshots_used = 0;
    for (std::uint64_t e = offsets[chunk]; e < filled[chunk]; ++e) {
      const TransferId id = events[e] & ~kEndTag;
      const Transfer& transfer = schedule.transfer(id);
      if ((events[e] & kEndTag) == 0) {
        std::uint32_t snapshot;
        if (!free_snapshots.empty()) {
          snapshot = free_snapshots.back();
          free_snapshots.pop_back();
        } else {
          snapshot = snapshots_used++;
          if (snapshots.size() < snapshots_used * words) snapshots.resize(snapshots_used * words);
        }
        const std::uint64_t* source = row_set(transfer.src);
        std::copy(source, source + words, snapshots.data() + snapshot * words);
        snapshot_of[id] = snapshot;
        continue;
      }
      if (end_position[id] >= best.position) break;
      std::uint64_t* target = row_set(transfer.dst);
      const std::uint64_t* sent = snapshots.data() + snapshot_of[id] * words;
      if (transfer.kind == TransferKind::kReduce) {
        std::uint64_t shared = 0;
        for (std::uint64_t w = 0; w < words; ++w) shared |= target[w] & sent[w];
        if (shared != 0) {
          best = {true, end_position[id], id, static_cast<ChunkId>(chunk)};
          break;
        }
        for (std::uint64_t w = 0; w < words; ++w) target[w] |= sent[w];
      } else {
        std::copy(sent, sent + words, target);
      }
      free_snapshots.push_back(snapshot_of[id]);
    }
  }
  return best;
}

}  // namespace tenet::verify_detail
