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
  const std::size_t count = schedule.size();
  bool any = false;
  std::vector<TransferId> kept;
  Schedule freed(schedule.collective(), schedule.size_bytes(), schedule.members(), schedule.chunks_per_member(),
                 schedule.algorithm());
  freed.notes = schedule.notes;
  for (RouteId route = 0; route < schedule.route_count(); ++route) freed.add_route(schedule.route_links(route));
  for (TransferId id = 0; id < count; ++id) {
    const Transfer transfer = schedule.transfer(id);
    const std::span<const TransferId> deps = schedule.deps_of(transfer);
    kept.assign(deps.begin(), deps.end());
    // A dependency on a transfer from the same sender is a port wait; its data comes from
    // transfers into the sender (0: its own, there from the start).
    if (transfer.route != kNoRoute) {
      double data_at = 0.0;
      for (TransferId dep : deps) {
        if (schedule.transfer(dep).src != transfer.src) data_at = std::max(data_at, schedule.end_us(dep));
      }
      double alpha = 0.0;
      for (LinkId link : schedule.route_links(transfer.route)) alpha += topology.link(link).latency_us;
      const auto covered = [&](TransferId dep) {
        return schedule.transfer(dep).src == transfer.src && data_at + alpha >= schedule.end_us(dep);
      };
      const auto end = std::remove_if(kept.begin(), kept.end(), covered);
      any = any || end != kept.end();
      kept.erase(end, kept.end());
    }
    const LinkId planned = transfer.route != kNoRoute ? Schedule::on_route(transfer.route) : transfer.link;
    freed.add(transfer.src, transfer.dst, transfer.kind, schedule.chunks_of(transfer), kept, transfer.start_us,
              transfer.end_us, planned);
  }
  if (!any) return std::nullopt;
  return freed;
}

}  // namespace tenet::synth
