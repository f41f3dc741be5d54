// SPDX-License-Identifier: MIT
#pragma once
// Packed trees (tree_packing.hpp) as a Schedule. Private to src/synth.
//
// Each member's data is cut into units.per_member x pieces chunks: a unit per tree unit, each
// unit in `pieces` pieces that follow one another down every edge of its tree (a pipeline: a
// piece leaves a node once it has arrived there and the piece before it has left on that edge).
// Every unit is its own chain of transfers on each edge, so the max-min fair network gives a tree
// of multiplicity m m shares of every link it crosses, which is what the packing counted. A
// chained packing (TreePacking::chained) instead runs a tree's units' pieces one after another as
// one chain per edge, a pipeline m times as deep, over a range of chunks of its own.
// All-gather broadcasts down the out-trees; reduce-scatter reduces up the in-trees packed on the
// transposed network (leaves first: a node passes a piece on once every child's piece reduced
// into it); all-reduce does both, a chunk's broadcast waiting for its reductions into its owner.
// Transfers name their routes through the network. Planned times are a uniform pipeline estimate;
// the synthesizer retimes the winner by its replay.

#include <cstdint>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tree_packing.hpp"

namespace tenet::synth {

/// The replay of an all-gather that TreePacing::mirror orders reductions by.
struct MirrorTimes {
  std::vector<double> start_us;  ///< per transfer of that all-gather, in its order
  std::vector<double> end_us;
  double time_us = 0.0;
};

/// How a tree schedule's transfers wait for one another beyond the data they need.
struct TreePacing {
  /// Each reduction also waits for its sender's own transfer planned to end by the time it is
  /// planned to start. Left free, every leaf's chain starts at once, those of shallow leaves far
  /// ahead of the pipeline, and takes bandwidth from the deep ones on the critical path
  /// (mi250-2x16-ib reduce-scatter of 1 GiB: 3629 us free, 3493 us paced). A runtime can hold to
  /// it: the wait is for the sender's own send.
  bool senders_keep_pace = false;
  /// With senders_keep_pace: the sender's transfers are ordered by the replay of the all-gather
  /// that runs the reduce packing's trees forward on the transposed network (tree_schedule of
  /// kAllGather there, same pieces), time-reversed, instead of by uniform pipeline steps: a
  /// reduction waits for its sender's transfer whose mirrored end comes last by its own mirrored
  /// start. That all-gather received a node's pieces in the order the network let them arrive;
  /// its reductions leave in the reverse of that order.
  const MirrorTimes* mirror = nullptr;
  /// Pieces of one unit in flight on an edge at once: piece k waits for piece k - in_flight
  /// there. With 1 every piece pays its route's alpha after the one before it has arrived; with
  /// 2 the next piece's alpha runs while the last one's bytes move, as a runtime's FIFO slots let
  /// a sender run ahead (a100-2x8-ib all-gather of 16 MiB at 16 pieces: 108.9 -> 78.4 us), but
  /// the two share the edge, so each piece takes twice as long to get through and the pipeline
  /// fills more slowly (h100-4x8-rail all-gather of 1 GiB at 16 pieces, trees through the
  /// spines: 2.308 -> 2.480 ms).
  std::uint32_t in_flight = 1;
};
/// `gather` is required for all-gather and all-reduce, `reduce` (packed on the transpose) for
/// reduce-scatter and all-reduce; both with the same units.
Schedule tree_schedule(const Topology& topology, CollectiveKind kind, std::uint64_t size_bytes,
                       const std::vector<NodeId>& members, const TreePacking* gather, const TreePacking* reduce,
                       std::uint32_t pieces, const TreePacing& pacing = {});

/// The pipeline step of tree_schedule for pieces of `piece_bytes`: the slowest route's alpha plus
/// the piece at a unit's bandwidth. `alpha_us` is that alpha.
struct TreeStep {
  double alpha_us = 0.0;
  double time_us = 0.0;
};
TreeStep tree_step(const Topology& topology, const TreePacking* gather, const TreePacking* reduce, double piece_bytes);

}  // namespace tenet::synth
