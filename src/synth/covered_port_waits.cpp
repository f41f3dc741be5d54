// SPDX-License-Identifier: MIT
// Dropping the port waits a switch-native schedule's data covers (switch_native.hpp).
//
// with_port_order makes each routed transfer wait for the transfer before it on its sender's
// port lane to finish, alpha included. But a transfer's alpha holds no bandwidth (the simulator's
// model; a runtime issues a send before the wire's latency is over), so a transfer whose data
// comes no sooner than that earlier transfer is through, less its own route's alphas, can be
// issued as its data comes: its bytes still start moving after the earlier one's are through, and
// the wait would only add its alpha to every step of a chain of such transfers. A ring of
// reductions whose steps cross the leaves of fat-tree-8x4 (2 us of alpha a step) takes 1.362 ms
// for 64 MiB with every wait and 1.335 ms without these (the ring baseline 1.341, the bound
// 1.301). Which waits the data covers is read off the plan's times. Not a replay's: there a
// port that is the bottleneck of a chain falls behind its data, its waits no longer look covered,
// and none is dropped where it would help most (that ring: 1.360 ms). The replay moves times, and
// transfers freed so can drift onto each other, so the caller replays the result and keeps the
// faster.

#include <algorithm>
#include <vector>

#include "switch_native.hpp"

namespace tenet::synth {

std::optional<Schedule> without_covered_port_waits(const Schedule& schedule, const Topology& topology) {
  bool any = false;
  Schedule freed = with_edited_deps(schedule, false, [&](TransferId id, std::vector<TransferId>& deps) {
    const Transfer transfer = schedule.transfer(id);
    if (transfer.route == kNoRoute) return;
    // A dependency on a transfer from the same sender is a port wait; its data comes from
    // transfers into the sender (0: its own, there from the start).
    double data_at = 0.0;
    for (TransferId dep : deps) {
      if (schedule.transfer(dep).src != transfer.src) data_at = std::max(data_at, schedule.end_us(dep));
    }
    double alpha = 0.0;
    for (LinkId link : schedule.route_links(transfer.route)) alpha += topology.link(link).latency_us;
    const auto covered = [&](TransferId dep) {
      return schedule.transfer(dep).src == transfer.src && data_at + alpha >= schedule.end_us(dep);
    };
    const auto end = std::remove_if(deps.begin(), deps.end(), covered);
    any = any || end != deps.end();
    deps.erase(end, deps.end());
  });
  if (!any) return std::nullopt;
  return freed;
}

}  // namespace tenet::synth
