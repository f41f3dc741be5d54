// SPDX-License-Identifier: MIT
// Making a switch-native plan executable: the order in which each NPU's transfers use the lanes of
// its own port into the switch becomes dependencies.
//
// Why dependencies. Transfers u->v1 and u->v2 through a switch are different connections; run as
// soon as their data is there, both would start on u's port at once and share it, and the plan's
// "one at a time, each at full speed" would not happen. So each routed transfer also waits for
// the transfer before it on its lane of the sender's port (fabric.hpp), in planned order. The
// runtime can hold to that: the sender issues its own sends in that order (the MSCCL layout puts
// them on one threadblock per lane). Where the plan's data would hold a transfer back anyway, the
// wait only adds its alpha, and covered_port_waits.cpp makes the variant without it.
//
// Why only the sender's port. The plan also gave each fabric link and each receiving port one
// transfer per lane at a time, but waiting for that would need a sender to wait for something
// another NPU did that is not data it needs, and MSCCL steps can wait only for steps of their own
// rank. Ordered that way in the schedule, the plan would run as planned in tenet's replay and
// slower as XML (two-level-switch-8x4 all-reduce of 64 MiB: 655 us planned, 826 us as XML). So the
// schedule keeps what runs, and the synthesizer scores it by its replay, where transfers that
// meet on a fabric link or a receiving port share it.
//
// Lanes are handed out in planned start order to whichever lane is free, which always succeeds
// because the plan never put more transfers on a port than it has lanes. A direct NPU-to-NPU link
// needs nothing: the simulator and the MSCCL writer keep a planned link's order already.
//
// A plan on virtual links (with_reduction_order) is routed as a whole, so it keeps no port order;
// only its reductions keep each virtual link's order (see replayed_executable in synthesizer.cpp).
//
// Predecessors have smaller ids: in an all-gather transfers are listed in start order; in a
// reduce-scatter (the reversal) in end order, and a lane's earlier transfer ends before the next
// starts; an all-reduce's gather follows its reduce-scatter. A violation is a bug (logic_error).

#include "switch_native.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "fabric.hpp"

namespace tenet::synth {
namespace {

/// The transfers by planned start (ties: lower id first).
std::vector<TransferId> in_start_order(const Schedule& schedule) {
  std::vector<TransferId> order(schedule.size());
  std::iota(order.begin(), order.end(), TransferId{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](TransferId a, TransferId b) { return schedule.start_us(a) < schedule.start_us(b); });
  return order;
}

}  // namespace

Schedule with_port_order(const Schedule& schedule, const Topology& topology) {
  const Fabric fabric(topology);
  const std::size_t count = schedule.size();
  const std::vector<TransferId> by_start = in_start_order(schedule);
  // Per link, its lanes' last transfers (kNoTransfer while a lane is unused), CSR by link.
  constexpr TransferId kNone = ~TransferId{0};
  std::vector<std::uint64_t> lane_offsets(topology.link_count() + 1, 0);
  for (LinkId id = 0; id < topology.link_count(); ++id) lane_offsets[id + 1] = lane_offsets[id] + fabric.lanes(id);
  std::vector<TransferId> last_on_lane(lane_offsets.back(), kNone);
  // Extra dependencies per transfer, CSR, filled in start order.
  std::vector<std::vector<TransferId>> extra(count);
  for (TransferId id : by_start) {
    const RouteId route = schedule.route(id);
    if (route == kNoRoute) continue;
    const double start = schedule.start_us(id);
    const NodeId sender = schedule.transfer(id).src;
    for (LinkId link : schedule.route_links(route)) {
      if (topology.link(link).src != sender) continue;
      // The free lane that was released last (ties: the lowest), so lanes stay packed.
      std::uint64_t chosen = lane_offsets[link + 1];
      double chosen_end = -1.0;
      for (std::uint64_t lane = lane_offsets[link]; lane < lane_offsets[link + 1]; ++lane) {
        const TransferId last = last_on_lane[lane];
        const double end = last == kNone ? 0.0 : schedule.end_us(last);
        if (last != kNone && end > start) continue;
        if (chosen == lane_offsets[link + 1] || end > chosen_end) {
          chosen = lane;
          chosen_end = end;
        }
      }
      if (chosen == lane_offsets[link + 1]) {
        throw std::logic_error("switch-native plan: more transfers at once on port " + std::to_string(link) +
                               " than it has lanes");
      }
      const TransferId before = last_on_lane[chosen];
      if (before != kNone) {
        if (before >= id) throw std::logic_error("switch-native plan: a port's earlier transfer has a later id");
        extra[id].push_back(before);
      }
      last_on_lane[chosen] = id;
    }
  }

  return with_edited_deps(schedule, false, [&](TransferId id, std::vector<TransferId>& deps) {
    for (TransferId before : extra[id]) {
      if (std::find(deps.begin(), deps.end(), before) == deps.end()) deps.push_back(before);
    }
    std::sort(deps.begin(), deps.end());
  });
}

Schedule with_reduction_order(const Schedule& schedule) {
  const std::size_t count = schedule.size();
  const std::vector<TransferId> by_start = in_start_order(schedule);
  constexpr TransferId kNone = ~TransferId{0};
  LinkId links = 0;
  for (TransferId id = 0; id < count; ++id) {
    const LinkId link = schedule.transfer(id).link;
    if (link != kNoLink) links = std::max(links, link + 1);
  }
  std::vector<TransferId> before(count, kNone);
  std::vector<TransferId> last_on_link(links, kNone);
  for (TransferId id : by_start) {
    const Transfer transfer = schedule.transfer(id);
    if (transfer.link == kNoLink || transfer.kind != TransferKind::kReduce) continue;
    // A virtual link carries one transfer at a time, and a reduce-scatter lists its transfers in
    // end order, so the one before has the smaller id; were it not so, no order is imposed.
    TransferId& last = last_on_link[transfer.link];
    if (last != kNone && last < id) before[id] = last;
    last = id;
  }
  return with_edited_deps(schedule, true, [&](TransferId id, std::vector<TransferId>& deps) {
    if (before[id] != kNone && std::find(deps.begin(), deps.end(), before[id]) == deps.end()) {
      deps.push_back(before[id]);
      std::sort(deps.begin(), deps.end());
    }
  });
}

}  // namespace tenet::synth
