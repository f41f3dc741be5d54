// SPDX-License-Identifier: MIT
// Switch-native all-gather: the TEN greedy matching of all_gather_engine.cpp, planned on the
// physical links of a topology with switches instead of on point-to-point links unwound from them.
//
// Model (fabric.hpp). A transfer is a chunk on a channel: one NPU-to-NPU link, or a route
// u -> switch ... switch -> v that holds every physical link on it (one lane of each) for
// alpha(route) + chunk / bottleneck(route). Because each transfer's bottleneck is a link it has to
// itself, that is also its time under max-min fair sharing on the real switches: the plan holds.
//
// Matching. At every event (a transfer ending), NPUs are visited in a rotation that starts at a
// random place (seed, event); each visits its free in-ports, fastest tier first across all NPUs
// (so a slow port sees what its NPU's fast neighbours were just given), and fills each with the
// best chunk some sender can offer: a direct link's sender is fixed; a switch port scans the
// NPUs on that switch group from a random place for one whose own port and some fabric path are
// free and that holds a chunk worth sending. Senders' ports are shared by every receiver, which
// is why this matching is sequential within an event; candidates (chunk counts, seeds) run in
// parallel around it, and the result is the same for any thread count.
//
// Chunk choice is tenet's rule: skip chunks a faster source of v (an NPU that reaches v quicker
// than this port) holds or awaits, prefer the ones fewest of v's direct neighbours hold.
//
// Aggregated (max_chunks_per_transfer above 1). A port takes, in one transfer, every chunk its
// sender can offer v under the same rules, up to the cap: it holds its channel for
// alpha(route) + k chunk / bottleneck(route), still a link it has to itself, so the plan still
// holds. A switch port then asks every sender of a pass (within the budget) and takes the one
// offering the most: where alphas dominate, a transfer is worth what it carries. The transfer is
// logged as one group of k entries (AllGatherTrace::group_of), assembled like the point-to-point
// engine's.

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "all_gather_engine.hpp"
#include "fabric.hpp"
#include "tenet/baselines/ring.hpp"
#include "tenet/common/random.hpp"
#include "tenet/common/units.hpp"

namespace tenet::synth {
namespace {

constexpr std::uint32_t kNoChannel = ~std::uint32_t{0};
/// Free senders a switch port asks for a chunk per event before it gives up until the next: large
/// switch groups (128 NPUs on a ring-fc-switch plane) would otherwise scan every sender's chunks
/// for every port at every event, mostly in vain late in the run.
constexpr int kSenderBudget = 32;

struct InFlight {
  Tick end;
  std::uint32_t transfer;  ///< the first of its entries in the log
  std::uint32_t chunks;    ///< entries from `transfer` on that it carries
  bool operator>(const InFlight& other) const { return end != other.end ? end > other.end : transfer > other.transfer; }
};

class SwitchEngine {
 public:
  SwitchEngine(const AllGatherProblem& problem, std::uint64_t seed, SenderOrder order,
               const std::function<void(double)>& progress, const GiveUp& give_up)
      : order_(order),
        progress_(progress),
        give_up_(give_up),
        topology_(*problem.topology),
        adjacency_(*problem.topology),
        fabric_(*problem.topology),
        seed_(seed),
        chunk_bytes_(problem.chunk_bytes),
        max_per_transfer_(std::max<std::uint32_t>(1, problem.max_chunks_per_transfer)),
        nodes_(problem.topology->npu_count()),
        chunks_(static_cast<std::uint32_t>(problem.members.size()) * problem.chunks_per_member),
        words_((chunks_ + 63) / 64),
        summary_words_((words_ + 63) / 64),
        transfers_(problem.log_block_bits) {
    members_unfinished_ =
        initial_chunk_state(problem, nodes_, chunks_, words_, holds_, have_, held_count_, have_count_, is_member_);
    held_words_.assign(static_cast<std::size_t>(nodes_) * summary_words_, 0);
    want_words_.assign(static_cast<std::size_t>(nodes_) * summary_words_, 0);
    for (NodeId v = 0; v < nodes_; ++v) {
      for (std::size_t w = 0; w < words_; ++w) {
        const std::size_t at = static_cast<std::size_t>(v) * words_ + w;
        const std::size_t summary = static_cast<std::size_t>(v) * summary_words_ + w / 64;
        if (holds_[at] != 0) held_words_[summary] |= std::uint64_t{1} << (w % 64);
        if (have_[at] != ~std::uint64_t{0}) want_words_[summary] |= std::uint64_t{1} << (w % 64);
      }
    }
    switches_of_.resize(nodes_);
    switch_have_.assign(static_cast<std::size_t>(topology_.switch_count()) * words_, 0);
    for (const Link& link : topology_.links()) {
      if (link.src < nodes_ && topology_.is_switch(link.dst)) switches_of_[link.src].push_back(link.dst - nodes_);
    }
    for (ChunkId chunk = 0; chunk < chunks_; ++chunk)
      mark_near(problem.members[chunk / problem.chunks_per_member], chunk);
    busy_.assign(topology_.link_count(), 0);
    direct_channel_.assign(topology_.link_count(), kNoChannel);
    for (LinkId id = 0; id < topology_.link_count(); ++id) {
      const Link& link = topology_.link(id);
      if (link.src < nodes_ && link.dst < nodes_) direct_channel_[id] = add_channel(link.src, link.dst, {&id, 1});
    }
    if (order_ == SenderOrder::kRingFirst) {
      ring_neighbours_.assign(2 * static_cast<std::size_t>(nodes_), kNoNode);
      const std::vector<NodeId> ring = ring_embedding(topology_, problem.members).order;
      for (std::size_t i = 0; i < ring.size(); ++i) {
        ring_neighbours_[2 * static_cast<std::size_t>(ring[i])] = ring[(i + ring.size() - 1) % ring.size()];
        ring_neighbours_[2 * static_cast<std::size_t>(ring[i]) + 1] = ring[(i + 1) % ring.size()];
      }
    }
    find_port_tiers();
    find_faster_sources();
  }

  AllGatherTrace run() {
    Tick now = 0;
    std::uint64_t event = 0;
    const double needed = static_cast<double>(members_unfinished_) * chunks_;
    while (members_unfinished_ > 0) {
      if (progress_ && event % kProgressEvents == 0 && needed > 0) {
        progress_(std::min(1.0, static_cast<double>(transfers_.size()) / needed));
      }
      event_times_.push_back(now);
      match_all(static_cast<std::uint32_t>(event));
      if (in_flight_.empty()) {
        // The preferences (ring neighbours, faster paths, chunks the switch lacks) can leave
        // every port waiting for a transfer that none of them will start: then this event is
        // matched once more without them, which always finds one on a connected network.
        relaxed_ = true;
        match_all(static_cast<std::uint32_t>(event));
        relaxed_ = false;
      }
      if (in_flight_.empty()) throw std::logic_error("switch-native synthesis stalled with members unfinished");
      now = in_flight_.top().end;
      check_plan_length(now);
      if (give_up_.past(now)) return AllGatherTrace::stopped_early();
      ++event;
      while (!in_flight_.empty() && in_flight_.top().end == now) {
        land(in_flight_.top());
        in_flight_.pop();
      }
    }
    event_times_.push_back(now);
    AllGatherTrace trace;
    trace.finish = now;
    trace.event_times = std::move(event_times_);
    trace.chunk_count = chunks_;
    link_feeders(transfers_, nodes_, chunks_, channels_.src, channels_.dst);
    trace.group_of = std::move(group_of_);
    trace.group_ticks = std::move(group_ticks_);
    prune_unforwarded(trace, transfers_, is_member_, channels_.dst);
    trace.link_ticks = std::move(channel_ticks_);
    trace.channels = std::move(channels_);
    return trace;
  }

 private:
  bool test_bit(const std::vector<std::uint64_t>& bits, NodeId node, ChunkId chunk) const {
    return test_chunk_bit(bits, words_, node, chunk);
  }
  void set_bit(std::vector<std::uint64_t>& bits, NodeId node, ChunkId chunk) {
    set_chunk_bit(bits, words_, node, chunk);
  }

  bool aggregated() const { return max_per_transfer_ > 1; }

  /// Time of `chunks` chunks in one transfer over `route`, rounded up to a tick.
  Tick ticks_of(std::span<const LinkId> route, std::uint32_t chunks = 1) const {
    return transfer_ticks(path_time_us(topology_, route, chunk_bytes_ * chunks));
  }

  std::uint32_t add_channel(NodeId src, NodeId dst, std::span<const LinkId> route) {
    channels_.src.push_back(src);
    channels_.dst.push_back(dst);
    channels_.route_links.insert(channels_.route_links.end(), route.begin(), route.end());
    channels_.route_offsets.push_back(channels_.route_links.size());
    channel_ticks_.push_back(ticks_of(route));
    return static_cast<std::uint32_t>(channels_.size() - 1);
  }

  /// The channel u -> v over `up`, switch path `path`, and `down`, made on first use.
  std::uint32_t switched_channel(const Attachment& from, std::uint32_t path, LinkId down) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>>& known = switched_[std::uint64_t{from.up} << 32 | down];
    for (const auto& [known_path, channel] : known) {
      if (known_path == path) return channel;
    }
    route_.clear();
    route_.push_back(from.up);
    const std::span<const LinkId> middle = fabric_.path_links(path);
    route_.insert(route_.end(), middle.begin(), middle.end());
    route_.push_back(down);
    const std::uint32_t channel = add_channel(from.npu, topology_.link(down).dst, route_);
    known.push_back({path, channel});
    return channel;
  }

  /// Each in-port's tier: its fastest channel's time. Ports are matched tier by tier.
  void find_port_tiers() {
    port_ticks_.assign(topology_.link_count(), 0);
    for (NodeId v = 0; v < nodes_; ++v) {
      for (LinkId port : adjacency_.in(v)) {
        const NodeId from = topology_.link(port).src;
        if (from < nodes_) {
          port_ticks_[port] = channel_ticks_[direct_channel_[port]];
          continue;
        }
        Tick best = std::numeric_limits<Tick>::max();
        for (const Attachment& attachment : fabric_.attachments(fabric_.group_of(from))) {
          if (attachment.npu == v) continue;
          const std::span<const std::uint32_t> paths = fabric_.paths(attachment.sw, from);
          if (paths.empty()) continue;
          best = std::min(best, route_ticks(attachment.up, paths.front(), port));
        }
        port_ticks_[port] = best;
      }
    }
    for (LinkId port = 0; port < topology_.link_count(); ++port) {
      if (topology_.link(port).dst < nodes_ && port_ticks_[port] != std::numeric_limits<Tick>::max()) {
        tiers_.push_back(port_ticks_[port]);
      }
    }
    std::sort(tiers_.begin(), tiers_.end());
    tiers_.erase(std::unique(tiers_.begin(), tiers_.end()), tiers_.end());
  }

  Tick route_ticks(LinkId up, std::uint32_t path, LinkId down) {
    route_.clear();
    route_.push_back(up);
    const std::span<const LinkId> middle = fabric_.path_links(path);
    route_.insert(route_.end(), middle.begin(), middle.end());
    route_.push_back(down);
    return ticks_of(route_);
  }

  /// For every in-port of every NPU v, the NPUs (other than v) that reach v faster than a chunk
  /// crosses that port, by a Dijkstra backwards from v over channels, bounded by the port's time
  /// and a budget. What they hold or await will reach v sooner another way.
  void find_faster_sources() {
    faster_offsets_.assign(topology_.link_count() + 1, 0);
    std::vector<Tick> distance(nodes_, std::numeric_limits<Tick>::max());
    std::vector<NodeId> touched;
    std::priority_queue<std::pair<Tick, NodeId>, std::vector<std::pair<Tick, NodeId>>, std::greater<>> frontier;
    const Tick fastest = tiers_.empty() ? 0 : tiers_.front();
    for (LinkId port = 0; port < topology_.link_count(); ++port) {
      faster_offsets_[port + 1] = faster_offsets_[port];
      const Link& link = topology_.link(port);
      if (link.dst >= nodes_ || port_ticks_[port] <= fastest) continue;
      const Tick radius = port_ticks_[port];
      const NodeId v = link.dst;
      distance[v] = 0;
      touched.push_back(v);
      frontier.push({0, v});
      std::size_t found = 0;
      while (!frontier.empty() && found < kFasterSourceBudget) {
        // Not a structured binding: the lambda below captures `at`, which clang 14 refuses.
        const Tick at = frontier.top().first;
        const NodeId node = frontier.top().second;
        frontier.pop();
        if (at > distance[node]) continue;
        if (node != v) {
          faster_sources_.push_back(node);
          ++faster_offsets_[port + 1];
          ++found;
        }
        auto relax = [&](NodeId from, Tick cost) {
          const Tick candidate = at + cost;
          if (candidate >= radius || candidate >= distance[from]) return;
          if (distance[from] == std::numeric_limits<Tick>::max()) touched.push_back(from);
          distance[from] = candidate;
          frontier.push({candidate, from});
        };
        for (LinkId in : adjacency_.in(node)) {
          const NodeId from = topology_.link(in).src;
          if (from < nodes_) {
            relax(from, channel_ticks_[direct_channel_[in]]);
            continue;
          }
          for (const Attachment& attachment : fabric_.attachments(fabric_.group_of(from))) {
            if (attachment.npu == node) continue;
            const std::span<const std::uint32_t> paths = fabric_.paths(attachment.sw, from);
            if (!paths.empty()) relax(attachment.npu, route_ticks(attachment.up, paths.front(), in));
          }
        }
      }
      while (!frontier.empty()) frontier.pop();
      for (NodeId node : touched) distance[node] = std::numeric_limits<Tick>::max();
      touched.clear();
    }
  }

  bool free(LinkId link) const { return busy_[link] < fabric_.lanes(link); }

  void match_all(std::uint32_t event) {
    Rng rng(mix_seed(seed_, event));
    const NodeId start = static_cast<NodeId>(rng.below(nodes_));
    // Ring-first sweeps every receiver for its ring neighbours before any takes another sender:
    // otherwise a receiver whose neighbours are busy would take a sender from the one after it.
    for (bool ring_only : {true, false}) {
      if (ring_only && (order_ != SenderOrder::kRingFirst || relaxed_)) continue;
      ring_only_ = ring_only;
      for (Tick tier : tiers_) {
        for (NodeId k = 0; k < nodes_; ++k) {
          const NodeId v = start + k < nodes_ ? start + k : start + k - nodes_;
          if (have_count_[v] == chunks_) continue;
          for (LinkId port : adjacency_.in(v)) {
            if (port_ticks_[port] != tier || !free(port)) continue;
            match_port(v, port, event, rng);
            if (have_count_[v] == chunks_) break;
          }
        }
      }
    }
  }

  void match_port(NodeId v, LinkId port, std::uint32_t event, Rng& rng) {
    const NodeId from = topology_.link(port).src;
    if (from < nodes_) {
      if (ring_only_) return;
      if (aggregated()) {
        if (collect_offer(from, v, port, nullptr, rng) > 0) start_group(direct_channel_[port], event);
        return;
      }
      const ChunkId chunk = best_offer(from, v, port, nullptr, rng);
      if (chunk != kNoChunk) start_transfer(direct_channel_[port], chunk, event);
      return;
    }
    // Ordered by distance (SenderOrder), a sender across the fabric offers only chunks no NPU on
    // the port's switch holds or awaits: a fabric link (where a network is usually thinnest)
    // never carries what the switch already has. Unordered, every sender of the group in one
    // random rotation, any chunk. Ring-first tries v's two neighbours on the ring embedding first.
    const std::span<const Attachment> senders = fabric_.attachments(fabric_.group_of(from));
    const std::uint64_t* near = switch_have_.data() + static_cast<std::size_t>(from - nodes_) * words_;
    const std::size_t count = senders.size();
    const std::size_t first = rng.below(count);
    const bool by_distance = !relaxed_ && (order_ == SenderOrder::kNearFirst || order_ == SenderOrder::kFarFirst);
    // Ring-first sweeps take the ring predecessor (pass 0), then the successor (pass 1): when
    // every receiver prefers its predecessor the senders are matched as a pipelined ring. The
    // other sweeps take the rest: near, then far (pass 2, 3), far, then near, or all at once.
    const int first_pass = ring_only_ ? 0 : 2;
    const int last_pass = ring_only_ ? 0 : by_distance ? 3 : 2;
    if (order_ == SenderOrder::kRingFirst && !ring_only_ && !relaxed_) {
      // A receiver whose predecessor is on this switch group waits for it: the ring stays a ring.
      const NodeId pred = ring_neighbours_[2 * static_cast<std::size_t>(v)];
      if (std::any_of(senders.begin(), senders.end(), [&](const Attachment& a) { return a.npu == pred; })) return;
    }
    int asked = 0;
    // Aggregated, a pass asks all its senders (within the budget) and the one offering the most
    // chunks (up to the cap; ties: the first asked) sends them all in one transfer.
    const std::uint32_t wanted = std::min(max_per_transfer_, chunks_ - have_count_[v]);
    for (int pass = first_pass; pass <= last_pass && asked < kSenderBudget; ++pass) {
      std::uint32_t most = 0;
      const Attachment* best_sender = nullptr;
      std::uint32_t best_path = kNoChannel;
      for (std::size_t k = 0; k < count && asked < kSenderBudget; ++k) {
        const Attachment& sender = senders[first + k < count ? first + k : first + k - count];
        if (pass < 2 && sender.npu != ring_neighbours_[2 * static_cast<std::size_t>(v) + pass]) continue;
        if (by_distance && (sender.sw == from) != (pass == (order_ == SenderOrder::kNearFirst ? 2 : 3))) continue;
        if (sender.npu == v || !free(sender.up)) continue;
        const std::span<const std::uint32_t> paths = fabric_.paths(sender.sw, from);
        std::uint32_t path = kNoChannel;
        const std::size_t offset = paths.size() > 1 ? rng.below(paths.size()) : 0;
        for (std::size_t p = 0; p < paths.size() && path == kNoChannel; ++p) {
          const std::uint32_t candidate = paths[(offset + p) % paths.size()];
          const std::span<const LinkId> links = fabric_.path_links(candidate);
          if (std::all_of(links.begin(), links.end(), [&](LinkId link) { return free(link); })) path = candidate;
        }
        if (path == kNoChannel) continue;
        ++asked;
        if (aggregated()) {
          const std::uint32_t offered =
              count_offer(sender.npu, v, port, by_distance && sender.sw != from ? near : nullptr);
          if (offered <= most) continue;
          most = offered;
          best_sender = &sender;
          best_path = path;
          if (most == wanted) break;
          continue;
        }
        const ChunkId chunk = best_offer(sender.npu, v, port, by_distance && sender.sw != from ? near : nullptr, rng);
        if (chunk == kNoChunk) continue;
        start_transfer(switched_channel(sender, path, port), chunk, event);
        return;
      }
      if (best_sender != nullptr) {
        collect_offer(best_sender->npu, v, port, by_distance && best_sender->sw != from ? near : nullptr, rng);
        start_group(switched_channel(*best_sender, best_path, port), event);
        return;
      }
    }
  }

  /// Every switch `npu` is attached to now holds or awaits `chunk` on one of its NPUs.
  void mark_near(NodeId npu, ChunkId chunk) {
    for (std::uint32_t sw : switches_of_[npu])
      switch_have_[static_cast<std::size_t>(sw) * words_ + chunk_word(chunk)] |= chunk_mask(chunk);
  }

  /// v now holds or awaits `chunk`.
  void mark_had(NodeId v, ChunkId chunk) {
    set_bit(have_, v, chunk);
    const std::size_t w = chunk_word(chunk);
    if (have_[static_cast<std::size_t>(v) * words_ + w] == ~std::uint64_t{0})
      want_words_[static_cast<std::size_t>(v) * summary_words_ + w / 64] &= ~(std::uint64_t{1} << (w % 64));
  }

  void start_transfer(std::uint32_t channel, ChunkId chunk, std::uint32_t event) {
    const NodeId v = channels_.dst[channel];
    mark_had(v, chunk);
    mark_near(v, chunk);
    ++have_count_[v];
    for (LinkId link : channels_.route(channel)) ++busy_[link];
    const std::uint32_t index = static_cast<std::uint32_t>(transfers_.size());
    transfers_.push_back({event, channel, chunk, kNotDelivered});
    in_flight_.push({event_times_[event] + channel_ticks_[channel], index, 1});
  }

  /// Starts one transfer of every chunk in offer_ over `channel`, one alpha for all of them,
  /// logged as one group of entries.
  void start_group(std::uint32_t channel, std::uint32_t event) {
    const NodeId v = channels_.dst[channel];
    for (ChunkId chunk : offer_) {
      mark_had(v, chunk);
      mark_near(v, chunk);
    }
    have_count_[v] += static_cast<std::uint32_t>(offer_.size());
    for (LinkId link : channels_.route(channel)) ++busy_[link];
    const std::uint32_t count = static_cast<std::uint32_t>(offer_.size());
    const Tick ticks = count == 1 ? channel_ticks_[channel] : ticks_of(channels_.route(channel), count);
    const std::uint32_t group = static_cast<std::uint32_t>(group_ticks_.size());
    group_ticks_.push_back(ticks);
    const std::uint32_t index = static_cast<std::uint32_t>(transfers_.size());
    for (ChunkId chunk : offer_) {
      transfers_.push_back({event, channel, chunk, kNotDelivered});
      group_of_.push_back(group);
    }
    in_flight_.push({event_times_[event] + ticks, index, count});
  }

  void land(const InFlight& landed) {
    const std::uint32_t channel = transfers_[landed.transfer].link;
    for (LinkId link : channels_.route(channel)) --busy_[link];
    const NodeId v = channels_.dst[channel];
    for (std::uint32_t k = 0; k < landed.chunks; ++k) {
      const ChunkId chunk = transfers_[landed.transfer + k].chunk;
      set_bit(holds_, v, chunk);
      const std::size_t w = chunk_word(chunk);
      held_words_[static_cast<std::size_t>(v) * summary_words_ + w / 64] |= std::uint64_t{1} << (w % 64);
    }
    held_count_[v] += landed.chunks;
    if (held_count_[v] == chunks_ && is_member_[v]) --members_unfinished_;
  }

  /// Word w of the chunks u holds that v neither holds nor awaits, less those a faster source of
  /// v holds or awaits (best_offer's rule, a word at a time) and, with `near`, those v's switch has.
  std::uint64_t offer_word(NodeId u, NodeId v, LinkId port, const std::uint64_t* near, std::size_t w) const {
    std::uint64_t bits = holds_[static_cast<std::size_t>(u) * words_ + w] &
                         ~have_[static_cast<std::size_t>(v) * words_ + w] &
                         (near == nullptr ? ~std::uint64_t{0} : ~near[w]);
    if (relaxed_) return bits;
    for (std::uint32_t f = faster_offsets_[port]; f < faster_offsets_[port + 1] && bits != 0; ++f) {
      if (faster_sources_[f] != u) bits &= ~have_[static_cast<std::size_t>(faster_sources_[f]) * words_ + w];
    }
    return bits;
  }

  /// How many chunks u would carry to v over `port` in one aggregated transfer (at most the cap).
  std::uint32_t count_offer(NodeId u, NodeId v, LinkId port, const std::uint64_t* near) const {
    std::uint32_t count = 0;
    for_each_offer_word(u, v, 0, [&](std::size_t w) {
      count += static_cast<std::uint32_t>(std::popcount(offer_word(u, v, port, near, w)));
      return count < max_per_transfer_;
    });
    return std::min(count, max_per_transfer_);
  }

  /// Fills offer_ with the chunks u would carry to v over `port` (up to the cap, from a random
  /// word on) and returns how many.
  std::uint32_t collect_offer(NodeId u, NodeId v, LinkId port, const std::uint64_t* near, Rng& rng) {
    offer_.clear();
    for_each_offer_word(u, v, rng.below(words_), [&](std::size_t w) {
      for (std::uint64_t bits = offer_word(u, v, port, near, w); bits != 0 && offer_.size() < max_per_transfer_;
           bits &= bits - 1) {
        offer_.push_back(static_cast<ChunkId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
      }
      return offer_.size() < max_per_transfer_;
    });
    return static_cast<std::uint32_t>(offer_.size());
  }

  /// A chunk u holds that v neither holds nor awaits, worth sending over `port`, or kNoChunk.
  /// Chunks are looked at in a random rotation of each word; each one looked at counts against
  /// the budget, and one a faster source of v holds or awaits is passed over. Those come masked a
  /// word at a time (offer_word), so a passed-over chunk costs a bit count, not a test of every
  /// faster source: a GPU's slow NIC port has all its box-mates as faster sources.
  ChunkId best_offer(NodeId u, NodeId v, LinkId port, const std::uint64_t* near, Rng& rng) {
    const std::uint64_t* offered = holds_.data() + static_cast<std::size_t>(u) * words_;
    const std::uint64_t* had = have_.data() + static_cast<std::size_t>(v) * words_;
    ChunkId best = kNoChunk;
    std::uint32_t best_rarity = ~std::uint32_t{0};
    int sampled = 0;
    int examined = 0;
    for_each_offer_word(u, v, rng.below(words_), [&](std::size_t w) {
      const std::uint64_t bits = offered[w] & ~had[w] & (near == nullptr ? ~std::uint64_t{0} : ~near[w]);
      if (bits == 0) return true;
      const int shift = static_cast<int>(rng.below(64));
      if (sampled >= kRaritySample || examined >= kExamineBudget) return false;
      // In rotated order: the chunk at index j is looked at only while examined + j is within
      // the budget.
      const std::uint64_t rotated = std::rotr(bits, shift);
      const int budget_left = kExamineBudget - examined;
      for (std::uint64_t fresh = std::rotr(offer_word(u, v, port, near, w), shift); fresh != 0; fresh &= fresh - 1) {
        const int at = std::countr_zero(fresh);
        const std::uint64_t before = rotated & ((std::uint64_t{1} << at) - 1);
        if (std::popcount(before) >= budget_left) return false;
        ++sampled;
        const ChunkId chunk = static_cast<ChunkId>(w * 64 + static_cast<unsigned>(at + shift) % 64);
        std::uint32_t rarity = 0;
        for (LinkId in : adjacency_.in(v)) {
          const NodeId x = topology_.link(in).src;
          if (x < nodes_ && x != u && test_bit(holds_, x, chunk)) ++rarity;
        }
        if (rarity < best_rarity) {
          best_rarity = rarity;
          best = chunk;
          if (rarity == 0) return false;
        }
        // The sample is full: the search ends at the next chunk, in this word or the next.
        if (sampled >= kRaritySample) {
          if ((rotated >> at) > 1) return false;
          break;
        }
      }
      const int looked = std::popcount(rotated);
      if (looked > budget_left) return false;
      examined += looked;
      return true;
    });
    return best;
  }

  /// Calls visit(w) for the words w of chunks, from `start` on and then around from 0, in which u
  /// holds something and v lacks something, until visit returns false. Every other word offers
  /// nothing, and skipping it is what keeps a scan short when there are thousands of words (tree-2x2x4
  /// reduce-scatter at 4,096 chunks per NPU: 5.6 -> 4.2 s).
  template <class Visit>
  void for_each_offer_word(NodeId u, NodeId v, std::size_t start, Visit&& visit) const {
    const std::uint64_t* held = held_words_.data() + static_cast<std::size_t>(u) * summary_words_;
    const std::uint64_t* wanted = want_words_.data() + static_cast<std::size_t>(v) * summary_words_;
    for (const auto& [begin, end] : {std::pair{start, words_}, std::pair{std::size_t{0}, start}}) {
      for (std::size_t s = begin / 64; s * 64 < end; ++s) {
        std::uint64_t mask = held[s] & wanted[s];
        if (s == begin / 64) mask &= ~std::uint64_t{0} << (begin % 64);
        if ((s + 1) * 64 > end) mask &= (std::uint64_t{1} << (end % 64)) - 1;
        for (; mask != 0; mask &= mask - 1) {
          if (!visit(s * 64 + static_cast<std::size_t>(std::countr_zero(mask)))) return;
        }
      }
    }
  }

  const SenderOrder order_;
  const std::function<void(double)>& progress_;
  const GiveUp give_up_;
  const Topology& topology_;
  const Adjacency adjacency_;
  const Fabric fabric_;
  const std::uint64_t seed_;
  const double chunk_bytes_;
  const std::uint32_t max_per_transfer_;  ///< chunks one transfer may carry; above 1, aggregated
  const std::uint32_t nodes_;
  const std::uint32_t chunks_;
  const std::size_t words_;
  const std::size_t summary_words_;  ///< words of a per-node summary: a bit per word of chunks

  std::vector<std::uint64_t> holds_;
  std::vector<std::uint64_t> held_words_;  ///< per node, the words of holds_ with a chunk in them
  std::vector<std::uint64_t> want_words_;  ///< per node, the words of have_ not yet complete
  std::vector<std::uint64_t> have_;
  std::vector<std::uint32_t> held_count_;
  std::vector<std::uint32_t> have_count_;
  std::vector<char> is_member_;
  std::uint32_t members_unfinished_ = 0;

  std::vector<NodeId> ring_neighbours_;                  ///< ring-first: per NPU, its predecessor and successor
  bool ring_only_ = false;                               ///< this sweep takes ring neighbours only
  bool relaxed_ = false;                                 ///< this sweep ignores every preference (a stall)
  std::vector<std::vector<std::uint32_t>> switches_of_;  ///< per NPU: the switches it is attached to
  std::vector<std::uint64_t> switch_have_;               ///< per switch: chunks some NPU on it holds or awaits
  std::vector<std::uint32_t> busy_;                      ///< lanes in use, per link
  ChannelTable channels_;
  std::vector<Tick> channel_ticks_;
  std::vector<std::uint32_t> direct_channel_;  ///< per NPU-to-NPU link
  /// Switched channels by (up, down) port pair: (fabric path, channel) for each path used.
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::uint32_t, std::uint32_t>>> switched_;
  std::vector<LinkId> route_;  ///< scratch

  std::vector<Tick> port_ticks_;  ///< per link into an NPU
  std::vector<Tick> tiers_;
  std::vector<std::uint32_t> faster_offsets_;
  std::vector<NodeId> faster_sources_;

  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> in_flight_;
  TransferLog transfers_;
  std::vector<Tick> event_times_;
  // Aggregated runs: the chunks of the transfer being matched (scratch), per log entry its
  // transfer (group) and per group its time on its channel.
  std::vector<ChunkId> offer_;
  std::vector<std::uint32_t> group_of_;
  std::vector<Tick> group_ticks_;
};

}  // namespace

AllGatherTrace run_switch_all_gather(const AllGatherProblem& problem, std::uint64_t seed, SenderOrder order,
                                     const std::function<void(double)>& progress, const GiveUp& give_up) {
  SwitchEngine engine(problem, seed, order, progress, give_up);
  return engine.run();
}

}  // namespace tenet::synth
