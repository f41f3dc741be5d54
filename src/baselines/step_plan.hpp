// SPDX-License-Identifier: MIT
#pragma once
// Step-synchronous plans: how the torus and circulant baselines (swing, bucket, circulant) are
// written before they become Schedules. Private to src/baselines/.
//
// A plan is a sequence of steps; a step holds transfers between member indices, each in a lane
// (one of the independent collectives an algorithm runs side by side: Swing's 2D plain and
// mirrored collectives, the bucket algorithm's colors and directions). Emitting a plan gives the
// transfers step-synchronous dependencies, per lane and per member, the way a send-receive step
// of the papers' algorithms waits for the previous one: a member's transfers in a step depend on
// everything it received in that lane since its previous sending step and on its own transfers
// of that step. That covers every earlier write to the slots it reads (the verifier's race rule)
// and keeps one member's steps of one lane in sequence, as its port allows. A barrier merges a
// member's lanes (the bucket algorithm moves to the next dimension only when all its colors have
// finished the current one). Plans with barriers also name the writers of what they read
// directly, sparing the verifier searches back through long rings: a phase's first transfers
// depend on everything the member received in that lane so far (a bucket all-gather phase starts
// by sending everything the earlier ones gathered), and every later transfer of the lane on the
// last transfer each earlier phase delivered (the one that completed the member's own bucket,
// which a reduce-scatter keeps reducing into and reads again in every later phase).
//
// The same plan read backwards, with sources and destinations swapped and copies for reduces, is
// the time-reversed collective: a reduce-scatter whose every block travels along a tree into its
// owner becomes an all-gather that sends it back out along the same tree (the all-gather of
// Swing, Sec. 3.1.1, and of the bucket algorithm, Sec. 4, "executed in the reverse order").

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "builder.hpp"

namespace tenet::baselines {

/// One transfer of a plan, between member indices.
struct PlannedTransfer {
  std::uint64_t chunk_begin = 0;  ///< into StepPlan's chunk array
  std::uint32_t chunk_count = 0;
  std::uint32_t lane = 0;
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
};

class StepPlan {
 public:
  explicit StepPlan(std::uint32_t steps) : steps_(steps), barrier_(steps, false) {}

  std::uint32_t step_count() const { return static_cast<std::uint32_t>(steps_.size()); }
  /// Appends a transfer of `chunks` from member src to member dst in `step`.
  void add(std::uint32_t step, std::uint32_t lane, std::uint32_t src, std::uint32_t dst,
           std::span<const ChunkId> chunks);
  /// Every member merges its lanes before `step` (and, read backwards, after it).
  void set_barrier(std::uint32_t step) { barrier_[step] = true; }
  bool barrier_before(std::uint32_t step) const { return barrier_[step]; }

  std::span<const PlannedTransfer> step(std::uint32_t index) const { return steps_[index]; }
  std::span<const ChunkId> chunks_of(const PlannedTransfer& transfer) const {
    return {chunks_.data() + transfer.chunk_begin, transfer.chunk_count};
  }

 private:
  std::vector<std::vector<PlannedTransfer>> steps_;
  std::vector<bool> barrier_;
  std::vector<ChunkId> chunks_;
};

/// Turns plans into the builder's transfers with step-synchronous dependencies (see the top).
/// Several plans emitted one after the other continue the same bookkeeping, so an all-reduce's
/// all-gather waits for its reduce-scatter member by member.
class StepEmitter {
 public:
  StepEmitter(ScheduleBuilder& builder, std::uint32_t lanes);

  /// Emits `plan` forwards with `kind`, or backwards (time-reversed: steps in reverse order,
  /// sources and destinations swapped). `barrier_first` merges every member's lanes first.
  void emit(const StepPlan& plan, TransferKind kind, bool reversed, bool barrier_first = false);
  /// A reduce-scatter plan as `collective`: itself, its time reversal (all-gather), or both in
  /// sequence (all-reduce, with `barrier_between` merging the lanes between the halves).
  void emit_collective(const StepPlan& plan, CollectiveKind collective, bool barrier_between);

 private:
  void barrier();
  std::vector<TransferId>& pending(std::uint32_t lane, std::uint32_t member) {
    return pending_[lane * members_ + member];
  }
  std::vector<TransferId>& sent(std::uint32_t lane, std::uint32_t member) { return sent_[lane * members_ + member]; }
  std::vector<TransferId>& history(std::uint32_t lane, std::uint32_t member) {
    return history_[lane * members_ + member];
  }
  std::vector<TransferId>& sticky(std::uint32_t lane, std::uint32_t member) {
    return sticky_[lane * members_ + member];
  }

  ScheduleBuilder& builder_;
  std::uint32_t lanes_;
  std::uint32_t members_;
  /// Per (lane, member): what it received since it last sent, and what it sent in that step.
  std::vector<std::vector<TransferId>> pending_;
  std::vector<std::vector<TransferId>> sent_;
  /// Per (lane, member), kept once a plan with barriers is emitted: everything it received, and
  /// the last transfer it received in each phase before the latest barrier.
  std::vector<std::vector<TransferId>> history_;
  std::vector<std::vector<TransferId>> sticky_;
  bool track_history_ = false;
  TransferId phase_start_ = 0;  ///< the first transfer emitted after the latest barrier
};

/// A torus every NPU of which takes part, as the torus baselines need it: the layout's dimension
/// sizes (dimension 0 varies fastest in NPU ids). Empty when the topology is not such a torus.
/// A grid whose dimensions all have at most 2 NPUs counts (a hypercube: wrapping adds no link).
std::vector<std::uint32_t> full_torus_dims(const Topology& topology, const Collective& collective);

/// "4x4x2".
std::string join_dims(const std::vector<std::uint32_t>& dims);

}  // namespace tenet::baselines
