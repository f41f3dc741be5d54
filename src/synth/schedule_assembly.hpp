// SPDX-License-Identifier: MIT
#pragma once
// Turning all-gather traces into Schedules: all-gather as is, reduce-scatter as the time reversal
// of an all-gather on the transposed graph (TACOS Sec. IV-H), all-reduce as both in sequence.
// Private to src/synth.

#include <vector>

#include "all_gather_engine.hpp"
#include "tenet/schedule/schedule.hpp"

namespace tenet::synth {

/// The same nodes with every link reversed; link i of the result is link i of the input turned
/// around, so a trace on the transpose names the input's links.
Topology transpose(const Topology& topology);

/// Appends an all-gather trace shifted by `offset`. A chunk's first hops out of its owner also
/// wait for `ready[chunk]` (the reductions that complete it, in an all-reduce); pass an empty
/// vector when the owner holds it from the start. Consumes the trace's transfers block by block,
/// handing each block's memory back as soon as it is converted.
void append_all_gather(Schedule& schedule, const Topology& topology, AllGatherTrace& trace, Tick offset,
                       const std::vector<std::vector<TransferId>>& ready);

/// Appends the reversal of `transposed_trace` (an all-gather on transpose(topology)) as a
/// reduce-scatter on `topology`, starting at 0. Returns, per chunk, the reductions into its owner.
/// Consumes the trace's transfers like append_all_gather.
std::vector<std::vector<TransferId>> append_reduce_scatter(Schedule& schedule, const Topology& topology,
                                                           AllGatherTrace& transposed_trace);

}  // namespace tenet::synth
