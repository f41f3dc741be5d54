// SPDX-License-Identifier: MIT
#include "planned_replay.hpp"

#include <algorithm>
#include <numeric>

#include "tenet/common/units.hpp"

namespace tenet::synth {

std::optional<ReplayTimes> replay_planned_links(const Schedule& schedule, const Topology& topology) {
  const std::size_t count = schedule.size();
  std::vector<TransferId> order(count);
  std::iota(order.begin(), order.end(), TransferId{0});
  bool sorted = true;
  for (TransferId id = 0; id < count; ++id) {
    if (schedule.link(id) == kNoLink) return std::nullopt;
    sorted = sorted && (id == 0 || schedule.start_us(id - 1) <= schedule.start_us(id));
  }
  if (!sorted) {
    std::stable_sort(order.begin(), order.end(),
                     [&](TransferId a, TransferId b) { return schedule.start_us(a) < schedule.start_us(b); });
  }
  ReplayTimes times;
  times.start.assign(count, 0.0);
  times.end.assign(count, 0.0);
  std::vector<double> link_free(topology.link_count(), 0.0);
  for (const TransferId id : order) {
    const Transfer transfer = schedule.transfer(id);
    double start = link_free[transfer.link];
    for (TransferId dep : schedule.deps_of(transfer)) start = std::max(start, times.end[dep]);
    const Link& link = topology.link(transfer.link);
    // As the simulator adds them: the alpha first, then the bytes at the link's bandwidth.
    const double end = (start + link.latency_us) + schedule.bytes_of(transfer) / bytes_per_us(link.bandwidth_GBps);
    times.start[id] = start;
    times.end[id] = end;
    link_free[transfer.link] = end;
    times.finish = std::max(times.finish, end);
  }
  return times;
}

}  // namespace tenet::synth
