// SPDX-License-Identifier: MIT
// Dependencies: the schedule's DAG as MSCCL can express it. MSCCL orders steps across ranks only
// by messages and within a rank only by the order of a threadblock's steps and by waiting on
// another threadblock's progress flag. So on each rank the writer walks the operations in replay
// order and, per buffer slot, makes every access wait for the conflicting accesses before it in
// other threadblocks: a read for the last write, a write for the last write and every read since
// (a reduction into a slot is both). Then every slot sees the same sequence of values as in the
// verified replay, whatever the GPU's timing. The schedule's own dependencies between transfers
// that MSCCL can express are kept too: a send waits for the transfers its transfer depends on
// that this rank sent or received. That keeps a switch port's planned order (switch-native plans
// make it dependencies, synth/port_order.cpp): sends to different peers are different
// threadblocks, and without the wait they would start together and share the port. Orders that
// involve other ranks' ports cannot be expressed (MSCCL orders ranks only by messages).
// Each operation keeps only its latest wait per
// threadblock, and a vector clock drops waits already implied by others, so most steps need none
// or one; several become nops directly before the step (SPEC 6.3).

#include <algorithm>

#include "writer.hpp"

namespace tenet::msccl_detail {
namespace {

std::string tb_label(const PlannedTb& tb, int rank, int id) {
  std::string text = "rank " + std::to_string(rank) + " tb " + std::to_string(id) + " (";
  if (tb.send >= 0) text += "send to rank " + std::to_string(tb.send);
  if (tb.send >= 0 && tb.recv >= 0) text += ", ";
  if (tb.recv >= 0) text += "receive from rank " + std::to_string(tb.recv);
  if (tb.send < 0 && tb.recv < 0) text += "local copies";
  text += ", channel " + std::to_string(tb.chan) + ")";
  return text;
}

/// Where each transfer's last piece is sent and received: the op index on its sender's and on its
/// receiver's rank (-1: none).
struct TransferOps {
  std::vector<int> send;
  std::vector<int> recv;
};

TransferOps transfer_ops(const WriterContext& context, const Plan& plan) {
  const std::size_t transfers = context.schedule->size();
  TransferOps found;
  found.send.assign(transfers, -1);
  found.recv.assign(transfers, -1);
  // The latest part seen so far per transfer: sends in the first half, receives in the second.
  std::vector<int> latest_part(2 * transfers, -1);
  const auto keep = [&](std::vector<int>& at, std::size_t side, int piece, int op) {
    const Piece& p = plan.pieces[static_cast<std::size_t>(piece)];
    int& latest = latest_part[side * transfers + p.transfer];
    if (p.part < latest) return;
    latest = p.part;
    at[p.transfer] = op;
  };
  for (const RankPlan& rank : plan.ranks) {
    for (std::size_t i = 0; i < rank.ops.size(); ++i) {
      const Op& op = rank.ops[i];
      if (op.tb < 0) continue;
      const int index = static_cast<int>(i);
      switch (op.kind) {
        case OpKind::kSend: keep(found.send, 0, op.piece, index); break;
        case OpKind::kRecv: keep(found.recv, 1, op.piece, index); break;
        case OpKind::kFused:
          keep(found.recv, 1, op.piece, index);
          keep(found.send, 0, op.forward, index);
          break;
        case OpKind::kCopy: break;
      }
    }
  }
  return found;
}

class RankDependencies {
 public:
  RankDependencies(const WriterContext& context, Plan& plan, int rank, const TransferOps& transfer_ops)
      : context_(context),
        plan_(plan),
        ranks_plan_(plan.ranks[static_cast<std::size_t>(rank)]),
        rank_(rank),
        transfer_ops_(transfer_ops) {}

  void run() {
    const std::size_t tbs = ranks_plan_.tbs.size();
    std::vector<int> order;
    for (std::size_t i = 0; i < ranks_plan_.ops.size(); ++i) {
      if (ranks_plan_.ops[i].tb >= 0) order.push_back(static_cast<int>(i));
    }
    std::sort(order.begin(), order.end(), [&](int a, int b) { return op(a).before(op(b)); });
    row_of_.assign(ranks_plan_.ops.size(), -1);
    clocks_.assign(order.size() * tbs, -1);
    std::vector<int> last_row(tbs, -1);
    // Scratch comes last, and staging blocks (layout.cpp) can reach past the collective's chunks.
    const std::size_t slots = 2 * static_cast<std::size_t>(context_.chunks) +
                              static_cast<std::size_t>(std::max(context_.chunks, ranks_plan_.s_chunks));
    last_writer_.assign(slots, -1);
    readers_.assign(slots, {});

    for (std::size_t row = 0; row < order.size(); ++row) {
      const int index = order[row];
      Op& current = op(index);
      row_of_[static_cast<std::size_t>(index)] = static_cast<int>(row);
      std::vector<int> reads;
      std::vector<int> writes;
      accesses(current, reads, writes);
      // The latest conflicting operation per other threadblock.
      std::vector<int> latest(tbs, -1);
      const auto need = [&](int other) {
        if (other < 0) return;
        const Op& them = op(other);
        if (them.tb == current.tb) return;
        int& slot = latest[static_cast<std::size_t>(them.tb)];
        if (slot < 0 || op(slot).index < them.index) slot = other;
      };
      for (int s : reads) need(last_writer_[static_cast<std::size_t>(s)]);
      for (int s : writes) {
        need(last_writer_[static_cast<std::size_t>(s)]);
        for (int reader : readers_[static_cast<std::size_t>(s)]) need(reader);
      }
      if (plan_.schedule_order && (current.kind == OpKind::kSend || current.kind == OpKind::kFused)) {
        for (int other : scheduled_waits(current)) {
          if (op(other).before(current)) need(other);
        }
      }
      std::vector<int> candidates;
      for (int other : latest) {
        if (other >= 0) candidates.push_back(other);
      }
      std::sort(candidates.begin(), candidates.end(), [&](int a, int b) { return op(b).before(op(a)); });
      int* clock = &clocks_[row * tbs];
      const int previous = last_row[static_cast<std::size_t>(current.tb)];
      if (previous >= 0) std::copy_n(&clocks_[static_cast<std::size_t>(previous) * tbs], tbs, clock);
      for (int other : candidates) {
        const Op& them = op(other);
        if (clock[them.tb] >= them.index) continue;
        current.deps.emplace_back(them.tb, them.index);
        const int* theirs = &clocks_[static_cast<std::size_t>(row_of_[static_cast<std::size_t>(other)]) * tbs];
        for (std::size_t t = 0; t < tbs; ++t) clock[t] = std::max(clock[t], theirs[t]);
      }
      clock[current.tb] = current.index;
      last_row[static_cast<std::size_t>(current.tb)] = static_cast<int>(row);
      for (int s : reads) readers_[static_cast<std::size_t>(s)].push_back(index);
      for (int s : writes) {
        last_writer_[static_cast<std::size_t>(s)] = index;
        readers_[static_cast<std::size_t>(s)].clear();
      }
    }
  }

 private:
  Op& op(int index) { return ranks_plan_.ops[static_cast<std::size_t>(index)]; }

  /// Ops of this rank that the sent transfer's schedule dependencies name.
  std::vector<int> scheduled_waits(const Op& current) const {
    const Schedule& schedule = *context_.schedule;
    const int sent = current.kind == OpKind::kFused ? current.forward : current.piece;
    std::vector<int> waits;
    for (TransferId dep : schedule.deps_of(plan_.pieces[static_cast<std::size_t>(sent)].transfer)) {
      if (context_.rank_of[schedule.src(dep)] == rank_ && transfer_ops_.send[dep] >= 0)
        waits.push_back(transfer_ops_.send[dep]);
      if (context_.rank_of[schedule.dst(dep)] == rank_ && transfer_ops_.recv[dep] >= 0)
        waits.push_back(transfer_ops_.recv[dep]);
    }
    return waits;
  }

  void add_range(const Location& location, int count, std::vector<int>& slots) const {
    for (int i = 0; i < count; ++i) {
      slots.push_back(static_cast<int>(location.buffer) * context_.chunks + location.index + i);
    }
  }

  void accesses(const Op& current, std::vector<int>& reads, std::vector<int>& writes) const {
    if (current.kind == OpKind::kCopy) {
      add_range(current.copy_src, current.copy_cnt, reads);
      if (current.copy_reduces) add_range(current.copy_dst, current.copy_cnt, reads);
      add_range(current.copy_dst, current.copy_cnt, writes);
      return;
    }
    const Piece& piece = plan_.pieces[static_cast<std::size_t>(current.piece)];
    if (current.kind == OpKind::kSend) {
      add_range(piece.read, piece.cnt, reads);
      return;
    }
    // A receive (fused or not); a fused send reads only what this step itself wrote.
    if (piece.reduce) add_range(piece.operand, piece.cnt, reads);
    add_range(piece.write, piece.cnt, writes);
  }

  const WriterContext& context_;
  Plan& plan_;
  RankPlan& ranks_plan_;
  int rank_;
  const TransferOps& transfer_ops_;
  std::vector<int> row_of_;
  std::vector<int> clocks_;
  std::vector<int> last_writer_;
  std::vector<std::vector<int>> readers_;
};

/// Nops before steps with several dependencies, XML positions, and the limits they meet.
bool place_steps(const WriterContext& context, RankPlan& plan, int rank, LimitProblem& problem) {
  int steps = 0;
  for (std::size_t t = 0; t < plan.tbs.size(); ++t) {
    PlannedTb& tb = plan.tbs[t];
    int position = 0;
    for (int index : tb.ops) {
      Op& current = plan.ops[static_cast<std::size_t>(index)];
      position += std::max(0, static_cast<int>(current.deps.size()) - 1);
      current.position = position++;
    }
    tb.positions = position;
    steps += position;
    if (position > kMaxSteps) {
      problem.message = tb_label(tb, rank, static_cast<int>(t)) + " needs " + std::to_string(position) +
                        " steps (nops included); the runtime runs at most 256 per threadblock";
      problem.channels_help = true;
      problem.excess = static_cast<double>(position) / kMaxSteps;
      problem.tb_steps = position;
      return false;
    }
  }
  const int tbs = static_cast<int>(plan.tbs.size());
  const int nodes = 1 + context.ranks + tbs + steps;
  for (const PlannedTb& tb : plan.tbs) problem.tb_steps = std::max(problem.tb_steps, tb.positions);
  if (nodes > kMaxNodes) {
    problem.message = "rank " + std::to_string(rank) + " needs " + std::to_string(nodes) + " XML nodes (1 algo + " +
                      std::to_string(context.ranks) + " gpus + " + std::to_string(tbs) + " tbs + " +
                      std::to_string(steps) + " steps); the runtime's reader loads at most 4095 per rank";
    problem.excess = static_cast<double>(steps) / std::max(1, kMaxNodes - 1 - context.ranks - tbs);
    return false;
  }
  for (Op& current : plan.ops) {
    for (auto& [tb, index] : current.deps) {
      Op& awaited = plan.ops[static_cast<std::size_t>(
          plan.tbs[static_cast<std::size_t>(tb)].ops[static_cast<std::size_t>(index)])];
      awaited.awaited = true;
      index = awaited.position;
    }
  }
  return true;
}

/// Only tbs 0..127 can be awaited (int8 in the runtime): with more tbs, awaited ones come first.
bool renumber_awaited(RankPlan& plan, int rank, LimitProblem& problem) {
  const int count = static_cast<int>(plan.tbs.size());
  if (count <= kMaxDependencyTb + 1) return true;
  std::vector<char> awaited(plan.tbs.size(), 0);
  for (const Op& current : plan.ops) {
    for (const auto& [tb, position] : current.deps) awaited[static_cast<std::size_t>(tb)] = 1;
  }
  std::vector<int> order(plan.tbs.size());
  for (int t = 0; t < count; ++t) order[static_cast<std::size_t>(t)] = t;
  std::stable_partition(order.begin(), order.end(), [&](int t) { return awaited[static_cast<std::size_t>(t)] != 0; });
  const auto awaited_count = std::count(awaited.begin(), awaited.end(), 1);
  if (awaited_count > kMaxDependencyTb + 1) {
    problem.message = "rank " + std::to_string(rank) + " has " + std::to_string(awaited_count) +
                      " threadblocks that others wait for; a dependency can name only tbs 0..127";
    problem.fewer_channels_help = true;
    return false;
  }
  std::vector<int> new_id(plan.tbs.size());
  std::vector<PlannedTb> sorted;
  for (int i = 0; i < count; ++i) {
    new_id[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = i;
    sorted.push_back(std::move(plan.tbs[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])]));
  }
  plan.tbs = std::move(sorted);
  for (Op& current : plan.ops) {
    if (current.tb >= 0) current.tb = new_id[static_cast<std::size_t>(current.tb)];
    for (auto& [tb, position] : current.deps) tb = new_id[static_cast<std::size_t>(tb)];
  }
  return true;
}

}  // namespace

bool add_dependencies(const WriterContext& context, Plan& plan, LimitProblem& problem) {
  const TransferOps ops_of_transfers = plan.schedule_order ? transfer_ops(context, plan) : TransferOps{};
  for (int rank = 0; rank < context.ranks; ++rank) {
    RankPlan& ranks_plan = plan.ranks[static_cast<std::size_t>(rank)];
    const int tbs = static_cast<int>(ranks_plan.tbs.size());
    if (tbs > kMaxThreadblocks) {
      problem.message = "rank " + std::to_string(rank) + " needs " + std::to_string(tbs) +
                        (plan.pair_peers ? " threadblocks (one per peer and channel, its sends and receives together)"
                                         : " threadblocks (one per peer, channel and direction)") +
                        "; the runtime allows 216";
      problem.fewer_channels_help = true;
      return false;
    }
    // Steps alone past the node limit: say so before spending time on dependencies.
    std::size_t ops = 0;
    for (const PlannedTb& tb : ranks_plan.tbs) {
      ops += tb.ops.size();
      problem.tb_steps = std::max(problem.tb_steps, static_cast<int>(tb.ops.size()));
    }
    if (1 + static_cast<std::size_t>(context.ranks) + static_cast<std::size_t>(tbs) + ops >
        static_cast<std::size_t>(kMaxNodes)) {
      problem.message = "rank " + std::to_string(rank) + " needs at least " +
                        std::to_string(1 + static_cast<std::size_t>(context.ranks + tbs) + ops) +
                        " XML nodes (1 algo + " + std::to_string(context.ranks) + " gpus + " + std::to_string(tbs) +
                        " tbs + " + std::to_string(ops) + " steps); the runtime's reader loads at most 4095 per rank";
      problem.excess = static_cast<double>(ops) / std::max(1, kMaxNodes - 1 - context.ranks - tbs);
      return false;
    }
    RankDependencies(context, plan, rank, ops_of_transfers).run();
    if (!place_steps(context, ranks_plan, rank, problem)) return false;
    if (!renumber_awaited(ranks_plan, rank, problem)) return false;
  }
  return true;
}

}  // namespace tenet::msccl_detail
