// SPDX-License-Identifier: MIT
#pragma once
// The verifier's passes and what they share. verifier.hpp states the model; this file states how
// it is computed.
//
// Pipeline (verifier.cpp): survey (structure, in one pass) -> replay order -> fast replay (all-gather or reductions) ->
// exact overlap sweep (reductions only) -> first problem in replay order.
//
// Replay order. Transfers start in (start, id) order; a pending end at time e is applied before a
// start at time s when e <= s (so data written at t is readable at t). Times are the planned ones
// made monotone along dependencies ("effective" times: a transfer starts no earlier than its
// dependencies end, and ends no earlier than it starts). Within the tolerance the timing check
// allows, planned times may step backwards by rounding; effective times never do, so a dependency
// is always applied before its dependent reads, and effective end times grow along every path of
// the DAG, which is what makes the ancestry search's pruning exact.
//
// Every replay event (a start or an end) has a position, its index in that order. Problems carry
// the position where they occur so that passes that run separately (the fast replay and the exact
// overlap sweep) can agree on which problem came first.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../sim/route_table.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::verify_detail {

/// The verifier's one time tolerance: a <= b holds when a <= b + 1e-9 * max(1, |b|). Planned times
/// are sums of doubles, so equal times computed along different paths differ in the last bits;
/// the tolerance is relative for large times and 1e-9 us absolute below 1 us.
inline bool time_leq(double a, double b) { return a <= b + 1e-9 * std::max(1.0, std::fabs(b)); }

constexpr TransferId kNoTransfer = ~TransferId{0};

/// Transfer ids must leave the top bit free: the overlap sweep tags end events with it.
constexpr std::uint64_t kMaxTransfers = (std::uint64_t{1} << 31) - 1;

/// Position of problems found after the last event (the postcondition).
constexpr std::uint64_t kAfterReplay = ~std::uint64_t{0};

/// Shortest text that reads back as the same double: "1.5", "2", "0.1".
std::string format_number(double value);

namespace text {
inline void append(std::string& out, const std::string& part) { out += part; }
inline void append(std::string& out, const char* part) { out += part; }
template <typename Number, typename = std::enable_if_t<std::is_arithmetic_v<Number>>>
void append(std::string& out, Number part) {
  if constexpr (std::is_floating_point_v<Number>) {
    out += format_number(static_cast<double>(part));
  } else {
    out += std::to_string(part);
  }
}
}  // namespace text

/// Concatenates strings and numbers (doubles in their shortest form) into one message.
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (text::append(out, parts), ...);
  return out;
}

/// "transfer 17 (NPU 3 -> NPU 4, chunk 5)", "transfer 17 (NPU 3 -> NPU 4, 8 chunks)". NPUs by
/// their ids in the topology file. Requires valid endpoints.
std::string transfer_label(const Topology& topology, const Schedule& schedule, TransferId id);
/// The same, naming one chunk of the transfer.
std::string transfer_label(const Topology& topology, const Schedule& schedule, TransferId id, ChunkId chunk);

/// Dense row numbers for the NPUs that can ever hold data: member i is row i, then every other
/// NPU some transfer touches, in order of first appearance. Slots are rows x chunks, so a
/// sub-collective on a large topology pays only for the NPUs it uses.
struct SlotRows {
  static constexpr std::uint32_t kNoRow = ~std::uint32_t{0};
  std::vector<std::uint32_t> row_of;  ///< per NPU id; kNoRow when no transfer touches it
  std::uint32_t rows = 0;
};

/// The structure pass and what it learns on the way, so that no later pass has to walk the
/// transfers (tens of millions of them, gigabytes) again just to set up.
struct Survey {
  std::string problem;  ///< the first structural problem, or "" when well formed
  SlotRows rows;
  bool links_planned = false;  ///< every transfer names its planned link
  bool times_monotone = true;  ///< exactly: every transfer starts after its dependencies end, ends after it starts
  bool starts_sorted = true;   ///< ids are already in start order
  /// Within the time tolerance: every transfer starts after its dependencies end and, when links
  /// are planned, lasts as long as its link needs (what TimingChecks would check one at a time).
  bool durations_and_deps_hold = true;
  std::uint64_t chunk_entries = 0;
  /// The routes the simulator gives transfers that name neither a link nor a route (null when
  /// there are none): such a transfer must last at least its route's time.
  std::shared_ptr<const sim::RouteTable> routes;
};

/// How long a transfer that names neither a link nor a route needs at least: its route's latency
/// and its bytes at the route's slowest link, as link_time_us and path_time_us count them.
inline double routed_time_us(const sim::RouteTable& routes, const Transfer& transfer, double bytes) {
  const sim::RouteId route = routes.route_of(transfer);
  return routes.alpha_us(route) + bytes / routes.bottleneck_bytes_per_us(route);
}

/// Checks ids, chunks, kinds, dependency order, times and planned links in transfer order,
/// stopping at the first problem.
Survey survey_schedule(const Topology& topology, const Schedule& schedule);

/// Start order and effective times of the transfers.
class ReplayOrder {
 public:
  /// Requires a schedule that passed the survey.
  ReplayOrder(const Schedule& schedule, const Survey& survey);

  std::size_t size() const { return schedule_->size(); }
  /// The i-th transfer to start.
  TransferId at(std::size_t i) const { return order_.empty() ? static_cast<TransferId>(i) : order_[i]; }
  double start(TransferId id) const {
    return effective_start_.empty() ? schedule_->start_us(id) : effective_start_[id];
  }
  double end(TransferId id) const { return effective_end_.empty() ? schedule_->end_us(id) : effective_end_[id]; }

 private:
  const Schedule* schedule_;
  // Both empty when the planned times already never step backwards (the usual case), so the
  // common path costs no memory; order_ is empty when ids are already in start order.
  std::vector<double> effective_start_;
  std::vector<double> effective_end_;
  std::vector<TransferId> order_;
};

/// A transfer that has started and whose end is not applied yet; `payload` is the replay's own
/// (where its snapshot lives).
struct PendingEnd {
  double end = 0.0;
  TransferId id = kNoTransfer;
  std::uint64_t payload = 0;
};

/// The started transfers, earliest (end, id) first. Most schedules end transfers in the order
/// they start (a step's transfers all last as long), so ends that come in order wait in a FIFO at
/// O(1) and only the others pay for a heap.
class PendingEnds {
 public:
  bool empty() const { return head_ == fifo_.size() && heap_.empty(); }
  void clear() {
    fifo_.clear();
    head_ = 0;
    heap_.clear();
  }
  void push(const PendingEnd& pending) {
    if (head_ == fifo_.size() || !later(fifo_.back(), pending)) {
      if (head_ == fifo_.size()) {
        fifo_.clear();
        head_ = 0;
      }
      fifo_.push_back(pending);
    } else {
      heap_.push_back(pending);
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  /// The earliest end; requires !empty().
  const PendingEnd& top() const {
    if (heap_.empty()) return fifo_[head_];
    if (head_ == fifo_.size()) return heap_.front();
    return later(fifo_[head_], heap_.front()) ? heap_.front() : fifo_[head_];
  }
  PendingEnd pop() {
    const PendingEnd earliest = top();
    if (!heap_.empty() && (head_ == fifo_.size() || later(fifo_[head_], heap_.front()))) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
    } else if (++head_ > 4096 && head_ * 2 > fifo_.size()) {
      fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return earliest;
  }

 private:
  static bool later(const PendingEnd& a, const PendingEnd& b) { return a.end != b.end ? a.end > b.end : a.id > b.id; }

  std::vector<PendingEnd> fifo_;  ///< sorted; entries before head_ are done
  std::size_t head_ = 0;
  std::vector<PendingEnd> heap_;  ///< min-heap of the ends that came out of order
};

/// How far ahead of the current start replay_events announces transfers: far enough for memory
/// to answer before the replay gets there, near enough that the lines are still cached.
constexpr std::size_t kLookahead = 16;

/// A replay_events hook that announces nothing.
struct NoLookahead {
  void operator()(TransferId) const {}
};

/// A replay_events filter that keeps every transfer.
struct EveryTransfer {
  bool operator()(TransferId) const { return true; }
};

/// Walks the events in replay order. on_start(id, position, payload&) and on_end(const PendingEnd&,
/// position) return false to stop. Returns true when every event was visited. `pending` is
/// scratch passed in so that repeated walks reuse its memory. look_ahead(id) is told about the
/// transfer kLookahead starts ahead, to prefetch its slots: on large schedules the replay
/// otherwise waits on a cache miss for nearly every slot it touches. Transfers `keep` rejects are
/// skipped altogether (a pass over a slice of the chunks); positions then count only the kept ones.
template <typename OnStart, typename OnEnd, typename LookAhead = NoLookahead, typename Keep = EveryTransfer>
bool replay_events(const ReplayOrder& order, PendingEnds& pending, OnStart&& on_start, OnEnd&& on_end,
                   LookAhead&& look_ahead = {}, Keep&& keep = {}) {
  pending.clear();
  std::uint64_t position = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i + kLookahead < order.size() && keep(order.at(i + kLookahead))) look_ahead(order.at(i + kLookahead));
    const TransferId id = order.at(i);
    if (!keep(id)) continue;
    const double start = order.start(id);
    while (!pending.empty() && pending.top().end <= start) {
      if (!on_end(pending.pop(), position++)) return false;
    }
    std::uint64_t payload = 0;
    if (!on_start(id, position++, payload)) return false;
    pending.push({order.end(id), id, payload});
  }
  while (!pending.empty()) {
    if (!on_end(pending.pop(), position++)) return false;
  }
  return true;
}

/// What must hold when a transfer starts, apart from its data: its dependencies have ended, and,
/// when every transfer names its planned link, the link is free and the transfer lasts long enough.
class TimingChecks {
 public:
  /// Checks every transfer up front (in parallel where the checks are independent); a schedule
  /// that passes, the usual case, costs check_start nothing.
  TimingChecks(const Topology& topology, const Schedule& schedule, const ReplayOrder& order, const Survey& survey);
  /// False, with `error` set, on the first problem. Call in start order.
  bool check_start(TransferId id, std::string& error);
  /// True when no transfer has a timing problem; check_start then changes nothing and may be
  /// called from several replays at once.
  bool all_hold() const { return all_hold_; }

 private:
  bool links_never_overlap(const ReplayOrder& order) const;

  const Topology& topology_;
  const Schedule& schedule_;
  const sim::RouteTable* routes_ = nullptr;
  bool links_planned_ = false;
  bool all_hold_ = false;
  std::vector<TransferId> last_on_link_;  ///< the latest transfer started on each link
};

/// Answers "is `writer` an ancestor of `reader`" while the replay runs, cheaply in the usual case
/// (the writer is a direct dependency) and by a pruned backwards search otherwise.
class Ancestry {
 public:
  Ancestry(const Schedule& schedule, const ReplayOrder& order);
  bool is_ancestor(TransferId writer, TransferId reader);

 private:
  bool search(TransferId writer, TransferId reader);
  void ensure_scratch();

  const Schedule& schedule_;
  const ReplayOrder& order_;
  TransferId reader_ = kNoTransfer;      ///< the reader the caches below describe
  TransferId last_found_ = kNoTransfer;  ///< the last writer proven an ancestor of reader_
  bool reader_deps_marked_ = false;
  bool reader_grandparents_marked_ = false;
  /// Dependencies of dependencies stamped per reader at most (is_ancestor).
  static constexpr std::size_t kGrandparentLimit = 4096;
  // known_[x] == reader_ + 1: x is a proven ancestor of reader_. visited_[x] == epoch_: the current
  // search reached x. Both are allocated on the first search, which most schedules never need.
  std::vector<std::uint32_t> known_;
  std::vector<std::uint32_t> visited_;
  std::uint32_t epoch_ = 0;
  std::vector<TransferId> stack_;
};

/// The outcome of a fast replay.
struct ReplayOutcome {
  std::string error;                      ///< empty: the replay and the postcondition passed
  std::uint64_t position = kAfterReplay;  ///< where the problem occurred
  std::uint64_t transfers_checked = 0;
  std::uint64_t redundant_copies = 0;
};

/// All-gather: a slot is empty or holds the whole chunk, so it is just the transfer that last
/// wrote it (4 bytes a slot).
ReplayOutcome replay_all_gather(const Topology& topology, const Schedule& schedule, const ReplayOrder& order,
                                const Survey& survey);

/// Reduce-scatter and all-reduce: a slot holds a set of contributions as (count, sum of keys).
ReplayOutcome replay_reductions(const Topology& topology, const Schedule& schedule, const ReplayOrder& order,
                                const Survey& survey);

/// The first reduce, in replay order, whose source and destination share a contribution.
struct Overlap {
  bool found = false;
  std::uint64_t position = kAfterReplay;
  TransferId transfer = kNoTransfer;
  ChunkId chunk = 0;
};

/// 64-bit words in a member set.
inline std::uint64_t words_per_set(const Schedule& schedule) { return (schedule.members().size() + 63) / 64; }

/// Replays events up to `last_position` (inclusive) with exact member sets, one chunk at a time
/// (O(rows x members / 8) bytes for the sets, O(chunk entries) for the per-chunk event lists), and
/// returns the first overlapping reduce. The fast replay's (count, sum) sets see an overlap only
/// when it makes a set too large; this sweep sees every one.
Overlap find_first_overlap(const Schedule& schedule, const ReplayOrder& order, const SlotRows& rows,
                           std::uint64_t last_position);

}  // namespace tenet::verify_detail
