// SPDX-License-Identifier: MIT
// Step-synchronous plans and their emission (see step_plan.hpp).

#include "step_plan.hpp"

#include <algorithm>

namespace tenet::baselines {

void StepPlan::add(std::uint32_t step, std::uint32_t lane, std::uint32_t src, std::uint32_t dst,
                   std::span<const ChunkId> chunks) {
  PlannedTransfer transfer;
  transfer.chunk_begin = chunks_.size();
  transfer.chunk_count = static_cast<std::uint32_t>(chunks.size());
  transfer.lane = lane;
  transfer.src = src;
  transfer.dst = dst;
  chunks_.insert(chunks_.end(), chunks.begin(), chunks.end());
  steps_[step].push_back(transfer);
}

StepEmitter::StepEmitter(ScheduleBuilder& builder, std::uint32_t lanes)
    : builder_(builder),
      lanes_(lanes),
      members_(builder.member_count()),
      pending_(static_cast<std::size_t>(lanes) * members_),
      sent_(static_cast<std::size_t>(lanes) * members_),
      history_(static_cast<std::size_t>(lanes) * members_),
      sticky_(static_cast<std::size_t>(lanes) * members_) {}

void StepEmitter::barrier() {
  std::vector<TransferId> shared;
  for (std::uint32_t member = 0; member < members_; ++member) {
    shared.clear();
    for (std::uint32_t lane = 0; lane < lanes_; ++lane) {
      shared.insert(shared.end(), sent(lane, member).begin(), sent(lane, member).end());
      shared.insert(shared.end(), pending(lane, member).begin(), pending(lane, member).end());
    }
    for (std::uint32_t lane = 0; lane < lanes_; ++lane) {
      if (track_history_) {
        // What the lane last received in the phase now ending (not what an earlier barrier
        // merged in, should the lane have been idle).
        for (TransferId id : pending(lane, member)) {
          if (id >= phase_start_) sticky(lane, member).push_back(id);
        }
      }
      std::vector<TransferId>& deps = pending(lane, member);
      deps = shared;
      if (track_history_) deps.insert(deps.end(), history(lane, member).begin(), history(lane, member).end());
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      sent(lane, member).clear();
    }
  }
  phase_start_ = static_cast<TransferId>(builder_.schedule().size());
}

void StepEmitter::emit_collective(const StepPlan& plan, CollectiveKind collective, bool barrier_between) {
  switch (collective) {
    case CollectiveKind::kReduceScatter: emit(plan, TransferKind::kReduce, false); break;
    case CollectiveKind::kAllGather: emit(plan, TransferKind::kCopy, true); break;
    case CollectiveKind::kAllReduce:
      emit(plan, TransferKind::kReduce, false);
      emit(plan, TransferKind::kCopy, true, barrier_between);
      break;
  }
}

void StepEmitter::emit(const StepPlan& plan, TransferKind kind, bool reversed, bool barrier_first) {
  const std::vector<NodeId>& npus = builder_.members();
  const std::uint32_t steps = plan.step_count();
  struct Emitted {
    TransferId id;
    std::uint32_t lane;
    std::uint32_t src;
    std::uint32_t dst;
  };
  std::vector<Emitted> emitted;
  std::vector<TransferId> deps;
  for (std::uint32_t index = 0; index < steps && !track_history_; ++index) track_history_ = plan.barrier_before(index);
  for (std::uint32_t position = 0; position < steps; ++position) {
    const std::uint32_t index = reversed ? steps - 1 - position : position;
    // Read backwards, the barrier that preceded step i follows it: it now precedes step i - 1.
    const bool merge =
        position == 0 ? barrier_first : (reversed ? plan.barrier_before(index + 1) : plan.barrier_before(index));
    if (merge) barrier();
    emitted.clear();
    for (const PlannedTransfer& planned : plan.step(index)) {
      const std::uint32_t src = reversed ? planned.dst : planned.src;
      const std::uint32_t dst = reversed ? planned.src : planned.dst;
      deps = pending(planned.lane, src);
      deps.insert(deps.end(), sent(planned.lane, src).begin(), sent(planned.lane, src).end());
      const std::vector<TransferId>& carried = sticky(planned.lane, src);
      if (!carried.empty()) {
        deps.insert(deps.end(), carried.begin(), carried.end());
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      }
      const TransferId id = builder_.add(npus[src], npus[dst], kind, plan.chunks_of(planned), deps);
      emitted.push_back({id, planned.lane, src, dst});
    }
    // A sender's earlier steps are now behind its new transfers; what arrives in this step is
    // what its next step must wait for.
    for (const Emitted& transfer : emitted) {
      pending(transfer.lane, transfer.src).clear();
      sent(transfer.lane, transfer.src).clear();
    }
    for (const Emitted& transfer : emitted) sent(transfer.lane, transfer.src).push_back(transfer.id);
    for (const Emitted& transfer : emitted) pending(transfer.lane, transfer.dst).push_back(transfer.id);
    if (track_history_) {
      for (const Emitted& transfer : emitted) history(transfer.lane, transfer.dst).push_back(transfer.id);
    }
  }
}

std::vector<std::uint32_t> full_torus_dims(const Topology& topology, const Collective& collective) {
  const GridLayout& layout = topology.layout;
  if (!layout.is_grid() || layout.size() != topology.npu_count() || topology.switch_count() != 0) return {};
  if (!collective.members.empty() && collective.members.size() != topology.npu_count()) return {};
  std::vector<std::uint32_t> dims;
  bool small = true;
  for (int size : layout.dims) {
    if (size < 1) return {};
    dims.push_back(static_cast<std::uint32_t>(size));
    small = small && size <= 2;
  }
  if (!layout.wraps && !small) return {};
  return dims;
}

std::string join_dims(const std::vector<std::uint32_t>& dims) {
  std::string text;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(dims[i]);
  }
  return text;
}

}  // namespace tenet::baselines
