// SPDX-License-Identifier: MIT
// effective_times: one pass in id order (dependencies have smaller ids), then a stable sort.

#include "tenet/schedule/effective_times.hpp"

#include <algorithm>
#include <numeric>

namespace tenet {

EffectiveTimes effective_times(const Schedule& schedule) {
  const std::size_t count = schedule.size();
  EffectiveTimes times;
  times.start.resize(count);
  times.end.resize(count);
  for (std::size_t t = 0; t < count; ++t) {
    const Transfer transfer = schedule.transfer(static_cast<TransferId>(t));
    double begin = transfer.start_us;
    for (TransferId dep : schedule.deps_of(transfer)) begin = std::max(begin, times.end[dep]);
    times.start[t] = begin;
    times.end[t] = std::max(begin, transfer.end_us);
  }
  times.by_start.resize(count);
  std::iota(times.by_start.begin(), times.by_start.end(), TransferId{0});
  std::stable_sort(times.by_start.begin(), times.by_start.end(),
                   [&](TransferId a, TransferId b) { return times.start[a] < times.start[b]; });
  return times;
}

}  // namespace tenet
