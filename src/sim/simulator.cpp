// SPDX-License-Identifier: MIT
// The congestion-aware flow-level simulator.
//
// Model. Every transfer of the schedule goes through four states: waiting (for its dependencies),
// latency (it has been issued and pays the sum of the alphas on its route; it holds no bandwidth),
// flowing (its bytes move at its max-min fair share of every link on its route) and, for a
// reduce when gamma > 0, reducing (gamma * bytes at the destination, again holding no link). It
// finishes at the end of the last state it passes through, and a transfer whose dependencies have
// all finished is issued at that instant. On idle links this gives exactly
// sum(alpha) + bytes / min(bandwidth), the synthesizer's own cost model. Routes come from
// RouteTable (route_table.hpp): the planned link, or the Router's route for the pair.
//
// Planned links are channels. A transfer that names its planned link also waits until the
// transfer planned before it on that link (by planned start, ties by id) has moved its bytes: the
// plan put one chunk on a link at a time, MSCCL runs a connection's sends in program order, and
// the synthesizer emits only data dependencies, so without this rule a chunk that arrives early
// would start beside the one the plan had on the link and both would slow down (a 3x3 mesh
// all-gather would take 897 us instead of its planned 601 us). Only the order of planned times
// is used, never their values; routed transfers (link == kNoLink) share links freely. A plan
// whose start times put a transfer before one of its dependencies has no consistent order (the
// queues would wait in a circle), and none is imposed (LinkQueues).
//
// Max-min fairness. The flowing transfers are the flows; their rates are the max-min fair
// allocation of link capacity (progressive filling: raise all rates together, freeze the flows of
// whichever link saturates first, repeat). Rates change only when a flow starts or ends, and
// between those instants every flow moves at a constant rate, so the simulation jumps from event
// to event: a flow's end time is known exactly from its remaining bytes and its rate.
//
// Incremental recomputation, in four ways.
// 1. Components. The allocation decomposes over the connected components of the "flows sharing a
//    link" graph: a start or an end can only change rates inside the component it touches. So
//    FlowNetwork (flow_network.hpp) keeps, per link, an array of the routes with flows on it,
//    remembers the links where flows started or ended (the seeds), and collects, by a search
//    from each seed, the component around it. A flow alone on all its links (rings, synthesized
//    schedules) simply takes its route's bottleneck bandwidth.
// 2. Levels. Progressive filling never saturates a link of flow f below f's rate r_f (that link
//    would have frozen f there). So when f leaves, the filling below r_f runs exactly as before,
//    and every flow slower than r_f keeps its rate. When a flow g arrives, its links fill faster,
//    but none of them saturates below g's new rate, which is at least min over its links of
//    capacity / flows: again every flow slower than that keeps its rate. A refill therefore
//    restarts at the lowest such level of the batch, takes only the flows at or above it that
//    connect to a change through such flows, and leaves the slower ones in place, their rates
//    only taken off the links' capacity. Flows finishing in order of speed, the usual case,
//    make each refill small.
// 3. Batches. All the events at one instant are applied before one refill, so a step of a
//    baseline that starts a thousand flows at once refills each component once, not a thousand
//    times. Events a rounding error apart count as one instant (tolerances.hpp).
// 4. Routes. Flows on the same route cross the same links, so max-min fairness gives them the
//    same rate: a refill places a route's active flows as one, counted as many on each link, and
//    the event heap holds one end per route, that of its flow with the fewest bytes left (the
//    flows of a route move together, so their order of ending is fixed when they start). Tree
//    pipelines through switches put several pieces on one route at once: tree-4x8's all-reduce
//    of 16 MiB refills 367 flows at a time, on 145 routes.
// A component is filled with a heap of per-link shares, or a scan of them when it has few links
// (flow_network.cpp).
//
// Symmetry. On a torus where every translation maps the network and the schedule onto
// themselves (every NPU does the same thing, shifted: direct and bucket collectives), translated
// transfers have equal times throughout, and the same event loop runs one transfer per orbit on
// the link orbits instead (translation_symmetry.hpp): 2,046 transfers for a 1,024-NPU direct
// all-reduce instead of 2.1 million. The symmetry is checked, never assumed; without it the
// simulation runs as described above.
//
// Skipping. A caller that only ranks schedules (SimOptions::skip_slower_than_us) gets no
// simulation of one that would be long and provably ends after its limit: every link carries its
// bytes at most at its bandwidth, and every transfer needs its route's alphas plus its bytes at
// the route's slowest link, so the larger of those is a lower bound of any simulated time. One
// that only needs to know whether a schedule beats a time (SimOptions::stop_once_slower_than_us)
// has the simulation stopped once that is disproved: every few hundred refills, the time reached
// plus the bytes some link has yet to start, at its bandwidth, is again a lower bound.
//
// Events. Two heaps, both ordered by (time, transfer id), which is a total order because a
// transfer has at most one pending event: a plain one for "latency over" and "reduction over",
// and an indexed one (inside FlowNetwork) for flow ends, whose times move when rates change. A
// flow whose rate is unchanged keeps its end time untouched, so a rate is never re-derived
// needlessly and idle-link times stay exact.
//
// Complexity. Setup O(transfers + dependencies + links) (a link's queue is sorted only when the
// producer did not list it in time order) plus one route per distinct routed (src, dst)
// pair (a tree per source at most). Each transfer then costs O(log pending events) for its
// events plus O(hops) to enter and leave the link lists (O(log flows on its route) to join its
// route's), plus its share of the refills: a refill costs O(memberships of its links + links log
// links) for the part it refills, a membership being a route with flows on the link, which is
// O(hops) for a flow alone. Memory: dependents in CSR form (O(transfers + dependencies), a list
// shared by a run of transfers counted once), per link, per route and per active flow; nothing
// per pair of NPUs.
//
// Tolerances, all in tolerances.hpp: the batch window (events within 1e-12 relative of each
// other share one refill) and the level margin (a refill restarts 1e-9 relative below its level,
// which only enlarges it). Otherwise times are doubles processed in exact (time, id) order, with
// two clamps that do not change exact results: a flow's remaining bytes never go below zero
// after subtracting rate * elapsed, and progressive filling never hands out a share below the
// level already reached (rounding in the residual capacities), so every rate stays positive.

#include "tenet/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>

#include "flow_network.hpp"
#include "route_table.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tolerances.hpp"
#include "translation_symmetry.hpp"

namespace tenet {
namespace {

using sim::FlowNetwork;
using sim::RouteId;
using sim::RouteTable;

/// RouteId marking a timed event as "reduction over" rather than "latency over".
constexpr RouteId kReducing = ~RouteId{0};

struct TimedEvent {
  double time_us;
  TransferId transfer;
  RouteId route;  ///< the route the transfer will flow on, or kReducing
};

/// Heap order: the later (time, transfer) sinks.
bool later(const TimedEvent& a, const TimedEvent& b) {
  return a.time_us > b.time_us || (a.time_us == b.time_us && a.transfer > b.transfer);
}

/// What the event loop reads of the transfers it runs: a schedule's own, routed by a RouteTable.
struct ScheduleTransfers {
  const Schedule& schedule;
  const RouteTable& routes;

  std::size_t size() const { return schedule.size(); }
  std::span<const TransferId> deps(TransferId id) const { return schedule.deps_of(id); }
  /// The same stored list as the transfer before (ScheduleBuilder::add_sharing_deps).
  bool shares_previous(TransferId id) const {
    return id > 0 && !schedule.deps_of(id).empty() && schedule.same_deps(id - 1, id);
  }
  LinkId link(TransferId id) const { return schedule.link(id); }
  RouteId route(TransferId id) const { return routes.route_of(schedule, id); }
  double alpha_us(RouteId route) const { return routes.alpha_us(route); }
  std::uint32_t chunk_count(TransferId id) const { return schedule.chunk_count(id); }
  bool reduces(TransferId id) const { return schedule.kind(id) == TransferKind::kReduce; }
};

/// The same for a symmetric quotient: one transfer per orbit, on link orbits, never on a planned
/// link (translation_symmetry.hpp).
struct QuotientTransfers {
  const Schedule& schedule;
  const sim::SymmetricQuotient& quotient;

  std::size_t size() const { return quotient.transfers.size(); }
  std::span<const TransferId> deps(TransferId q) const {
    return {quotient.deps.data() + quotient.dep_offsets[q], quotient.dep_offsets[q + 1] - quotient.dep_offsets[q]};
  }
  bool shares_previous(TransferId) const { return false; }
  LinkId link(TransferId) const { return kNoLink; }
  RouteId route(TransferId q) const { return q; }
  double alpha_us(RouteId route) const { return quotient.alpha_us[route]; }
  std::uint32_t chunk_count(TransferId q) const { return schedule.chunk_count(quotient.transfers[q]); }
  bool reduces(TransferId q) const { return schedule.kind(quotient.transfers[q]) == TransferKind::kReduce; }
};

/// Who waits for whom, forward, in CSR form: for each transfer, the waiters to notify when it
/// finishes, ascending. Also checks that dependencies point backwards, which makes the graph
/// acyclic.
///
/// Transfers listed one after another with one shared dependency list (ScheduleBuilder's
/// add_sharing_deps: a direct all-reduce's p-1 all-gather sends from one NPU all wait on the same
/// p-1 reductions) form a group that is one waiter: the list is walked once for the group, not
/// once per member. A 1,024-NPU direct all-reduce then has 10^6 edges here, not 10^9 (4 GB). A
/// group's counter reaching zero releases its members at that same instant, exactly as their own
/// counters would have.
struct Dependents {
  static constexpr std::uint32_t kSolo = ~std::uint32_t{0};

  std::vector<std::uint64_t> offsets;
  std::vector<TransferId> ids;          ///< a waiter: a solo transfer, or a group's first member
  std::vector<std::uint32_t> group_of;  ///< per transfer: its group, or kSolo
  std::vector<TransferId> group_first;  ///< per group: its members are group_first[g] .. group_last[g]
  std::vector<TransferId> group_last;
  std::vector<std::uint32_t> group_waiting;  ///< per group: dependencies not yet finished

  template <class Inputs>
  explicit Dependents(const Inputs& inputs) {
    const std::size_t count = inputs.size();
    group_of.assign(count, kSolo);
    offsets.assign(count + 1, 0);
    std::uint64_t total = 0;
    for (TransferId id = 0; id < count; ++id) {
      if (inputs.shares_previous(id)) {
        if (group_of[id - 1] == kSolo) {
          group_of[id - 1] = static_cast<std::uint32_t>(group_first.size());
          group_first.push_back(id - 1);
          group_last.push_back(id - 1);
          group_waiting.push_back(static_cast<std::uint32_t>(inputs.deps(id).size()));
        }
        group_of[id] = group_of[id - 1];
        group_last[group_of[id]] = id;
        continue;  // the list is the previous transfer's, checked and counted there
      }
      for (TransferId dep : inputs.deps(id)) {
        if (dep >= id) {
          std::string message = "transfer " + std::to_string(id);
          message += " depends on transfer " + std::to_string(dep);
          message += ", which does not come before it";
          throw InputError("schedule", "/transfers/" + std::to_string(id) + "/deps", message);
        }
        ++offsets[dep + 1];
        ++total;
      }
    }
    for (std::size_t i = 0; i < count; ++i) offsets[i + 1] += offsets[i];
    ids.resize(total);
    // offsets[d] serves as d's fill cursor and ends at d's end, i.e. d+1's start; shifting the
    // array by one restores the starts without a second array of cursors.
    for (TransferId id = 0; id < count; ++id) {
      if (group_of[id] != kSolo && group_first[group_of[id]] != id) continue;
      for (TransferId dep : inputs.deps(id)) ids[offsets[dep]++] = id;
    }
    for (std::size_t i = count; i > 0; --i) offsets[i] = offsets[i - 1];
    offsets[0] = 0;
  }
};

/// Whether no transfer is planned to start before one of its dependencies: then (planned start,
/// id) orders every transfer after everything it waits for.
bool starts_follow_dependencies(const Schedule& schedule) {
  for (TransferId id = 0; id < schedule.size(); ++id) {
    for (TransferId dep : schedule.deps_of(id)) {
      if (schedule.start_us(dep) > schedule.start_us(id)) return false;
    }
  }
  return true;
}

/// The transfers planned on each link, in planned start order (ties: lower id), as CSR. A link
/// named by the plan is a channel that carries its transfers one after another in that order
/// (see the file comment); cursor[l] is the position of the transfer now allowed on link l.
///
/// The order cannot deadlock when no transfer is planned to start before one of its dependencies:
/// then every wait, for a dependency or for the transfer ahead on the link, is for a transfer
/// earlier in (planned start, id). A plan whose times contradict its dependencies (a hand-edited
/// file; the verifier rejects it) has no order worth keeping, and its links are shared freely.
struct LinkQueues {
  std::vector<std::uint64_t> offsets;
  std::vector<TransferId> ids;
  std::vector<std::uint64_t> cursor;
  bool ordered = false;

  /// No queues: every link shared freely.
  LinkQueues() = default;
  LinkQueues(const Schedule& schedule, std::uint32_t link_count) {
    // Without planned links there are no queues, and the check below would walk every
    // dependency (10^9 for a 1,024-NPU direct all-reduce) for nothing.
    bool any_planned = false;
    for (TransferId id = 0; id < schedule.size() && !any_planned; ++id) {
      any_planned = schedule.link(id) != kNoLink;
    }
    ordered = any_planned && starts_follow_dependencies(schedule);
    if (!ordered) return;
    offsets.assign(std::size_t{link_count} + 1, 0);
    for (TransferId id = 0; id < schedule.size(); ++id) {
      if (const LinkId link = schedule.link(id); link != kNoLink) ++offsets[link + 1];
    }
    for (std::size_t l = 0; l < link_count; ++l) offsets[l + 1] += offsets[l];
    ids.resize(offsets[link_count]);
    cursor.assign(offsets.begin(), offsets.end() - 1);
    // Producers list a link's transfers in time order almost always; note the links where they
    // do not while filling (one pass in id order), and sort only those.
    std::vector<double> last_start(link_count, -std::numeric_limits<double>::infinity());
    std::vector<bool> unsorted(link_count, false);
    for (TransferId id = 0; id < schedule.size(); ++id) {
      const LinkId link = schedule.link(id);
      if (link == kNoLink) continue;
      ids[cursor[link]++] = id;
      if (schedule.start_us(id) < last_start[link]) unsorted[link] = true;
      last_start[link] = schedule.start_us(id);
    }
    cursor.assign(offsets.begin(), offsets.end() - 1);
    auto starts_before = [&](TransferId a, TransferId b) { return schedule.start_us(a) < schedule.start_us(b); };
    for (std::size_t l = 0; l < link_count; ++l) {
      if (!unsorted[l]) continue;
      std::stable_sort(ids.begin() + static_cast<std::ptrdiff_t>(offsets[l]),
                       ids.begin() + static_cast<std::ptrdiff_t>(offsets[l + 1]), starts_before);
    }
  }

  /// True when some transfer goes before `id` on its planned link.
  bool queued_behind(TransferId id, LinkId link) const {
    return ordered && link != kNoLink && ids[offsets[link]] != id;
  }
};

/// Every transfer on its planned link, in an order consistent with its dependencies: the link
/// queues let one transfer at a time onto each link, so every flow is alone on its one link and
/// moves at the link's bandwidth. The event simulation then reduces to one pass in (planned
/// start, id) order with the same arithmetic: a transfer is issued when its dependencies have
/// finished and the one before it on its link has moved its bytes, pays the link's alpha, moves
/// its bytes, then reduces for gamma * bytes if asked. Synthesized point-to-point plans are all
/// of this kind; replaying a 2-million-transfer one this way costs a few tens of milliseconds.
SimResult replay_alone_on_links(const Topology& topology, const Schedule& schedule, const RouteTable& routes,
                                double gamma, bool record_times) {
  const std::size_t count = schedule.size();
  std::vector<TransferId> order(count);
  std::iota(order.begin(), order.end(), TransferId{0});
  bool sorted = true;
  for (TransferId id = 1; id < count && sorted; ++id) sorted = schedule.start_us(id - 1) <= schedule.start_us(id);
  if (!sorted) {
    std::stable_sort(order.begin(), order.end(),
                     [&](TransferId a, TransferId b) { return schedule.start_us(a) < schedule.start_us(b); });
  }
  std::vector<double> starts(count);
  std::vector<double> ends(count);
  std::vector<double> link_free(topology.link_count(), 0.0);
  SimResult result;
  result.links.assign(topology.link_count(), LinkLoad{});
  for (const TransferId id : order) {
    const Transfer transfer = schedule.transfer(id);
    double start = link_free[transfer.link];
    for (TransferId dep : schedule.deps_of(transfer)) start = std::max(start, ends[dep]);
    const RouteId route = routes.route_of(transfer);
    const double bytes = schedule.bytes_of(transfer);
    const double flowing = start + routes.alpha_us(route);
    const double moved = bytes > 0.0 ? flowing + bytes / routes.bottleneck_bytes_per_us(route) : flowing;
    link_free[transfer.link] = moved;
    LinkLoad& load = result.links[transfer.link];
    load.bytes += bytes;
    load.busy_us += moved - flowing;
    starts[id] = start;
    const double reducing = gamma * schedule.chunk_bytes() * transfer.chunk_count;
    ends[id] = transfer.kind == TransferKind::kReduce && gamma > 0.0 ? moved + reducing : moved;
    result.time_us = std::max(result.time_us, ends[id]);
  }
  for (const LinkLoad& load : result.links) result.max_link_bytes = std::max(result.max_link_bytes, load.bytes);
  result.transfers = count;
  if (record_times) {
    result.start_us = std::move(starts);
    result.end_us = std::move(ends);
  }
  return result;
}

}  // namespace

void check_gamma(double gamma_us_per_byte) {
  if (gamma_us_per_byte >= 0.0 && gamma_us_per_byte <= kMaxGamma_us_per_byte) return;
  char got[32];
  std::snprintf(got, sizeof got, "%g", gamma_us_per_byte);
  throw InputError("", "--gamma",
                   std::string("the reduction cost must be from 0 to 1000 microseconds per byte, the time the slowest "
                               "link tenet accepts takes per byte (got ") +
                       got + ")");
}

namespace {

/// How many refills pass between checks of SimOptions::stop_once_slower_than_us.
constexpr std::uint64_t kStopCheckEvery = 256;

struct EventOutcome {
  double time_us = 0.0;  ///< when the last transfer ended
  /// SimOptions::max_refill_work was reached (time_us: the time reached) or the simulation
  /// provably ends after SimOptions::stop_once_slower_than_us (time_us: that proof).
  bool stopped = false;
  std::vector<double> starts;
  std::vector<double> ends;
};

/// The event simulation (see the file comment) of `transfers`, whose routes index `flows`.
/// `link_totals`: each link's bytes in all, for SimOptions::stop_once_slower_than_us (empty: never
/// stops for it).
template <class Inputs>
EventOutcome run_events(const Inputs& transfers, double chunk_bytes, LinkQueues& queues, FlowNetwork& flows,
                        const SimOptions& options, std::span<const LinkLoad> link_totals = {}) {
  const double gamma = options.gamma_us_per_byte;
  const bool record_times = options.record_times;
  Dependents dependents(transfers);
  const std::size_t count = transfers.size();
  std::vector<std::uint32_t> waiting(count);
  std::vector<TimedEvent> events;
  double now = 0.0;
  EventOutcome outcome;
  outcome.starts.resize(record_times ? count : 0);
  outcome.ends.resize(record_times ? count : 0);
  auto issue = [&](TransferId id) {
    if (record_times) outcome.starts[id] = now;
    const RouteId route = transfers.route(id);
    events.push_back({now + transfers.alpha_us(route), id, route});
    std::push_heap(events.begin(), events.end(), later);
  };
  for (TransferId id = 0; id < count; ++id) {
    const auto deps = dependents.group_of[id] == Dependents::kSolo ? transfers.deps(id).size() : 1;
    waiting[id] = static_cast<std::uint32_t>(deps) + (queues.queued_behind(id, transfers.link(id)) ? 1 : 0);
    if (waiting[id] == 0) issue(id);
  }

  std::uint64_t finished = 0;
  auto finish = [&](TransferId id) {
    if (record_times) outcome.ends[id] = now;
    if (++finished % SimOptions::kProgressEvery == 0 && options.progress && finished < count)
      options.progress(static_cast<double>(finished) / static_cast<double>(count));
    outcome.time_us = std::max(outcome.time_us, now);
    for (std::uint64_t i = dependents.offsets[id]; i < dependents.offsets[id + 1]; ++i) {
      const TransferId next = dependents.ids[i];
      const std::uint32_t group = dependents.group_of[next];
      if (group == Dependents::kSolo) {
        if (--waiting[next] == 0) issue(next);
      } else if (--dependents.group_waiting[group] == 0) {
        for (TransferId member = next; member <= dependents.group_last[group]; ++member) {
          if (--waiting[member] == 0) issue(member);
        }
      }
    }
  };

  // The transfer's bytes are through: the next transfer planned on its link may go.
  auto release_link = [&](LinkId link) {
    if (link == kNoLink || !queues.ordered) return;
    const std::uint64_t next = ++queues.cursor[link];
    if (next < queues.offsets[link + 1] && --waiting[queues.ids[next]] == 0) issue(queues.ids[next]);
  };

  // SimOptions::stop_once_slower_than_us, given every link's bytes in all (`link_totals`): no
  // simulated time can be less than now plus, on any link, the bytes not yet started on it.
  const bool may_stop = !link_totals.empty();
  std::uint64_t refills = 0;
  auto floor_now = [&] {
    const std::vector<LinkLoad>& loads = flows.loads();
    double floor = now;
    for (LinkId link = 0; link < link_totals.size(); ++link)
      floor = std::max(floor, now + (link_totals[link].bytes - loads[link].bytes) / flows.capacity(link));
    return floor;
  };

  constexpr double kNever = std::numeric_limits<double>::infinity();
  // Changes since the last refill, and the time up to which more may join them (tolerances.hpp).
  bool batching = false;
  double batch_until = 0.0;
  while (true) {
    if (!batching && flows.unsettled()) {
      batching = true;
      batch_until = now + now * sim::kBatchWindow;
    }
    const double event_time = events.empty() ? kNever : events.front().time_us;
    const double flow_time = flows.idle() ? kNever : flows.next_end().time_us;
    // Everything that happens in this batch is in; rates must be right before time moves on.
    if (batching && std::min(event_time, flow_time) > batch_until) {
      flows.settle(now);
      batching = false;
      ++refills;
      if (options.progress && refills % SimOptions::kProgressRefills == 0)
        options.progress(static_cast<double>(finished) / static_cast<double>(count));
      if (options.max_refill_work != 0 && flows.refill_work() > options.max_refill_work) {
        outcome.stopped = true;
        outcome.time_us = now;
        return outcome;
      }
      if (may_stop && (refills - 1) % kStopCheckEvery == 0) {
        if (const double floor = floor_now(); floor > options.stop_once_slower_than_us) {
          outcome.stopped = true;
          outcome.time_us = floor;
          return outcome;
        }
      }
      continue;
    }
    if (events.empty() && flows.idle()) break;
    const bool flow_first =
        !flows.idle() && (events.empty() || flow_time < event_time ||
                          (flow_time == event_time && flows.next_end().transfer < events.front().transfer));
    if (flow_first) {
      const FlowNetwork::End end = flows.next_end();
      now = end.time_us;
      flows.finish(now);
      release_link(transfers.link(end.transfer));
      if (transfers.reduces(end.transfer) && gamma > 0.0) {
        events.push_back({now + gamma * chunk_bytes * transfers.chunk_count(end.transfer), end.transfer, kReducing});
        std::push_heap(events.begin(), events.end(), later);
      } else {
        finish(end.transfer);
      }
      continue;
    }
    std::pop_heap(events.begin(), events.end(), later);
    const TimedEvent event = events.back();
    events.pop_back();
    now = event.time_us;
    const double bytes = chunk_bytes * transfers.chunk_count(event.transfer);
    if (event.route == kReducing) {
      finish(event.transfer);
    } else if (bytes <= 0.0) {
      release_link(transfers.link(event.transfer));
      finish(event.transfer);
    } else {
      flows.start(event.transfer, event.route, bytes, now);
    }
  }
  if (finished != count) {
    throw std::logic_error("simulate: " + std::to_string(count - finished) + " transfers never became ready");
  }
  return outcome;
}

/// One transfer per orbit on the link orbits; every transfer of an orbit takes its
/// representative's times and every link its orbit's load (translation_symmetry.hpp).
SimResult simulate_quotient(const Topology& topology, const Schedule& schedule, const sim::SymmetricQuotient& quotient,
                            const SimOptions& options) {
  const bool record_times = options.record_times;
  FlowNetwork flows(quotient.orbit_capacity, quotient.routes);
  LinkQueues no_queues;
  const EventOutcome outcome =
      run_events(QuotientTransfers{schedule, quotient}, schedule.chunk_bytes(), no_queues, flows, options);
  SimResult result;
  result.time_us = outcome.time_us;
  result.links.resize(topology.link_count());
  for (LinkId link = 0; link < topology.link_count(); ++link) {
    result.links[link] = flows.loads()[quotient.orbit_of_link[link]];
    result.max_link_bytes = std::max(result.max_link_bytes, result.links[link].bytes);
  }
  result.transfers = schedule.size();
  result.symmetry_order = topology.npu_count();
  result.simulated = !outcome.stopped;
  result.refill_work = flows.refill_work();
  if (record_times && result.simulated) {
    result.start_us.resize(schedule.size());
    result.end_us.resize(schedule.size());
    for (TransferId id = 0; id < schedule.size(); ++id) {
      result.start_us[id] = outcome.starts[quotient.orbit_of_transfer[id]];
      result.end_us[id] = outcome.ends[quotient.orbit_of_transfer[id]];
    }
  }
  return result;
}

/// What a schedule needs at least, without simulating it: every link carries its bytes at most at
/// its bandwidth, and every transfer takes at least its route's alphas plus its bytes at the
/// route's slowest link.
struct ScheduleFloor {
  double time_us = 0.0;
  std::vector<LinkLoad> links;
};

ScheduleFloor schedule_floor(const Topology& topology, const Schedule& schedule, const RouteTable& routes) {
  ScheduleFloor floor;
  floor.links.assign(topology.link_count(), LinkLoad{});
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    const RouteId route = routes.route_of(transfer);
    const double bytes = schedule.bytes_of(transfer);
    const auto links = routes.links(route);
    for (LinkId link : links) floor.links[link].bytes += bytes;
    floor.time_us = std::max(floor.time_us, routes.alpha_us(route) + bytes / routes.bottleneck_bytes_per_us(route));
  }
  for (LinkId link = 0; link < topology.link_count(); ++link) {
    floor.time_us = std::max(floor.time_us, floor.links[link].bytes / bytes_per_us(topology.link(link).bandwidth_GBps));
  }
  return floor;
}

}  // namespace

SimResult simulate(const Topology& topology, const Schedule& schedule, const SimOptions& options) {
  const double gamma = options.gamma_us_per_byte;
  check_gamma(gamma);
  const RouteTable routes(topology, schedule, options.routing);
  bool all_on_planned_links = true;
  for (TransferId id = 0; id < schedule.size() && all_on_planned_links; ++id)
    all_on_planned_links = schedule.link(id) != kNoLink;
  if (all_on_planned_links && starts_follow_dependencies(schedule))
    return replay_alone_on_links(topology, schedule, routes, gamma, options.record_times);
  if (options.use_symmetry) {
    if (const auto quotient = sim::find_translation_symmetry(topology, schedule, routes))
      return simulate_quotient(topology, schedule, *quotient, options);
  }

  // Route ids below link_count are the single links; the rest are the routes of distinct pairs
  // (and planned routes through switches), whose flows share links.
  const double route_hops = static_cast<double>(routes.paths().links.size() - topology.link_count());
  const bool may_skip = options.skip_slower_than_us < std::numeric_limits<double>::infinity() &&
                        route_hops > options.long_from_route_hops;
  const bool may_stop = options.stop_once_slower_than_us < std::numeric_limits<double>::infinity();
  ScheduleFloor floor;
  if (may_skip || may_stop) floor = schedule_floor(topology, schedule, routes);
  if (may_skip && floor.time_us > options.skip_slower_than_us) {
    SimResult skipped;
    skipped.simulated = false;
    skipped.time_us = floor.time_us;
    skipped.links = std::move(floor.links);
    for (const LinkLoad& load : skipped.links) skipped.max_link_bytes = std::max(skipped.max_link_bytes, load.bytes);
    skipped.transfers = schedule.size();
    return skipped;
  }

  LinkQueues queues(schedule, topology.link_count());
  FlowNetwork flows(topology, routes.paths());
  EventOutcome outcome = run_events(ScheduleTransfers{schedule, routes}, schedule.chunk_bytes(), queues, flows, options,
                                    may_stop ? std::span<const LinkLoad>(floor.links) : std::span<const LinkLoad>());
  SimResult result;
  result.time_us = outcome.time_us;
  result.links = flows.loads();
  for (const LinkLoad& load : result.links) result.max_link_bytes = std::max(result.max_link_bytes, load.bytes);
  result.transfers = schedule.size();
  result.simulated = !outcome.stopped;
  result.refill_work = flows.refill_work();
  if (result.simulated) {
    result.start_us = std::move(outcome.starts);
    result.end_us = std::move(outcome.ends);
  }
  return result;
}

}  // namespace tenet
