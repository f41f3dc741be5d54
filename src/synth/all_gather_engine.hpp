// SPDX-License-Identifier: MIT
#pragma once
// The TEN greedy all-gather engine on a switch-free topology. Private to src/synth.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "tenet/common/error.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

/// Time in integer picoseconds: event times compare exactly, and a chunk's time on a link is
/// rounded up once, so planned durations never undercut alpha + bytes / bandwidth.
using Tick = std::int64_t;
constexpr double kTicksPerUs = 1e6;

/// The longest plan a run may reach, and the longest transfer: 2^61 ticks is 26.7 days, so two
/// phases, a transfer past the end and their sums all stay far inside the Tick range.
constexpr Tick kMaxPlanTicks = Tick{1} << 61;
constexpr Tick kMaxTransferTicks = Tick{1} << 56;

/// What a run throws when its plan would not fit in ticks: the synthesizer passes over such a
/// candidate, and tells the user (an input error: the size) only when no candidate fits.
using PlanTooLong = tenet::PlanTooLong;

/// A transfer's time in ticks, rounded up (at least one); PlanTooLong past kMaxTransferTicks
/// (20 hours).
Tick transfer_ticks(double us);
/// PlanTooLong once a run's clock has passed kMaxPlanTicks.
void check_plan_length(Tick now);

constexpr std::uint32_t kNotDelivered = ~std::uint32_t{0};

/// One planned transfer, 16 bytes: source, destination and cost follow from the link, the start
/// time from the event.
struct MatchedTransfer {
  std::uint32_t event;  ///< index into AllGatherTrace::event_times
  LinkId link;
  ChunkId chunk;
  /// The transfer that brought the chunk to the link's source (its only dependency), or
  /// kNotDelivered when the source is the chunk's owner.
  std::uint32_t feeder;
};

/// The matched transfers in matching order, in fixed blocks of 64 MiB: growing past the first block
/// never copies, the blocks' pages are touched only when written, and a consumer that is done with
/// a block hands its memory back at once (blocks this large are always their own mapping), so
/// converting the log into a Schedule needs little more memory than the Schedule. The first block
/// starts at 64 KiB and doubles up to the block size: most logs are small, and under the
/// sanitizers a 64 MiB block per candidate cost its shadow memory's 2,048 fresh pages when
/// allocated and again when freed (most of the sanitized tests' time was the kernel's).
class TransferLog {
 public:
  static constexpr unsigned kDefaultBlockBits = 22;
  static constexpr std::size_t kFirstCapacity = 4096;

  explicit TransferLog(unsigned block_bits = kDefaultBlockBits)
      : block_bits_(block_bits), block_size_(std::size_t{1} << block_bits) {}

  std::size_t size() const { return size_; }
  MatchedTransfer& operator[](std::size_t i) { return blocks_[i >> block_bits_][i & (block_size_ - 1)]; }
  const MatchedTransfer& operator[](std::size_t i) const { return blocks_[i >> block_bits_][i & (block_size_ - 1)]; }
  void push_back(const MatchedTransfer& transfer) {
    if (size_ == capacity_) grow();
    blocks_.back()[size_ & (block_size_ - 1)] = transfer;
    ++size_;
  }
  std::size_t block_count() const { return blocks_.size(); }
  std::size_t block_size() const { return block_size_; }
  unsigned block_bits() const { return block_bits_; }
  /// First index of block b.
  std::size_t block_begin(std::size_t b) const { return b << block_bits_; }
  void release_block(std::size_t b) { blocks_[b].reset(); }

 private:
  void grow() {
    if (blocks_.size() == 1 && capacity_ < block_size_) {
      const std::size_t larger = std::min(block_size_, 2 * capacity_);
      auto block = std::make_unique_for_overwrite<MatchedTransfer[]>(larger);
      std::copy_n(blocks_[0].get(), size_, block.get());
      blocks_[0] = std::move(block);
      capacity_ = larger;
      return;
    }
    const std::size_t size = blocks_.empty() ? std::min(block_size_, kFirstCapacity) : block_size_;
    blocks_.push_back(std::make_unique_for_overwrite<MatchedTransfer[]>(size));
    capacity_ += size;
  }

  unsigned block_bits_;
  std::size_t block_size_;
  std::vector<std::unique_ptr<MatchedTransfer[]>> blocks_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  ///< entries allocated: the first block's, then block_size_ per block
};

/// The channels of a switch-native trace: a transfer's `link` is then a channel id, a channel
/// being a sender, a receiver and the physical links between them (one NPU-to-NPU link, or a
/// route through switches).
struct ChannelTable {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  std::vector<std::uint64_t> route_offsets = {0};
  std::vector<LinkId> route_links;

  std::size_t size() const { return src.size(); }
  std::span<const LinkId> route(std::uint32_t channel) const {
    return {route_links.data() + route_offsets[channel], route_offsets[channel + 1] - route_offsets[channel]};
  }
};

/// Tuning and chunk bitsets shared by both engines.
constexpr std::uint32_t kNoChunk = ~std::uint32_t{0};
/// Candidates a link compares by rarity before it settles; more finds rarer chunks, costs more.
constexpr int kRaritySample = 8;
/// Faster sources remembered per link: enough for a node's group-mates on hierarchical networks.
constexpr std::size_t kFasterSourceBudget = 64;
/// Candidates a link looks at in all (beaten by a faster path or not) before it gives up.
constexpr int kExamineBudget = 256;
/// Events between progress reports.
constexpr std::uint64_t kProgressEvents = 128;

/// Per-NPU chunk bitsets live in one flat array, `words` 64-bit words per NPU.
inline std::size_t chunk_word(ChunkId chunk) { return chunk / 64; }
inline std::uint64_t chunk_mask(ChunkId chunk) { return std::uint64_t{1} << (chunk % 64); }
inline bool test_chunk_bit(const std::vector<std::uint64_t>& bits, std::size_t words, NodeId node, ChunkId chunk) {
  return (bits[static_cast<std::size_t>(node) * words + chunk_word(chunk)] & chunk_mask(chunk)) != 0;
}
inline void set_chunk_bit(std::vector<std::uint64_t>& bits, std::size_t words, NodeId node, ChunkId chunk) {
  bits[static_cast<std::size_t>(node) * words + chunk_word(chunk)] |= chunk_mask(chunk);
}

struct AllGatherTrace {
  TransferLog transfers;          ///< in matching order: starts never decrease
  std::vector<Tick> event_times;  ///< strictly increasing; every kept transfer ends at one of them
  std::vector<Tick> link_ticks;   ///< time of one chunk on each link (each channel, when there are channels)
  ChannelTable channels;          ///< empty: transfers name the topology's links
  /// Aggregated traces only (empty otherwise): the entries of `transfers` are single chunks, and
  /// consecutive entries with the same group are one transfer carrying all their chunks over one
  /// link at once (one alpha); `group_ticks` is each group's time on its link.
  std::vector<std::uint32_t> group_of;
  std::vector<Tick> group_ticks;
  std::uint32_t chunk_count = 0;
  Tick finish = 0;         ///< when the last member got its last chunk
  bool abandoned = false;  ///< stopped early: it could no longer win (nothing else is set)

  bool grouped() const { return !group_of.empty(); }
  /// The trace of a run that stopped early.
  static AllGatherTrace stopped_early() {
    AllGatherTrace trace;
    trace.abandoned = true;
    return trace;
  }
  Tick start_of(const MatchedTransfer& transfer) const { return event_times[transfer.event]; }
  /// The event at which entry i ends (its group's end in a grouped trace).
  std::uint32_t end_event_of(std::size_t i) const;
};

struct AllGatherProblem {
  const Topology* topology = nullptr;  ///< switch-free for run_all_gather
  std::vector<NodeId> members;         ///< ascending; chunk c starts at members[c / chunks_per_member]
  std::uint32_t chunks_per_member = 1;
  double chunk_bytes = 0.0;
  unsigned log_block_bits = TransferLog::kDefaultBlockBits;  ///< see SynthOptions
  /// Chunks one transfer may carry (tenet's rule, both engines): above 1 a free link (or switch
  /// port) takes its share of everything its destination wants from it, up to this many, paying
  /// its alpha once.
  std::uint32_t max_chunks_per_transfer = 1;
  /// Aggregated runs of run_all_gather: a free link waits while its source has data landing
  /// within this share of the link's alpha, to take it along (0: links leave at once).
  double aggregate_wait = 0.0;
  /// Aggregated runs of run_all_gather in synchronous rounds: links start only when no transfer
  /// is in flight, each carrying everything it can bring, so a round pays one alpha on every link
  /// at once (as Swing and bucket send their blocks).
  bool rounds = false;
  /// tenet's rule: a link skips chunks a faster path brings its destination (see best_offer).
  /// Off for express topologies, whose every link is a path of real ones.
  bool weigh_faster_paths = true;
  /// Chunk by chunk, either rule: a link stays idle when its destination's faster in-links alone
  /// bring everything it still misses before this link could bring one chunk (the end game on
  /// links of mixed speeds). Off for the paper's rule as --policy tacos asks for it.
  bool end_game = true;
};

/// When a run stops early (branch and bound): once it provably ends after a time another
/// candidate already achieves. A run's clock only moves forward, so it never ends before the
/// clock reads; an all-reduce's two phases run side by side, and the candidate ends no earlier
/// than the sum of both clocks.
struct GiveUp {
  /// The run stops once its own clock passes this.
  const std::atomic<Tick>* after = nullptr;
  /// This run's clock, published at every event for the other phase (null: not published).
  std::atomic<Tick>* clock = nullptr;
  /// The other phase's clock, and the time the two clocks together must not pass (null: none).
  /// Which runs stop this way depends on how far the other phase got, so on thread timing.
  const std::atomic<Tick>* other_phase = nullptr;
  const std::atomic<Tick>* both_after = nullptr;
  /// No plan of the run ends earlier (chunk_by_chunk_floor): its clock reads at least this.
  Tick floor = 0;

  /// Publishes `now` and tells whether the run can stop.
  bool past(Tick now) const {
    if (clock != nullptr) clock->store(now, std::memory_order_relaxed);
    if (after != nullptr && now > after->load(std::memory_order_relaxed)) return true;
    return both_after != nullptr &&
           now + other_phase->load(std::memory_order_relaxed) > both_after->load(std::memory_order_relaxed);
  }
};

/// No chunk-by-chunk run of `problem` ends before this: every member takes each chunk it lacks
/// over one of its in-links, one chunk per link time. 0 where transfers may carry several chunks.
Tick chunk_by_chunk_floor(const AllGatherProblem& problem, SynthPolicy policy);

/// Runs the matching until every member holds every chunk. Transfers to non-members that are
/// never forwarded are pruned from the trace. `progress`, when set, is told every few thousand
/// events the fraction of the deliveries members need that have been matched. With `give_up`,
/// the run is abandoned (AllGatherTrace::abandoned) once it provably could only finish later.
AllGatherTrace run_all_gather(const AllGatherProblem& problem, SynthPolicy policy, std::uint64_t seed,
                              const std::function<void(double)>& progress = {}, const GiveUp& give_up = {});

/// The same on a topology with switches, planned on the physical links themselves (fabric.hpp):
/// the trace's transfers name channels. tenet's rule only.
AllGatherTrace run_switch_all_gather(const AllGatherProblem& problem, std::uint64_t seed, SenderOrder order,
                                     const std::function<void(double)>& progress = {}, const GiveUp& give_up = {});

/// The starting state shared by both engines, per NPU and chunk (bitsets of `words` 64-bit words per
/// NPU): `holds` what has arrived, `have` what has arrived or is on its way (the bits past the last
/// chunk set, so "wanted" never sees them), their counts, and which NPUs are members. Returns the
/// members still missing chunks.
std::uint32_t initial_chunk_state(const AllGatherProblem& problem, std::uint32_t nodes, std::uint32_t chunks,
                                  std::size_t words, std::vector<std::uint64_t>& holds,
                                  std::vector<std::uint64_t>& have, std::vector<std::uint32_t>& held_count,
                                  std::vector<std::uint32_t>& have_count, std::vector<char>& is_member);

/// Finishing touches shared by both engines, given each transfer's channel endpoints: every
/// transfer's feeder (the transfer that brought its chunk to its source), and the pruning of
/// deliveries to relays that are never forwarded.
void link_feeders(TransferLog& transfers, std::uint32_t nodes, std::uint32_t chunks, std::span<const NodeId> src_of,
                  std::span<const NodeId> dst_of);
void prune_unforwarded(AllGatherTrace& trace, TransferLog& transfers, std::span<const char> is_member,
                       std::span<const NodeId> dst_of);

}  // namespace tenet::synth
