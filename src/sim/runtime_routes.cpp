// SPDX-License-Identifier: MIT
#include "tenet/sim/runtime_routes.hpp"

#include <algorithm>
#include <span>

#include "route_table.hpp"
#include "tenet/sim/simulator.hpp"

namespace tenet {

std::size_t transfers_off_runtime_routes(const Schedule& schedule, const Topology& topology) {
  Schedule routed = schedule;
  routed.forget_links();
  const sim::RouteTable table(topology, routed, SimOptions{}.routing);
  std::size_t off = 0;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const LinkId link = schedule.link(id);
    const RouteId route = schedule.route(id);
    if (link == kNoLink && route == kNoRoute) continue;
    const std::span<const LinkId> planned =
        route != kNoRoute ? schedule.route_links(route) : std::span<const LinkId>(&link, 1);
    const std::span<const LinkId> taken = table.links(table.route_of(routed.transfer(id)));
    if (!std::equal(planned.begin(), planned.end(), taken.begin(), taken.end())) ++off;
  }
  return off;
}

Schedule on_runtime_routes(const Schedule& schedule, const Topology& topology) {
  Schedule routed = schedule;
  routed.forget_links();
  SimOptions options;
  options.record_times = true;
  const SimResult replay = simulate(topology, routed, options);
  routed.retime(replay.start_us, replay.end_us);
  return routed;
}

}  // namespace tenet
