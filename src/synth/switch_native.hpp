// SPDX-License-Identifier: MIT
#pragma once
// Finishing a switch-native plan, or one made on virtual links (port_order.cpp,
// covered_port_waits.cpp). Private to src/synth.

#include <optional>
#include <span>
#include <vector>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

/// A copy of `schedule`, transfer by transfer, each depending on what `edit(id, deps)` leaves in
/// `deps` (given the transfer's own dependencies): on its planned route or link, or on neither with
/// `forget_links` (then without the routes). The three finishings below differ only in that edit.
template <class Edit>
Schedule with_edited_deps(const Schedule& schedule, bool forget_links, Edit&& edit) {
  Schedule copy = schedule.empty_like(schedule.chunks_per_member());
  std::vector<TransferId> deps;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    const std::span<const TransferId> own = schedule.deps_of(transfer);
    deps.assign(own.begin(), own.end());
    edit(id, deps);
    copy.add(transfer.src, transfer.dst, transfer.kind, schedule.chunks_of(transfer), deps, transfer.start_us,
             transfer.end_us, schedule.planned_link(id));
  }
  if (forget_links) copy.forget_links();
  return copy;
}

/// A copy of `schedule` in which every transfer routed through switches also depends on the
/// transfer before it on its lane of the sender's port (fabric.hpp), in planned order.
Schedule with_port_order(const Schedule& schedule, const Topology& topology);

/// A copy of a with_port_order schedule, still timed as planned, without the port waits its data
/// covers: a routed transfer no longer waits for its sender's earlier transfer where the plan has
/// its data there no sooner than that one ends, less its route's alphas (covered_port_waits.cpp).
/// Nullopt when no wait is covered.
std::optional<Schedule> without_covered_port_waits(const Schedule& schedule, const Topology& topology);

/// A copy of a plan made on virtual links (unwound switches, the group overlay, the express
/// topology) with those links forgotten, in which each reduction also depends on the reduction
/// planned before it on its virtual link (planned start order): one connection's sends, in order,
/// as the sender's runtime issues them.
Schedule with_reduction_order(const Schedule& schedule);

}  // namespace tenet::synth
