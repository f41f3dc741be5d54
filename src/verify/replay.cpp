// SPDX-License-Identifier: MIT
// The fast replays: one pass over the events in replay order, O(1) work per chunk a transfer
// moves, no allocation per transfer.
//
// Writers. A reader must have as ancestors every transfer that wrote its slot since the slot was
// last overwritten by a copy (that copy included). All-gather slots are only ever copied into, so
// that is one writer a slot. Reduction slots keep the latest writer inline and older ones (a slot
// reduced into several times since its last copy, as in recursive halving) in a shared pool of
// linked nodes, reached through a side array read only when the slot's overflow flag is set.
//
// Slices. A chunk's slots are touched only by transfers that move it, so when every transfer moves
// one chunk and the timing checks all hold, the replay splits into independent passes over slices
// of the chunks, run in parallel over shared slot arrays (each pass touches only its slice). Every
// pass still reads the whole schedule, so there is one slice per thread. The verdict cannot depend
// on that count: slices only ever say "no problem" (the counters they return are sums over
// transfers), and when any pass finds one, the whole replay runs again in one pass to report the
// first problem exactly.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tenet/common/parallel.hpp"
#include "tenet/common/random.hpp"
#include "verify_internal.hpp"

namespace tenet::verify_detail {
namespace {

/// All-gather slot values besides a writer's id.
constexpr TransferId kEmpty = ~TransferId{0};
constexpr TransferId kInitial = kEmpty - 1;  ///< held from the start by the chunk's owner

/// Fixed seed of the member keys: verification must not depend on anything but the schedule.
constexpr std::uint64_t kMemberKeySeed = 0x7E4E7'5EED'C0FFEEull;

std::string read_before_written(const Topology& topology, const Schedule& schedule, TransferId id, ChunkId chunk) {
  const Transfer& transfer = schedule.transfer(id);
  return cat(transfer_label(topology, schedule, id, chunk), ": ", topology.node_label(transfer.src),
             " does not hold chunk ", chunk, " when the transfer starts at ", transfer.start_us,
             " us (read before it was written)");
}

std::string race(const Topology& topology, const Schedule& schedule, TransferId reader, TransferId writer,
                 ChunkId chunk) {
  return cat("transfer ", reader, " reads chunk ", chunk, " at ", topology.node_label(schedule.transfer(reader).src),
             " while transfer ", writer, ", which also wrote it, is not among its ancestors (a race)");
}

std::string counted_twice(const Topology& topology, const Schedule& schedule, TransferId id, ChunkId chunk) {
  return cat(transfer_label(topology, schedule, id, chunk), ": adds contributions ",
             topology.node_label(schedule.transfer(id).dst), " already holds (a contribution counted twice)");
}

/// Snapshots of the sets a transfer read when it started, kept until it ends. Blocks come in
/// power-of-two size classes with free lists, so a steady replay reuses memory instead of
/// allocating.
class SnapshotArena {
 public:
  std::uint64_t allocate(std::uint32_t chunks) {
    std::vector<std::uint64_t>& free = free_[size_class(chunks)];
    if (!free.empty()) {
      const std::uint64_t offset = free.back();
      free.pop_back();
      return offset;
    }
    const std::uint64_t offset = hash.size();
    hash.resize(offset + (std::uint64_t{1} << size_class(chunks)));
    count.resize(hash.size());
    return offset;
  }
  void release(std::uint64_t offset, std::uint32_t chunks) { free_[size_class(chunks)].push_back(offset); }

  std::vector<std::uint64_t> hash;
  std::vector<std::uint32_t> count;

 private:
  static unsigned size_class(std::uint32_t chunks) { return static_cast<unsigned>(std::bit_width(chunks - 1)); }
  std::array<std::vector<std::uint64_t>, 33> free_;
};

}  // namespace

namespace {

/// Below this many transfers one pass is fast enough.
constexpr std::size_t kSliceMinTransfers = std::size_t{1} << 16;

/// The chunks [first, last) one pass owns.
struct ChunkSlice {
  ChunkId first = 0;
  ChunkId last = 0;
};

/// Keeps the transfers of one slice; requires at most one chunk per transfer.
struct InSlice {
  const Schedule* schedule;
  ChunkSlice slice;
  bool operator()(TransferId id) const {
    const std::span<const ChunkId> chunks = schedule->chunks_of(id);
    return !chunks.empty() && chunks[0] >= slice.first && chunks[0] < slice.last;
  }
};

bool can_slice(const Schedule& schedule, const TimingChecks& timing) {
  return schedule.size() >= kSliceMinTransfers && schedule.at_most_one_chunk_each() && timing.all_hold();
}

ChunkSlice slice_of(std::size_t slice, std::size_t slices, std::uint64_t chunk_count) {
  return {static_cast<ChunkId>(chunk_count * slice / slices), static_cast<ChunkId>(chunk_count * (slice + 1) / slices)};
}

/// Runs `pass(slice)` over every slice in parallel; true when none found a problem. Sums the
/// counters into `outcome`.
template <typename Pass>
bool every_slice_passes(std::uint64_t chunk_count, ReplayOutcome& outcome, Pass&& pass) {
  const auto slices = static_cast<std::size_t>(std::max(1, max_concurrency()));
  std::vector<ReplayOutcome> outcomes(slices);
  parallel_for(std::size_t{0}, slices,
               [&](std::size_t slice) { outcomes[slice] = pass(slice_of(slice, slices, chunk_count)); });
  for (const ReplayOutcome& part : outcomes) {
    if (!part.error.empty()) return false;
    outcome.transfers_checked += part.transfers_checked;
    outcome.redundant_copies += part.redundant_copies;
  }
  return true;
}

/// The all-gather replay of one slice (or of everything), over a shared writer table.
ReplayOutcome all_gather_pass(const Topology& topology, const Schedule& schedule, const ReplayOrder& order,
                              const SlotRows& rows, TimingChecks& timing, std::vector<TransferId>& writer,
                              std::optional<ChunkSlice> slice) {
  const std::uint64_t chunk_count = schedule.chunk_count();
  Ancestry ancestry(schedule, order);
  ReplayOutcome outcome;
  PendingEnds pending;
  auto on_start = [&](TransferId id, std::uint64_t position, std::uint64_t&) {
    ++outcome.transfers_checked;
    outcome.position = position;
    if (!timing.check_start(id, outcome.error)) return false;
    const Transfer& transfer = schedule.transfer(id);
    const TransferId* slots = writer.data() + rows.row_of[transfer.src] * chunk_count;
    TransferId proven = kNoTransfer;  // a block usually has one writer: check it once
    for (ChunkId chunk : schedule.chunks_of(transfer)) {
      const TransferId last = slots[chunk];
      if (last == kEmpty) {
        outcome.error = read_before_written(topology, schedule, id, chunk);
        return false;
      }
      if (last == kInitial || last == proven) continue;
      if (!ancestry.is_ancestor(last, id)) {
        outcome.error = race(topology, schedule, id, last, chunk);
        return false;
      }
      proven = last;
    }
    return true;
  };
  auto on_end = [&](const PendingEnd& done, std::uint64_t) {
    const Transfer& transfer = schedule.transfer(done.id);
    TransferId* slots = writer.data() + rows.row_of[transfer.dst] * chunk_count;
    for (ChunkId chunk : schedule.chunks_of(transfer)) {
      if (slots[chunk] != kEmpty) ++outcome.redundant_copies;
      slots[chunk] = done.id;
    }
    return true;
  };
  auto prefetch = [&](TransferId id) {
    const ChunkId chunk = schedule.chunks_of(id)[0];
    __builtin_prefetch(&writer[rows.row_of[schedule.src(id)] * chunk_count + chunk]);
    __builtin_prefetch(&writer[rows.row_of[schedule.dst(id)] * chunk_count + chunk], 1);
  };
  if (slice) {
    replay_events(order, pending, on_start, on_end, prefetch, InSlice{&schedule, *slice});
  } else {
    replay_events(order, pending, on_start, on_end, prefetch);
  }
  return outcome;
}

void reset_writers(const Schedule& schedule, const SlotRows& rows, std::vector<TransferId>& writer) {
  const std::uint64_t chunk_count = schedule.chunk_count();
  const std::uint32_t per_member = schedule.chunks_per_member();
  const std::size_t members = schedule.members().size();
  parallel_for_range(std::uint32_t{0}, rows.rows, 64, [&](std::uint32_t first, std::uint32_t last) {
    for (std::uint32_t row = first; row != last; ++row) {
      TransferId* slots = writer.data() + row * chunk_count;
      std::fill(slots, slots + chunk_count, kEmpty);
      if (row < members) std::fill(slots + row * per_member, slots + (row + 1) * per_member, kInitial);
    }
  });
}

}  // namespace

ReplayOutcome replay_all_gather(const Topology& topology, const Schedule& schedule, const ReplayOrder& order,
                                const Survey& survey) {
  const SlotRows& rows = survey.rows;
  const std::uint64_t chunk_count = schedule.chunk_count();
  std::vector<TransferId> writer(static_cast<std::uint64_t>(rows.rows) * chunk_count);
  reset_writers(schedule, rows, writer);
  TimingChecks timing(topology, schedule, order, survey);
  ReplayOutcome outcome;
  bool passed = false;
  if (can_slice(schedule, timing)) {
    passed = every_slice_passes(chunk_count, outcome, [&](ChunkSlice slice) {
      return all_gather_pass(topology, schedule, order, rows, timing, writer, slice);
    });
    // A problem: replay again from scratch, in one pass, to report the first one exactly.
    if (!passed) reset_writers(schedule, rows, writer);
  }
  if (!passed) {
    outcome = all_gather_pass(topology, schedule, order, rows, timing, writer, std::nullopt);
    if (!outcome.error.empty()) return outcome;
  }
  outcome.position = kAfterReplay;
  for (std::uint64_t member = 0; member < schedule.members().size(); ++member) {
    const TransferId* slots = writer.data() + member * chunk_count;
    const TransferId* missing = std::find(slots, slots + chunk_count, kEmpty);
    if (missing != slots + chunk_count) {
      outcome.error =
          cat(topology.node_label(schedule.members()[member]), " ends without chunk ", missing - slots, " (missing)");
      return outcome;
    }
  }
  return outcome;
}

namespace {

/// A reduction slot: the set of contributions it holds and its latest writer. 16 bytes, so one
/// cache line holds everything a read or a write touches.
struct Slot {
  std::uint64_t hash = 0;   ///< sum of the member keys in the set (mod 2^64)
  std::uint32_t count = 0;  ///< set size; bit 31 flags older writers in the pool
  TransferId writer = kNoTransfer;
};
constexpr std::uint32_t kMoreWriters = std::uint32_t{1} << 31;
constexpr std::uint32_t kCountMask = kMoreWriters - 1;

/// An older writer of a slot; `next` continues the list (kNoTransfer ends it).
struct WriterNode {
  TransferId writer;
  std::uint32_t next;
};

/// The slots of a reduction replay, shared by the passes over slices.
struct ReductionSlots {
  std::vector<Slot> slots;
  std::vector<std::uint32_t> more;  ///< pool index of a slot's older writers, valid under kMoreWriters
  std::uint64_t full_hash = 0;      ///< the set of every member's contribution
};

/// Reduce-scatter and all-reduce start with every member holding its own contribution to every
/// chunk.
void reset_reduction_slots(const Schedule& schedule, const SlotRows& rows, ReductionSlots& state) {
  const std::uint64_t chunk_count = schedule.chunk_count();
  const std::uint32_t members = static_cast<std::uint32_t>(schedule.members().size());
  state.slots.resize(static_cast<std::uint64_t>(rows.rows) * chunk_count);
  state.more.resize(state.slots.size());
  state.full_hash = 0;
  for (std::uint32_t member = 0; member < members; ++member)
    state.full_hash += Rng(mix_seed(kMemberKeySeed, member)).next();
  parallel_for_range(std::uint32_t{0}, rows.rows, 64, [&](std::uint32_t first, std::uint32_t last) {
    for (std::uint32_t row = first; row != last; ++row) {
      const Slot initial = row < members ? Slot{Rng(mix_seed(kMemberKeySeed, row)).next(), 1, kNoTransfer} : Slot{};
      std::fill(state.slots.begin() + static_cast<std::ptrdiff_t>(row * chunk_count),
                state.slots.begin() + static_cast<std::ptrdiff_t>((row + 1) * chunk_count), initial);
    }
  });
}

/// The reduction replay of one slice (or of everything) over shared slots; the older-writer pool
/// and the snapshots are the pass's own.
class ReductionPass {
 public:
  ReductionPass(const Topology& topology, const Schedule& schedule, const ReplayOrder& order, const SlotRows& rows,
                TimingChecks& timing, ReductionSlots& state)
      : topology_(topology),
        schedule_(schedule),
        order_(order),
        rows_(rows),
        chunk_count_(schedule.chunk_count()),
        members_(static_cast<std::uint32_t>(schedule.members().size())),
        full_hash_(state.full_hash),
        slots_(state.slots),
        more_(state.more),
        timing_(timing),
        ancestry_(schedule, order) {}

  ReplayOutcome run(std::optional<ChunkSlice> slice) {
    PendingEnds pending;
    auto on_start = [&](TransferId id, std::uint64_t position, std::uint64_t& payload) {
      return start(id, position, payload);
    };
    auto on_end = [&](const PendingEnd& done, std::uint64_t position) { return end(done, position); };
    auto prefetch = [&](TransferId id) { this->prefetch(id); };
    if (slice) {
      replay_events(order_, pending, on_start, on_end, prefetch, InSlice{&schedule_, *slice});
    } else {
      replay_events(order_, pending, on_start, on_end, prefetch);
    }
    return outcome_;
  }

 private:
  bool start(TransferId id, std::uint64_t position, std::uint64_t& payload) {
    ++outcome_.transfers_checked;
    outcome_.position = position;
    if (!timing_.check_start(id, outcome_.error)) return false;
    const Transfer& transfer = schedule_.transfer(id);
    const std::uint64_t base = rows_.row_of[transfer.src] * chunk_count_;
    const std::span<const ChunkId> chunks = schedule_.chunks_of(transfer);
    payload = arena_.allocate(transfer.chunk_count);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const std::uint64_t index = base + chunks[i];
      const Slot& slot = slots_[index];
      if ((slot.count & kCountMask) == 0) {
        outcome_.error = read_before_written(topology_, schedule_, id, chunks[i]);
        return false;
      }
      const bool proven = index == proven_slot_ && transfer.dep_count > 0 && transfer.dep_begin == proven_deps_begin_ &&
                          transfer.dep_count == proven_deps_count_;
      if (!proven && slot.writer != kNoTransfer) {
        if (!writer_is_ancestor(slot.writer, id, chunks[i])) return false;
        if ((slot.count & kMoreWriters) != 0) {
          for (std::uint32_t node = more_[index]; node != kNoTransfer; node = pool_[node].next) {
            if (!writer_is_ancestor(pool_[node].writer, id, chunks[i])) return false;
          }
        }
        proven_slot_ = index;
        proven_deps_begin_ = transfer.dep_begin;
        proven_deps_count_ = transfer.dep_count;
      }
      arena_.hash[payload + i] = slot.hash;
      arena_.count[payload + i] = slot.count & kCountMask;
    }
    return true;
  }

  void prefetch(TransferId id) const {
    const Transfer& transfer = schedule_.transfer(id);
    const ChunkId chunk = schedule_.chunks_of(transfer)[0];
    __builtin_prefetch(&slots_[rows_.row_of[transfer.src] * chunk_count_ + chunk]);
    __builtin_prefetch(&slots_[rows_.row_of[transfer.dst] * chunk_count_ + chunk], 1);
  }

  bool writer_is_ancestor(TransferId writer, TransferId reader, ChunkId chunk) {
    if (ancestry_.is_ancestor(writer, reader)) return true;
    outcome_.error = race(topology_, schedule_, reader, writer, chunk);
    return false;
  }

  bool end(const PendingEnd& done, std::uint64_t position) {
    const Transfer& transfer = schedule_.transfer(done.id);
    const std::uint64_t base = rows_.row_of[transfer.dst] * chunk_count_;
    const std::span<const ChunkId> chunks = schedule_.chunks_of(transfer);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const std::uint64_t index = base + chunks[i];
      Slot& slot = slots_[index];
      if (index == proven_slot_) proven_slot_ = kNoSlot;
      const std::uint64_t sent_hash = arena_.hash[done.payload + i];
      const std::uint32_t sent_count = arena_.count[done.payload + i];
      const std::uint32_t held = slot.count & kCountMask;
      if (transfer.kind == TransferKind::kCopy) {
        if (held == members_ && slot.hash == full_hash_) ++outcome_.redundant_copies;
        slot = {sent_hash, sent_count, done.id};
        continue;
      }
      // (count, sum) shows an overlap only when the union would be too large, or complete in
      // size but not in content; the exact sweep finds the others (and the true culprit).
      const std::uint64_t total = std::uint64_t{held} + sent_count;
      const std::uint64_t sum = slot.hash + sent_hash;
      if (total > members_ || (total == members_ && sum != full_hash_)) {
        outcome_.position = position;
        outcome_.error = counted_twice(topology_, schedule_, done.id, chunks[i]);
        return false;
      }
      std::uint32_t flags = slot.count & kMoreWriters;
      if (slot.writer != kNoTransfer) {
        pool_.push_back({slot.writer, flags != 0 ? more_[index] : kNoTransfer});
        more_[index] = static_cast<std::uint32_t>(pool_.size() - 1);
        flags = kMoreWriters;
      }
      slot = {sum, static_cast<std::uint32_t>(total) | flags, done.id};
    }
    arena_.release(done.payload, transfer.chunk_count);
    return true;
  }

  const Topology& topology_;
  const Schedule& schedule_;
  const ReplayOrder& order_;
  const SlotRows& rows_;
  const std::uint64_t chunk_count_;
  const std::uint32_t members_;
  const std::uint64_t full_hash_;
  std::vector<Slot>& slots_;
  std::vector<std::uint32_t>& more_;
  std::vector<WriterNode> pool_;
  SnapshotArena arena_;
  TimingChecks& timing_;
  Ancestry ancestry_;
  ReplayOutcome outcome_;
  // The last slot whose every writer was proven an ancestor of a reader, and where that reader's
  // dependency list is stored. A reader with the same stored list has the same ancestors, so
  // while the slot is not written again its writers need no second look: the p-1 all-gather sends
  // of one NPU in a direct all-reduce share a list and read one slot of p-1 writers, 10^9 checks
  // at 1,024 NPUs otherwise.
  static constexpr std::uint64_t kNoSlot = ~std::uint64_t{0};
  std::uint64_t proven_slot_ = kNoSlot;
  std::uint64_t proven_deps_begin_ = 0;
  std::uint32_t proven_deps_count_ = 0;
};

/// The first member slot that does not end as the collective requires.
void check_reduction_postcondition(const Topology& topology, const Schedule& schedule, const ReductionSlots& state,
                                   ReplayOutcome& outcome) {
  outcome.position = kAfterReplay;
  const std::uint64_t chunk_count = schedule.chunk_count();
  const std::uint32_t members = static_cast<std::uint32_t>(schedule.members().size());
  const bool every_member = schedule.collective() == CollectiveKind::kAllReduce;
  for (std::uint32_t member = 0; member < members; ++member) {
    const ChunkId first = every_member ? 0 : member * schedule.chunks_per_member();
    const ChunkId last = every_member ? static_cast<ChunkId>(chunk_count) : first + schedule.chunks_per_member();
    for (ChunkId chunk = first; chunk < last; ++chunk) {
      const Slot& slot = state.slots[member * chunk_count + chunk];
      const std::uint32_t held = slot.count & kCountMask;
      if (held == members && slot.hash == state.full_hash) continue;
      const std::string npu = topology.node_label(schedule.members()[member]);
      if (held == 0) {
        outcome.error = cat(npu, " ends without chunk ", chunk, " (missing)");
      } else if (held < members) {
        outcome.error =
            cat(npu, " ends with chunk ", chunk, " holding ", held, " of ", members, " contributions (missing)");
      } else {
        outcome.error = cat(npu, " ends with chunk ", chunk, " with a contribution counted twice");
      }
      return;
    }
  }
}

}  // namespace

ReplayOutcome replay_reductions(const Topology& topology, const Schedule& schedule, const ReplayOrder& order,
                                const Survey& survey) {
  ReductionSlots state;
  reset_reduction_slots(schedule, survey.rows, state);
  TimingChecks timing(topology, schedule, order, survey);
  ReplayOutcome outcome;
  bool passed = false;
  if (can_slice(schedule, timing)) {
    passed = every_slice_passes(schedule.chunk_count(), outcome, [&](ChunkSlice slice) {
      return ReductionPass(topology, schedule, order, survey.rows, timing, state).run(slice);
    });
    // A problem: replay again from scratch, in one pass, to report the first one exactly.
    if (!passed) reset_reduction_slots(schedule, survey.rows, state);
  }
  if (!passed) {
    outcome = ReductionPass(topology, schedule, order, survey.rows, timing, state).run(std::nullopt);
    if (!outcome.error.empty()) return outcome;
  }
  check_reduction_postcondition(topology, schedule, state, outcome);
  return outcome;
}

}  // namespace tenet::verify_detail
