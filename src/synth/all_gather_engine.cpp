// SPDX-License-Identifier: MIT
// The time-expanded-network all-gather engine (TACOS Sec. IV-D to IV-F).
//
// Model. Time advances from event to event; an event is a time when some transfer ends. At an
// event, every destination NPU that has a free in-link and might have something to receive (a
// link into it just freed, or a neighbour behind an idle link just received data) is "dirty", and
// each dirty destination matches its free in-links to chunks: link u->v may carry a chunk u holds
// and v neither holds nor already has on the way. A link carries one chunk at a time, for
// alpha + chunk / bandwidth, rounded up to a picosecond; or, aggregated (max_chunks_per_transfer
// above 1), one transfer of k chunks for alpha + k chunk / bandwidth, logged as k entries of one
// group (AllGatherTrace::group_of).
//
// Parallelism without nondeterminism. Link u->v only feeds v, so destinations never compete:
// within one event every dirty destination is matched independently against state frozen at the
// event (what every NPU holds and awaits), writing only its own block of match slots and its
// in-links' idle flags. Its own choices of this event are kept in per-thread scratch, and the
// held-or-awaited bits are written only when the matches are merged, sequentially, in destination
// order: a destination reads other NPUs' bits (the "faster path" rule), so writing them during the
// parallel phase would be a data race and make schedules depend on thread timing. Each destination
// draws its randomness from (seed, event, destination), so the schedule is byte-identical for any
// thread count.
//
// Cost. Per NPU two bitsets over chunks (held; held or on the way), so memory is 2 * NPUs * chunks
// bits plus the transfers themselves (16 bytes each). Each forward's dependency (the transfer that
// brought its chunk) is found at the end, NPU by NPU, rather than looked up in an (NPU, chunk)
// table while matching: that lookup was a cache miss per transfer and half the run time. A match scans words of
// held(u) & ~have(v) from a random place and stops at the first few candidates; nothing is p x p
// except those unavoidable per-(NPU, chunk) facts, and no allocation happens per event.
//
// Relays. An NPU outside the members still asks for every chunk (its in-links compete with
// nothing: a link feeds only its destination), so members can be reached through it; deliveries
// to a relay that it never forwards are pruned at the end.

#include "all_gather_engine.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <queue>
#include <span>
#include <stdexcept>

#include "tenet/common/error.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/common/random.hpp"
#include "tenet/common/units.hpp"

namespace tenet::synth {
namespace {

struct FreeLink {
  LinkId link;
  Tick ticks;
  std::uint64_t tie_break;
};

/// A chunk a destination wants at an event, and which of its free in-links can bring it (bit i:
/// the i-th free link): aggregated matching.
struct Offer {
  ChunkId chunk;
  std::uint64_t links;
};

/// Per-thread scratch, sized once.
struct Scratch {
  std::vector<FreeLink> free_links;
  std::vector<ChunkId> wanted;
  /// Chunks the destination being matched took at this event: not in its bits until the merge.
  std::vector<ChunkId> taken;
  // Aggregated matching: the offers, and per free link the words it can offer and its load.
  std::vector<Offer> offers;
  std::vector<Offer> ordered;
  std::vector<std::uint64_t> offered;
  std::vector<std::uint32_t> load;
  std::vector<FreeLink> spare_links;
  /// Aggregated matching: per offer of `ordered`, the free link it goes on, or kUnplaced.
  std::vector<std::uint8_t> assigned;
  /// The end game (faster_links_finish_first): the in-links that land chunks before the deadline.
  std::vector<LinkId> end_game_links;
  /// Aggregated matching in batches of links: the chunks the batches so far placed.
  std::vector<std::uint64_t> placed;
};

/// Aggregated matching tells this many free in-links of one destination apart at a time (a bit
/// each); more go in batches (match_aggregated).
constexpr std::size_t kMaxAggregatedLinks = 64;
constexpr std::uint8_t kUnplaced = 0xff;
/// Passes of balance_links at most (each move strictly shortens a longest link's share, so the
/// passes end by themselves; this only bounds the cost of the rare long chains of moves).
constexpr int kBalancePasses = 8;

/// When `members`, each lacking `lacking` chunks, have them at the earliest chunk by chunk: each
/// in-link brings one per chunk time (`link_ticks`), so by time T at most the sum over a member's
/// in-links of floor(T / chunk time).
Tick ingress_floor(const Adjacency& adjacency, const std::vector<Tick>& link_ticks, const std::vector<NodeId>& members,
                   std::uint64_t lacking) {
  Tick floor = 0;
  if (lacking == 0) return floor;
  for (NodeId v : members) {
    const auto in = adjacency.in(v);
    if (in.empty()) continue;
    const auto brought_by = [&](Tick t) {
      std::uint64_t brought = 0;
      for (LinkId id : in) brought += static_cast<std::uint64_t>(t / link_ticks[id]);
      return brought;
    };
    if (brought_by(floor) >= lacking) continue;
    // The least T that brings enough, above `floor` (too little).
    Tick low = floor;
    // Held at kMaxPlanTicks, which no plan passes (check_plan_length), so that sums stay in range.
    if (brought_by(kMaxPlanTicks) < lacking) return kMaxPlanTicks;
    Tick high = kMaxPlanTicks;
    while (high - low > 1) {
      const Tick middle = low + (high - low) / 2;
      (brought_by(middle) >= lacking ? high : low) = middle;
    }
    floor = high;
  }
  return floor;
}

/// Each link's time for one chunk of `chunk_bytes`, rounded up to whole ticks.
std::vector<Tick> chunk_ticks(const Topology& topology, double chunk_bytes) {
  std::vector<Tick> ticks(topology.link_count());
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    ticks[id] = transfer_ticks(link_time_us(chunk_bytes, link.latency_us, link.bandwidth_GBps));
  }
  return ticks;
}

class Engine {
 public:
  Engine(const AllGatherProblem& problem, SynthPolicy policy, std::uint64_t seed,
         const std::function<void(double)>& progress, const GiveUp& give_up)
      : progress_(progress),
        give_up_(give_up),
        topology_(*problem.topology),
        adjacency_(*problem.topology),
        policy_(policy),
        seed_(seed),
        max_per_transfer_(policy == SynthPolicy::kTacos ? 1
                                                        : std::max<std::uint32_t>(1, problem.max_chunks_per_transfer)),
        chunk_bytes_(problem.chunk_bytes),
        aggregate_wait_(problem.aggregate_wait),
        end_game_(problem.end_game),
        rounds_(problem.rounds && max_per_transfer_ > 1),
        nodes_(problem.topology->npu_count()),
        chunks_(static_cast<std::uint32_t>(problem.members.size()) * problem.chunks_per_member),
        words_((chunks_ + 63) / 64),
        summary_words_((words_ + 63) / 64),
        transfers_(problem.log_block_bits) {
    members_unfinished_ =
        initial_chunk_state(problem, nodes_, chunks_, words_, holds_, have_, held_count_, have_count_, is_member_);
    want_words_.assign(static_cast<std::size_t>(nodes_) * summary_words_, 0);
    for (NodeId v = 0; v < nodes_; ++v) {
      for (std::size_t w = 0; w < words_; ++w) {
        if (have_[static_cast<std::size_t>(v) * words_ + w] != ~std::uint64_t{0}) {
          want_words_[static_cast<std::size_t>(v) * summary_words_ + w / 64] |= std::uint64_t{1} << (w % 64);
        }
      }
    }
    link_ticks_ = chunk_ticks(topology_, problem.chunk_bytes);
    tier_ticks_ = link_ticks_;
    std::sort(tier_ticks_.begin(), tier_ticks_.end());
    tier_ticks_.erase(std::unique(tier_ticks_.begin(), tier_ticks_.end()), tier_ticks_.end());
    if (problem.weigh_faster_paths) {
      find_faster_sources();
    } else {
      faster_offsets_.assign(topology_.link_count() + 1, 0);
    }
    tier_reads_others_.assign(tier_ticks_.size(), 0);
    for (LinkId id = 0; id < topology_.link_count(); ++id) {
      if (faster_offsets_[id + 1] == faster_offsets_[id]) continue;
      const auto tier = std::lower_bound(tier_ticks_.begin(), tier_ticks_.end(), link_ticks_[id]) - tier_ticks_.begin();
      tier_reads_others_[static_cast<std::size_t>(tier)] = 1;
    }
    link_free_at_.assign(topology_.link_count(), 0);
    link_inflight_.assign(topology_.link_count(), kNotDelivered);
    arrivals_.init(link_ticks_, aggregated());
    if (aggregated()) {
      inflight_count_.assign(topology_.link_count(), 0);
      aggregated_slots_.resize(nodes_);
      next_gain_.assign(nodes_, kNever);
    }
    gained_.assign(nodes_, 0);
    link_idle_.assign(topology_.link_count(), 0);
    match_count_.assign(nodes_, 0);
    merged_count_.assign(nodes_, 0);
    match_slots_.resize(topology_.link_count());
    dirty_stamp_.assign(nodes_, 0);
  }

  AllGatherTrace run() {
    Tick now = 0;
    std::uint64_t event = 0;
    // Branch and bound reads the run's clock, never below GiveUp::floor (stops at the first event
    // where that alone loses: torus-64x64's chunk-by-chunk all-gather of 64 MiB, behind the
    // aggregated one by its chunked ingress alone).
    if (give_up_.past(give_up_.floor)) return AllGatherTrace::stopped_early();
    for (NodeId v = 0; v < nodes_; ++v) mark_dirty(v);
    // Deliveries the members need: each lacks all but its own chunks.
    const double needed = static_cast<double>(members_unfinished_) * chunks_ - chunks_;
    while (members_unfinished_ > 0) {
      if (progress_ && event % kProgressEvents == 0 && needed > 0) {
        progress_(std::min(1.0, static_cast<double>(transfers_.size()) / needed));
      }
      event_times_.push_back(now);
      match_all(static_cast<std::uint32_t>(event), now);
      if (arrivals_.empty()) throw std::logic_error("all-gather synthesis stalled with members unfinished");
      now = arrivals_.next_time();
      if (give_up_.past(std::max(now, give_up_.floor))) return AllGatherTrace::stopped_early();
      check_plan_length(now);
      ++event;
      ++stamp_;
      arrived_links_.clear();
      arrivals_.pop_all(now, arrived_links_);
      for (LinkId id : arrived_links_) mark_dirty(topology_.link(id).dst);
      arrive_all(now);
      // A round ends with its last arrival: every link may start the next, including links out
      // of NPUs that gained earlier in the round (idle, and not woken since).
      if (rounds_ && arrivals_.empty()) {
        for (NodeId v = 0; v < nodes_; ++v) mark_dirty(v);
      }
    }
    event_times_.push_back(now);  // the finish: every kept transfer ends at a recorded event
    AllGatherTrace trace;
    trace.finish = now;
    trace.event_times = std::move(event_times_);
    trace.link_ticks = std::move(link_ticks_);
    trace.chunk_count = chunks_;
    std::vector<NodeId> src_of(topology_.link_count());
    std::vector<NodeId> dst_of(topology_.link_count());
    for (LinkId id = 0; id < topology_.link_count(); ++id) {
      src_of[id] = topology_.link(id).src;
      dst_of[id] = topology_.link(id).dst;
    }
    link_feeders(transfers_, nodes_, chunks_, src_of, dst_of);
    trace.group_of = std::move(group_of_);
    trace.group_ticks = std::move(group_ticks_);
    prune_unforwarded(trace, transfers_, is_member_, dst_of);
    return trace;
  }

 private:
  /// Transfers in flight, bucketed by their link's chunk time: within a bucket ends arrive in the
  /// order they were pushed, so the next event is the least of a few bucket heads and no heap
  /// is needed. Networks have a handful of distinct link times. Aggregated transfers take as
  /// long as their chunk count makes them, so they go in one heap instead.
  class ArrivalQueues {
   public:
    void init(const std::vector<Tick>& link_ticks, bool variable) {
      variable_ = variable;
      std::vector<Tick> distinct(link_ticks);
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      bucket_of_link_.resize(link_ticks.size());
      for (std::size_t id = 0; id < link_ticks.size(); ++id) {
        bucket_of_link_[id] = static_cast<std::uint32_t>(
            std::lower_bound(distinct.begin(), distinct.end(), link_ticks[id]) - distinct.begin());
      }
      buckets_.assign(distinct.size(), {});
      heads_.assign(distinct.size(), 0);
    }
    void push(LinkId link, Tick end) {
      if (variable_) {
        heap_.push({end, link});
      } else {
        buckets_[bucket_of_link_[link]].push_back({end, link});
      }
      ++size_;
    }
    bool empty() const { return size_ == 0; }
    Tick next_time() const {
      if (variable_) return heap_.top().first;
      Tick next = std::numeric_limits<Tick>::max();
      for (std::size_t b = 0; b < buckets_.size(); ++b) {
        if (heads_[b] < buckets_[b].size()) next = std::min(next, buckets_[b][heads_[b]].first);
      }
      return next;
    }
    void pop_all(Tick time, std::vector<LinkId>& out) {
      for (; variable_ && !heap_.empty() && heap_.top().first == time; --size_) {
        out.push_back(heap_.top().second);
        heap_.pop();
      }
      for (std::size_t b = 0; b < buckets_.size(); ++b) {
        auto& bucket = buckets_[b];
        std::size_t& head = heads_[b];
        while (head < bucket.size() && bucket[head].first == time) {
          out.push_back(bucket[head].second);
          ++head;
          --size_;
        }
        // Reclaim the consumed front now and then, so memory tracks transfers in flight only.
        if (head > 4096 && head * 2 > bucket.size()) {
          bucket.erase(bucket.begin(), bucket.begin() + static_cast<std::ptrdiff_t>(head));
          head = 0;
        }
      }
    }

   private:
    bool variable_ = false;
    std::vector<std::uint32_t> bucket_of_link_;
    std::vector<std::vector<std::pair<Tick, LinkId>>> buckets_;
    std::vector<std::size_t> heads_;
    std::priority_queue<std::pair<Tick, LinkId>, std::vector<std::pair<Tick, LinkId>>, std::greater<>> heap_;
    std::size_t size_ = 0;
  };

  bool aggregated() const { return max_per_transfer_ > 1; }

  /// Time of `chunks` chunks on a link in one transfer, rounded up like link_ticks_.
  Tick ticks_for(LinkId id, std::uint32_t chunks) const {
    if (chunks == 1) return link_ticks_[id];
    const Link& link = topology_.link(id);
    return transfer_ticks(link_time_us(chunk_bytes_ * chunks, link.latency_us, link.bandwidth_GBps));
  }

  /// Lands every transfer ending at `now`. Each destination's arrivals touch only its own state,
  /// so they run in parallel; waking the idle links out of NPUs that gained data is sequential.
  void arrive_all(Tick now) {
    parallel_for_range(std::size_t{0}, dirty_.size(), 64, [&](std::size_t first, std::size_t last) {
      for (std::size_t i = first; i != last; ++i) arrive_at(dirty_[i], now);
    });
    const std::size_t landed = dirty_.size();
    for (std::size_t i = 0; i < landed; ++i) {
      const NodeId v = dirty_[i];
      if (!gained_[v]) continue;
      gained_[v] = 0;
      if (held_count_[v] == chunks_ && is_member_[v]) --members_unfinished_;
      for (LinkId id : adjacency_.out(v)) {
        if (link_idle_[id]) mark_dirty(topology_.link(id).dst);
      }
    }
  }

  void arrive_at(NodeId v, Tick now) {
    for (LinkId id : adjacency_.in(v)) {
      const std::uint32_t index = link_inflight_[id];
      if (index == kNotDelivered || link_free_at_[id] != now) continue;
      link_inflight_[id] = kNotDelivered;
      const std::uint32_t count = aggregated() ? inflight_count_[id] : 1;
      for (std::uint32_t k = 0; k < count; ++k) {
        set_bit(holds_, v, transfers_[index + k].chunk);
        ++held_count_[v];
      }
      gained_[v] = 1;
    }
    if (!aggregated()) return;
    next_gain_[v] = kNever;
    for (LinkId id : adjacency_.in(v)) {
      if (link_inflight_[id] != kNotDelivered) next_gain_[v] = std::min(next_gain_[v], link_free_at_[id]);
    }
  }

  bool test_bit(const std::vector<std::uint64_t>& bits, NodeId node, ChunkId chunk) const {
    return test_chunk_bit(bits, words_, node, chunk);
  }
  void set_bit(std::vector<std::uint64_t>& bits, NodeId node, ChunkId chunk) {
    set_chunk_bit(bits, words_, node, chunk);
  }

  void mark_dirty(NodeId v) {
    if (dirty_stamp_[v] == stamp_ + 1) return;
    dirty_stamp_[v] = stamp_ + 1;
    dirty_.push_back(v);
  }

  /// Matches every dirty destination at `now`. tenet's rule goes tier by tier, fastest links
  /// first, merging each tier before the next: a slow link then sees what its destination's
  /// faster neighbours were given at this same event (the "faster path" rule), and the state each
  /// tier reads is frozen while it runs.
  void match_all(std::uint32_t event, Tick now) {
    std::sort(dirty_.begin(), dirty_.end());
    round_open_ = !rounds_ || arrivals_.empty();
    for (NodeId v : dirty_) match_count_[v] = 0;
    const std::size_t tiers = policy_ == SynthPolicy::kTacos ? 1 : tier_ticks_.size();
    auto merge = [&](NodeId v) {
      if (aggregated()) {
        const std::vector<MatchedTransfer>& slots = aggregated_slots_[v];
        for (std::size_t k = merged_count_[v]; k < slots.size(); ++k) mark_awaited(v, slots[k].chunk);
        merged_count_[v] = static_cast<std::uint32_t>(slots.size());
        return;
      }
      const std::uint32_t base = adjacency_.in_offsets[v];
      for (std::uint32_t k = merged_count_[v]; k < match_count_[v]; ++k) mark_awaited(v, match_slots_[base + k].chunk);
      merged_count_[v] = match_count_[v];
    };
    for (std::size_t tier = 0; tier < tiers; ++tier) {
      if (policy_ == SynthPolicy::kTenet && tier_reads_others_[tier]) {
        // Destination by destination, each seeing what the ones before it took: a group-mate
        // that just took a chunk over its own slow link is a faster path for this one.
        Scratch& scratch = scratch_.local();
        for (NodeId v : dirty_) {
          match_destination(v, event, tier, scratch);
          merge(v);
        }
        continue;
      }
      parallel_for_range(std::size_t{0}, dirty_.size(), 16, [&](std::size_t first, std::size_t last) {
        Scratch& scratch = scratch_.local();
        for (std::size_t i = first; i != last; ++i) match_destination(dirty_[i], event, tier, scratch);
      });
      for (NodeId v : dirty_) merge(v);
    }
    if (aggregated()) {
      for (NodeId v : dirty_) launch_aggregated(v, now);
      dirty_.clear();
      return;
    }
    for (NodeId v : dirty_) {
      const std::uint32_t base = adjacency_.in_offsets[v];
      merged_count_[v] = 0;
      for (std::uint32_t k = 0; k < match_count_[v]; ++k) {
        const MatchedTransfer& match = match_slots_[base + k];
        const Tick end = now + link_ticks_[match.link];
        link_free_at_[match.link] = end;
        link_inflight_[match.link] = static_cast<std::uint32_t>(transfers_.size());
        arrivals_.push(match.link, end);
        transfers_.push_back(match);
      }
    }
    dirty_.clear();
  }

  /// Matches v's free in-links of one tier (every free in-link under the paper's rule) at `now`.
  /// Writes only v's in-links' idle flags and v's block of match slots; reads every NPU's bits,
  /// which nobody writes until the tier is merged.
  void match_destination(NodeId v, std::uint32_t event, std::size_t tier, Scratch& scratch) {
    scratch.free_links.clear();
    scratch.taken.clear();
    Rng rng(mix_seed(mix_seed(mix_seed(seed_, event), v), tier));
    const Tick now = event_times_[event];
    const bool every_tier = policy_ == SynthPolicy::kTacos;
    for (LinkId id : adjacency_.in(v)) {
      if (link_free_at_[id] > now || (!every_tier && link_ticks_[id] != tier_ticks_[tier])) continue;
      scratch.free_links.push_back({id, link_ticks_[id], rng.next()});
    }
    if (scratch.free_links.empty()) return;
    if (have_count_[v] == chunks_) {
      for (const FreeLink& free : scratch.free_links) link_idle_[free.link] = 1;
      return;
    }
    std::sort(scratch.free_links.begin(), scratch.free_links.end(), [](const FreeLink& a, const FreeLink& b) {
      return a.ticks != b.ticks ? a.ticks < b.ticks : a.tie_break < b.tie_break;
    });
    if (policy_ == SynthPolicy::kTacos) {
      match_by_postcondition(v, event, rng, scratch);
    } else if (aggregated()) {
      match_aggregated(v, event, scratch);
    } else {
      for (const FreeLink& free : scratch.free_links) {
        const bool complete = have_count_[v] + scratch.taken.size() == chunks_;
        const ChunkId chunk = complete || (end_game_ && faster_links_finish_first(v, free.link, now, scratch))
                                  ? kNoChunk
                                  : best_offer(free.link, v, scratch.taken, rng);
        if (chunk == kNoChunk) {
          link_idle_[free.link] = 1;
          continue;
        }
        scratch.taken.push_back(chunk);
        record(v, free.link, chunk, event);
      }
    }
  }

  /// The end game on links of different speeds: true when v's busier, faster in-links alone
  /// bring every chunk v still has to place strictly before `link` could bring one. A chunk on
  /// `link` would then land last: a 7x10 mesh whose x links are 4.6x slower than its y links
  /// took 38 chunks into a corner over its x link (45295 us) where 37 and the rest over y end
  /// at 44612 us. Counts only links already carrying a chunk (the link's own source has the
  /// data flowing); idle ones have nothing v wants, and links matched later at this event are
  /// no faster than `link`. Ignores whether those sources will hold the chunks by then, which
  /// at the end, when only a few chunks are missing, they mostly do.
  bool faster_links_finish_first(NodeId v, LinkId link, Tick now, Scratch& scratch) const {
    // Matched at this event and not yet merged into v's bits: placed too.
    const std::size_t unplaced = chunks_ - have_count_[v] - (match_count_[v] - merged_count_[v]);
    const Tick deadline = now + link_ticks_[link];
    // Other in-links bring a chunk every `ticks` once free, up to the deadline...
    std::size_t slots = 0;
    scratch.end_game_links.clear();
    auto count = [&](LinkId other, Tick free_at) {
      const Tick ticks = link_ticks_[other];
      if (free_at + ticks >= deadline) return;
      slots += static_cast<std::size_t>((deadline - 1 - free_at) / ticks);
      scratch.end_game_links.push_back(other);
    };
    for (LinkId other : adjacency_.in(v)) {
      if (other != link && link_free_at_[other] > now) count(other, link_free_at_[other]);
    }
    // Faster tiers matched at this event: their chunk lands at now + ticks, the next ones after.
    const std::uint32_t base = adjacency_.in_offsets[v];
    for (std::uint32_t k = 0; k < match_count_[v]; ++k) {
      const LinkId other = match_slots_[base + k].link;
      count(other, now + link_ticks_[other]);
    }
    if (slots < unplaced) return false;
    // ... but only chunks their sources hold or await: a chunk none of them has must come over
    // `link` (a 7x10 mesh's edge NPU whose y neighbours lacked it: 44680 -> 45073 us).
    // Chunks matched at this event are not in v's bits yet: they are not on offer.
    const std::size_t matched = match_count_[v] - merged_count_[v];
    std::size_t offered = 0;
    const std::size_t dst = static_cast<std::size_t>(v) * words_;
    for (std::size_t w = 0; w < words_ && offered < unplaced + matched; ++w) {
      std::uint64_t bits = 0;
      for (LinkId other : scratch.end_game_links)
        bits |= have_[static_cast<std::size_t>(topology_.link(other).src) * words_ + w];
      offered += static_cast<std::size_t>(std::popcount(bits & ~have_[dst + w]));
    }
    for (std::uint32_t k = merged_count_[v]; k < match_count_[v] && offered >= unplaced; ++k) {
      const ChunkId chunk = match_slots_[base + k].chunk;
      for (LinkId other : scratch.end_game_links) {
        if (test_chunk_bit(have_, words_, topology_.link(other).src, chunk)) {
          --offered;
          break;
        }
      }
    }
    return offered >= unplaced;
  }

  /// Starts v's aggregated matches of this event (sequential): each link's run of chunks is one
  /// transfer, as long as its chunk count makes it.
  void launch_aggregated(NodeId v, Tick now) {
    std::vector<MatchedTransfer>& slots = aggregated_slots_[v];
    merged_count_[v] = 0;
    for (std::size_t k = 0; k < slots.size();) {
      const LinkId link = slots[k].link;
      std::size_t run = k;
      while (run < slots.size() && slots[run].link == link) ++run;
      const std::uint32_t count = static_cast<std::uint32_t>(run - k);
      const Tick ticks = ticks_for(link, count);
      link_free_at_[link] = now + ticks;
      link_inflight_[link] = static_cast<std::uint32_t>(transfers_.size());
      inflight_count_[link] = count;
      arrivals_.push(link, now + ticks);
      next_gain_[v] = std::min(next_gain_[v], now + ticks);
      const std::uint32_t group = static_cast<std::uint32_t>(group_ticks_.size());
      group_ticks_.push_back(ticks);
      for (; k < run; ++k) {
        transfers_.push_back(slots[k]);
        group_of_.push_back(group);
      }
    }
    slots.clear();
  }

  /// Aggregated matching of v's free in-links of one tier (parallel phase: writes only v's slots
  /// and its in-links' idle flags). Every chunk v wants that some free link can bring goes to one
  /// of them: the chunks the fewest links can bring first, each to the link that would finish
  /// soonest with it, at most max_per_transfer_ chunks a link. A link skips chunks a faster path
  /// is bringing (as best_offer does). Cost: words x free links, plus the chunks placed.
  void match_aggregated(NodeId v, std::uint32_t event, Scratch& scratch) {
    if (!round_open_) {
      // Mid-round: the links wait for the round's end, which wakes them all.
      for (const FreeLink& free : scratch.free_links) link_idle_[free.link] = 1;
      return;
    }
    if (aggregate_wait_ > 0.0) hold_links_about_to_gain(event, scratch);
    if (scratch.free_links.size() > kMaxAggregatedLinks) put_offering_links_first(v, scratch);
    // Past kMaxAggregatedLinks free in-links (express topologies of more members), the links go
    // in batches of that many, each offered what the batches before it left: on a switch of 72
    // NPUs the links past the 64th waited for the next event, so 494 of the direct all-gather's
    // 5,112 transfers went through other members and it ran 3.94 us instead of direct's 2.55.
    const std::size_t batches = (scratch.free_links.size() + kMaxAggregatedLinks - 1) / kMaxAggregatedLinks;
    if (batches > 1) scratch.placed.assign(words_, 0);
    for (std::size_t batch = 0; batch < batches; ++batch) {
      const std::size_t first = batch * kMaxAggregatedLinks;
      const std::size_t links = std::min(scratch.free_links.size() - first, kMaxAggregatedLinks);
      match_aggregated_batch(v, event, first, links, batches > 1, scratch);
    }
  }

  /// One batch of match_aggregated: free links [first, first + links), kept apart by a bit each.
  /// `placing`: more batches follow, so the chunks placed here go into scratch.placed.
  void match_aggregated_batch(NodeId v, std::uint32_t event, std::size_t first, std::size_t links, bool placing,
                              Scratch& scratch) {
    scratch.offers.clear();
    scratch.offered.resize(links);
    scratch.load.assign(links, 0);
    std::array<std::size_t, kMaxAggregatedLinks + 1> by_choices{};
    // Only the words v has not completed (the summary's set bits), as best_offer does.
    const std::uint64_t* wanted = want_words_.data() + static_cast<std::size_t>(v) * summary_words_;
    for (std::size_t s = 0; s < summary_words_; ++s) {
      for (std::uint64_t mask = wanted[s]; mask != 0; mask &= mask - 1) {
        const std::size_t w = s * 64 + static_cast<std::size_t>(std::countr_zero(mask));
        collect_offers(v, w, first, links, scratch, by_choices);
      }
    }
    // Fewest choices first (a counting sort: stable, so chunk order within a count).
    std::size_t at = 0;
    for (std::size_t& count : by_choices) {
      const std::size_t n = count;
      count = at;
      at += n;
    }
    scratch.ordered.resize(scratch.offers.size());
    for (const Offer& offer : scratch.offers)
      scratch.ordered[by_choices[static_cast<std::size_t>(std::popcount(offer.links))]++] = offer;
    scratch.assigned.assign(scratch.ordered.size(), kUnplaced);
    for (std::size_t k = 0; k < scratch.ordered.size(); ++k) {
      const Offer& offer = scratch.ordered[k];
      std::size_t best = links;
      Tick best_end = 0;
      for (std::uint64_t bits = offer.links; bits != 0; bits &= bits - 1) {
        const std::size_t i = static_cast<std::size_t>(std::countr_zero(bits));
        if (scratch.load[i] == max_per_transfer_) continue;
        const Tick end = ticks_for(scratch.free_links[first + i].link, scratch.load[i] + 1);
        if (best == links || end < best_end) {
          best = i;
          best_end = end;
        }
      }
      if (best == links) continue;
      ++scratch.load[best];
      scratch.assigned[k] = static_cast<std::uint8_t>(best);
    }
    if (rounds_) balance_links(first, scratch);
    std::vector<MatchedTransfer>& slots = aggregated_slots_[v];
    const std::size_t first_slot = slots.size();
    for (std::size_t k = 0; k < scratch.ordered.size(); ++k) {
      if (scratch.assigned[k] == kUnplaced) continue;
      const ChunkId chunk = scratch.ordered[k].chunk;
      slots.push_back({event, scratch.free_links[first + scratch.assigned[k]].link, chunk, kNotDelivered});
      if (placing) scratch.placed[chunk_word(chunk)] |= chunk_mask(chunk);
    }
    // Each link's chunks together, links in their matching order.
    std::stable_sort(slots.begin() + static_cast<std::ptrdiff_t>(first_slot), slots.end(),
                     [&](const MatchedTransfer& a, const MatchedTransfer& b) { return a.link < b.link; });
    for (std::size_t i = 0; i < links; ++i)
      link_idle_[scratch.free_links[first + i].link] = scratch.load[i] > 0 ? 0 : 1;
  }

  /// In rounds (where a round lasts as long as its longest link): the greedy above places each
  /// chunk once, in turn, so a chunk placed early can sit on the link that ends up longest while
  /// another of its links ends up short (hypercube-6 at 1 MiB: a destination's second round put 6
  /// to 20 of its 90 chunks on its six links). Passes over the chunks move each to a link where it
  /// would arrive sooner than on its own, until none moves: every move shortens the link it leaves
  /// below the one it joins, so this ends. Not when links leave as they free up: there an uneven
  /// placement lets the short links start their next transfer early, and evening it out made the
  /// all-gather of 64 MiB on torus-64x64 10% slower (532 -> 588 us).
  void balance_links(std::size_t first, Scratch& scratch) const {
    for (int pass = 0; pass < kBalancePasses; ++pass) {
      bool moved = false;
      for (std::size_t k = 0; k < scratch.ordered.size(); ++k) {
        const std::uint8_t at = scratch.assigned[k];
        if (at == kUnplaced || std::popcount(scratch.ordered[k].links) < 2) continue;
        std::size_t best = at;
        Tick best_end = ticks_for(scratch.free_links[first + at].link, scratch.load[at]);
        for (std::uint64_t bits = scratch.ordered[k].links; bits != 0; bits &= bits - 1) {
          const std::size_t i = static_cast<std::size_t>(std::countr_zero(bits));
          if (i == at || scratch.load[i] == max_per_transfer_) continue;
          const Tick end = ticks_for(scratch.free_links[first + i].link, scratch.load[i] + 1);
          if (end < best_end) {
            best = i;
            best_end = end;
          }
        }
        if (best == at) continue;
        --scratch.load[at];
        ++scratch.load[best];
        scratch.assigned[k] = static_cast<std::uint8_t>(best);
        moved = true;
      }
      if (!moved) return;
    }
  }

  /// Where alphas dominate, a link that leaves now with what its source holds, just before the
  /// source receives more, makes the newcomers wait a whole transfer: on a torus at 4 KiB that
  /// lost one hop's alpha in eight. So a free link whose source has data landing within
  /// aggregate_wait_ of its alpha stays idle (woken when the source gains, as idle links are).
  /// Reads link state that only the sequential phases write.
  void hold_links_about_to_gain(std::uint32_t event, Scratch& scratch) {
    const Tick now = event_times_[event];
    std::size_t kept = 0;
    for (const FreeLink& free : scratch.free_links) {
      const Link& link = topology_.link(free.link);
      const Tick soon = now + static_cast<Tick>(aggregate_wait_ * link.latency_us * kTicksPerUs);
      if (next_gain_[link.src] <= soon) {
        link_idle_[free.link] = 1;
      } else {
        scratch.free_links[kept++] = free;
      }
    }
    scratch.free_links.resize(kept);
  }

  /// Past kMaxAggregatedLinks free in-links (express topologies: one per member), the ones whose
  /// source holds something v lacks go first, in their order, so links with nothing to offer do
  /// not take the places of links with something (and v matches something whenever it can).
  void put_offering_links_first(NodeId v, Scratch& scratch) const {
    const std::uint64_t* had = have_.data() + static_cast<std::size_t>(v) * words_;
    auto offers_something = [&](const FreeLink& free) {
      const std::uint64_t* offered = holds_.data() + static_cast<std::size_t>(topology_.link(free.link).src) * words_;
      for (std::size_t w = 0; w < words_; ++w) {
        if ((offered[w] & ~had[w]) != 0) return true;
      }
      return false;
    };
    scratch.spare_links.clear();
    std::size_t kept = 0;
    for (const FreeLink& free : scratch.free_links) {
      if (offers_something(free)) {
        scratch.free_links[kept++] = free;
      } else {
        scratch.spare_links.push_back(free);
      }
    }
    std::copy(scratch.spare_links.begin(), scratch.spare_links.end(),
              scratch.free_links.begin() + static_cast<std::ptrdiff_t>(kept));
  }

  /// The chunks of word w that v lacks (and no earlier batch placed) and some of its free in-links
  /// [first, first + links) can bring, each with the set of those links (as bits), counted by how
  /// many can bring it.
  void collect_offers(NodeId v, std::size_t w, std::size_t first, std::size_t links, Scratch& scratch,
                      std::array<std::size_t, kMaxAggregatedLinks + 1>& by_choices) const {
    std::uint64_t missing = ~have_[static_cast<std::size_t>(v) * words_ + w];
    if (first > 0) missing &= ~scratch.placed[w];
    std::uint64_t any = 0;
    for (std::size_t i = 0; i < links; ++i) {
      const LinkId link = scratch.free_links[first + i].link;
      std::uint64_t bits = holds_[static_cast<std::size_t>(topology_.link(link).src) * words_ + w] & missing;
      for (std::uint32_t f = faster_offsets_[link]; f < faster_offsets_[link + 1] && bits != 0; ++f) {
        bits &= ~have_[static_cast<std::size_t>(faster_sources_[f]) * words_ + w];
      }
      scratch.offered[i] = bits;
      any |= bits;
    }
    for (; any != 0; any &= any - 1) {
      const std::uint64_t bit = any & (~any + 1);
      std::uint64_t choices = 0;
      for (std::size_t i = 0; i < links; ++i) choices |= (scratch.offered[i] & bit) != 0 ? std::uint64_t{1} << i : 0;
      scratch.offers.push_back({static_cast<ChunkId>(w * 64 + std::countr_zero(bit)), choices});
      ++by_choices[static_cast<std::size_t>(std::popcount(choices))];
    }
  }

  /// Called in the parallel phase: touches only v's slots and v's in-link's idle flag.
  void record(NodeId v, LinkId link, ChunkId chunk, std::uint32_t event) {
    link_idle_[link] = 0;
    match_slots_[adjacency_.in_offsets[v] + match_count_[v]++] = {event, link, chunk, kNotDelivered};
  }

  /// Called in the sequential merge: v now awaits `chunk`.
  void mark_awaited(NodeId v, ChunkId chunk) {
    set_bit(have_, v, chunk);
    if (have_[static_cast<std::size_t>(v) * words_ + chunk_word(chunk)] == ~std::uint64_t{0}) {
      want_words_[static_cast<std::size_t>(v) * summary_words_ + chunk_word(chunk) / 64] &=
          ~(std::uint64_t{1} << (chunk_word(chunk) % 64));
    }
    ++have_count_[v];
  }

  /// The paper's order: every chunk v still wants, shuffled; each goes to the cheapest free
  /// in-link whose source holds it (links are pre-sorted cheapest first, random among equals).
  /// Only chunks some free link's source holds can be placed, and a uniformly random order of all
  /// wanted chunks restricted to those is a uniformly random order of them: so only those are
  /// listed, and shuffled lazily, as far as the links last.
  void match_by_postcondition(NodeId v, std::uint32_t event, Rng& rng, Scratch& scratch) {
    scratch.wanted.clear();
    const std::size_t base = static_cast<std::size_t>(v) * words_;
    for (std::size_t w = 0; w < words_; ++w) {
      std::uint64_t offered = 0;
      for (const FreeLink& free : scratch.free_links) {
        offered |= holds_[static_cast<std::size_t>(topology_.link(free.link).src) * words_ + w];
      }
      for (std::uint64_t bits = offered & ~have_[base + w]; bits != 0; bits &= bits - 1) {
        scratch.wanted.push_back(static_cast<ChunkId>(w * 64 + std::countr_zero(bits)));
      }
    }
    std::size_t unassigned = scratch.free_links.size();
    const std::size_t count = scratch.wanted.size();
    for (std::size_t i = 0; i < count && unassigned > 0; ++i) {
      std::swap(scratch.wanted[i], scratch.wanted[i + rng.below(count - i)]);
      const ChunkId chunk = scratch.wanted[i];
      for (FreeLink& free : scratch.free_links) {
        if (free.link == kNoLink || !test_bit(holds_, topology_.link(free.link).src, chunk)) continue;
        if (end_game_ && faster_links_finish_first(v, free.link, event_times_[event], scratch)) {
          link_idle_[free.link] = 1;
          free.link = kNoLink;
          --unassigned;
          continue;
        }
        record(v, free.link, chunk, event);
        free.link = kNoLink;
        --unassigned;
        break;
      }
    }
    for (const FreeLink& free : scratch.free_links) {
      if (free.link != kNoLink) link_idle_[free.link] = 1;
    }
  }

  /// For every link u->v, the NPUs (other than u and v) from which v can be reached faster than a
  /// chunk crosses u->v: what they hold or await will reach v sooner another way. Empty on
  /// homogeneous networks; the group-mates behind fast local links on hierarchical ones.
  void find_faster_sources() {
    faster_offsets_.assign(topology_.link_count() + 1, 0);
    std::vector<Tick> distance(nodes_, std::numeric_limits<Tick>::max());
    std::vector<NodeId> touched;
    std::priority_queue<std::pair<Tick, NodeId>, std::vector<std::pair<Tick, NodeId>>, std::greater<>> frontier;
    Tick fastest = std::numeric_limits<Tick>::max();
    for (Tick ticks : link_ticks_) fastest = std::min(fastest, ticks);
    for (LinkId id = 0; id < topology_.link_count(); ++id) {
      faster_offsets_[id + 1] = faster_offsets_[id];
      if (link_ticks_[id] <= fastest) continue;  // nothing beats the fastest link
      const Link& link = topology_.link(id);
      const Tick radius = link_ticks_[id];
      // Dijkstra backwards from v over links, bounded by the link's own time and a node budget.
      distance[link.dst] = 0;
      touched.push_back(link.dst);
      frontier.push({0, link.dst});
      std::size_t found = 0;
      while (!frontier.empty() && found < kFasterSourceBudget) {
        auto [at, node] = frontier.top();
        frontier.pop();
        if (at > distance[node]) continue;
        if (node != link.dst && node != link.src) {
          faster_sources_.push_back(node);
          ++faster_offsets_[id + 1];
          ++found;
        }
        for (LinkId in : adjacency_.in(node)) {
          const NodeId from = topology_.link(in).src;
          const Tick candidate = at + link_ticks_[in];
          if (candidate >= radius || candidate >= distance[from]) continue;
          if (distance[from] == std::numeric_limits<Tick>::max()) touched.push_back(from);
          distance[from] = candidate;
          frontier.push({candidate, from});
        }
      }
      while (!frontier.empty()) frontier.pop();
      for (NodeId node : touched) distance[node] = std::numeric_limits<Tick>::max();
      touched.clear();
    }
  }

  /// A chunk u holds that v neither holds nor awaits, for link u->v; kNoChunk when there is none
  /// worth sending. Prefers chunks no faster source of v holds or awaits (sending those over
  /// this link would race a quicker delivery), then the ones the fewest of v's other in-neighbours
  /// hold. A link whose every candidate is beaten by a faster path stays idle until its source
  /// receives something new.
  ChunkId best_offer(LinkId link, NodeId v, std::span<const ChunkId> taken, Rng& rng) {
    const NodeId u = topology_.link(link).src;
    const std::span<const NodeId> faster(faster_sources_.data() + faster_offsets_[link],
                                         faster_sources_.data() + faster_offsets_[link + 1]);
    const std::uint64_t* offered = holds_.data() + static_cast<std::size_t>(u) * words_;
    const std::uint64_t* had = have_.data() + static_cast<std::size_t>(v) * words_;
    const std::size_t start = rng.below(words_);
    ChunkId best = kNoChunk;
    std::uint32_t best_rarity = ~std::uint32_t{0};
    int sampled = 0;
    int examined = 0;
    // Looks at one word's candidates; true when the search is over.
    auto consider_word = [&](std::size_t w) {
      std::uint64_t bits = offered[w] & ~had[w];
      if (bits == 0) return false;
      // Rotate so the first candidate in this word is a random one, not always the lowest bit.
      const unsigned shift = static_cast<unsigned>(rng.below(64));
      std::uint64_t rotated = std::rotr(bits, static_cast<int>(shift));
      for (; rotated != 0; rotated &= rotated - 1) {
        if (sampled >= kRaritySample || examined >= kExamineBudget) return true;
        const unsigned bit = (static_cast<unsigned>(std::countr_zero(rotated)) + shift) % 64;
        const ChunkId chunk = static_cast<ChunkId>(w * 64 + bit);
        if (std::find(taken.begin(), taken.end(), chunk) != taken.end()) continue;
        ++examined;
        bool beaten = false;
        for (NodeId x : faster) beaten = beaten || test_bit(have_, x, chunk);
        if (beaten) continue;
        ++sampled;
        std::uint32_t rarity = 0;
        for (LinkId id : adjacency_.in(v)) {
          const NodeId x = topology_.link(id).src;
          if (x != u && test_bit(holds_, x, chunk)) ++rarity;
        }
        if (rarity < best_rarity) {
          best_rarity = rarity;
          best = chunk;
          if (rarity == 0) return true;
        }
      }
      return sampled >= kRaritySample || examined >= kExamineBudget;
    };
    // Words cyclically from `start`, skipping those v has complete (the summary's clear bits):
    // late in a run almost every word is complete, and scanning them was most of the cost.
    const std::uint64_t* wanted = want_words_.data() + static_cast<std::size_t>(v) * summary_words_;
    const std::size_t first = start / 64;
    const std::uint64_t from_start = ~std::uint64_t{0} << (start % 64);
    for (std::size_t pass = 0; pass < 2; ++pass) {
      for (std::size_t s = pass == 0 ? first : 0; s < summary_words_ && (pass == 0 || s <= first); ++s) {
        std::uint64_t mask = wanted[s];
        if (s == first) mask &= pass == 0 ? from_start : ~from_start;
        for (; mask != 0; mask &= mask - 1) {
          if (consider_word(s * 64 + static_cast<std::size_t>(std::countr_zero(mask)))) return best;
        }
      }
    }
    return best;
  }

  const std::function<void(double)>& progress_;
  const GiveUp give_up_;
  const Topology& topology_;
  const Adjacency adjacency_;
  const SynthPolicy policy_;
  const std::uint64_t seed_;
  const std::uint32_t max_per_transfer_;
  const double chunk_bytes_;
  const double aggregate_wait_;
  const bool end_game_;
  const bool rounds_;
  bool round_open_ = true;  ///< rounds_: no transfer in flight at this event (match_all)
  const std::uint32_t nodes_;
  const std::uint32_t chunks_;
  const std::size_t words_;
  const std::size_t summary_words_;

  std::vector<std::uint64_t> holds_;       ///< per NPU, chunks it holds
  std::vector<std::uint64_t> have_;        ///< per NPU, chunks it holds or has on the way
  std::vector<std::uint64_t> want_words_;  ///< per NPU, the words of have_ not yet complete
  std::vector<std::uint32_t> held_count_;
  std::vector<std::uint32_t> have_count_;
  std::vector<char> is_member_;
  std::uint32_t members_unfinished_ = 0;

  std::vector<Tick> link_ticks_;
  std::vector<std::uint32_t> faster_offsets_;  ///< per link, a range of faster_sources_
  std::vector<NodeId> faster_sources_;
  std::vector<Tick> link_free_at_;  ///< the link is free at t when link_free_at_ <= t
  std::vector<char> link_idle_;     ///< free and found nothing to carry at its last match

  std::vector<NodeId> dirty_;
  std::vector<std::uint32_t> dirty_stamp_;
  std::uint32_t stamp_ = 0;
  std::vector<std::uint32_t> match_count_;    ///< per destination, this event
  std::vector<std::uint32_t> merged_count_;   ///< per destination, matches of earlier tiers merged
  std::vector<Tick> tier_ticks_;              ///< the distinct link times, ascending
  std::vector<char> tier_reads_others_;       ///< per tier: some link has faster sources
  std::vector<MatchedTransfer> match_slots_;  ///< per destination, a block of in-degree slots
  ThreadLocal<Scratch> scratch_;

  ArrivalQueues arrivals_;
  std::vector<std::uint32_t> link_inflight_;  ///< the (first) transfer on each link, or kNotDelivered
  // Aggregated runs: chunks in flight per link, each destination's matches of this event, and
  // per log entry its transfer (group) and per group its time on its link.
  std::vector<std::uint32_t> inflight_count_;
  std::vector<std::vector<MatchedTransfer>> aggregated_slots_;
  std::vector<std::uint32_t> group_of_;
  std::vector<Tick> group_ticks_;
  /// Per NPU, when the first transfer in flight into it lands (kNever: none).
  std::vector<Tick> next_gain_;
  static constexpr Tick kNever = std::numeric_limits<Tick>::max();
  std::vector<LinkId> arrived_links_;
  std::vector<char> gained_;  ///< per NPU: received data at this event
  TransferLog transfers_;
  std::vector<Tick> event_times_;
};

}  // namespace

namespace {
std::uint32_t event_at(const std::vector<Tick>& event_times, std::uint32_t start_event, Tick duration) {
  const Tick end = event_times[start_event] + duration;
  const auto found = std::lower_bound(event_times.begin() + start_event, event_times.end(), end);
  if (found == event_times.end() || *found != end)
    throw std::logic_error("all-gather trace: a transfer ends between events");
  return static_cast<std::uint32_t>(found - event_times.begin());
}
}  // namespace

std::uint32_t AllGatherTrace::end_event_of(std::size_t i) const {
  const MatchedTransfer& transfer = transfers[i];
  return event_at(event_times, transfer.event, grouped() ? group_ticks[group_of[i]] : link_ticks[transfer.link]);
}

Tick transfer_ticks(double us) {
  const double ticks = std::ceil(us * kTicksPerUs);
  if (!(ticks <= static_cast<double>(kMaxTransferTicks))) {
    throw PlanTooLong("", "--size",
                      "one transfer of this collective takes " + format_time_us(us) +
                          " on a link: longer than tenet plans (a transfer at most 20 hours, a plan at most 26 days; "
                          "plans are timed in picoseconds); use a smaller size or more --chunks-per-npu");
  }
  return std::max<Tick>(1, static_cast<Tick>(ticks));
}

void check_plan_length(Tick now) {
  if (now <= kMaxPlanTicks) return;
  throw PlanTooLong("", "--size",
                    "the plan of this collective passes 26 days: longer than tenet plans (plans are timed in "
                    "picoseconds); use a smaller size");
}

Tick chunk_by_chunk_floor(const AllGatherProblem& problem, SynthPolicy policy) {
  if (policy != SynthPolicy::kTacos && problem.max_chunks_per_transfer > 1) return 0;
  const std::uint64_t chunks = static_cast<std::uint64_t>(problem.members.size()) * problem.chunks_per_member;
  return ingress_floor(Adjacency(*problem.topology), chunk_ticks(*problem.topology, problem.chunk_bytes),
                       problem.members, chunks - problem.chunks_per_member);
}

AllGatherTrace run_all_gather(const AllGatherProblem& problem, SynthPolicy policy, std::uint64_t seed,
                              const std::function<void(double)>& progress, const GiveUp& give_up) {
  Engine engine(problem, policy, seed, progress, give_up);
  return engine.run();
}

}  // namespace tenet::synth
