// SPDX-License-Identifier: MIT
// From a Schedule to threadblocks of ordered operations.
//
// Mapping. Rank r is members[r]; MSCCL chunk c is schedule chunk c (nchunksperloop = members x
// chunks per member). Where a rank keeps chunk c:
//   in place      all-gather o[c]; reduce-scatter and all-reduce i[c] (the buffer the runtime aliases)
//   out of place  inputs are read from i (never written: NCCL's sendbuff is const) until the rank
//                 first receives into the chunk; from then on all-gather and all-reduce use o[c],
//                 reduce-scatter o[c - r*C] for its own chunks and scratch for the others.
// Each transfer is replayed in the verifier's order (chunk_places.cpp; effective times: reads when
// it starts, writes when it ends, ends first on ties) to learn where every chunk is read and
// written, once for all layouts; its chunk list is cut into pieces contiguous in all those places
// (and at most `cap` long). A piece is a send step on the sender (`s`) and a receive step on the
// receiver (`r` for a copy, `rrc` with the receiver's own value as the local operand for a
// reduction).
//
// Staging (LayoutChoices::stage). A transfer whose chunks lie apart where they are read or written
// (an aggregated transfer of chunks 6, 14 and 22) would be a step per run, each paying the
// route's alpha. Staged, it is one step: the sender first copies the runs into a block of
// scratch and sends the block; the receiver receives into a block of its own and then copies the
// runs out (a reduction into its own operands adds them in with `re` steps; otherwise it first
// copies its operands into the block and receives with `rrc`). The copies run in the threadblock
// of their step, so only that step's order holds them; local copies cost no time in the
// runtime's model (to_schedule.cpp). Blocks reuse one region of scratch, as large as the
// collective (or LayoutChoices::staging_room times that), round robin; deps.cpp orders each reuse
// after the accesses before it.
//
// Threadblocks, fused steps and why the result cannot deadlock: threadblocks.cpp.
//
// Channels. Transfers between one pair of ranks that overlap in replay order get separate lanes
// (so a FIFO never has to deliver out of order); each lane is dealt round-robin over `channels`
// channels; ranks with more than 32 peers get their peers split into groups on further channels.
//
#include <algorithm>
#include <map>
#include <span>

#include "writer.hpp"

namespace tenet::msccl_detail {
namespace {

constexpr TransferId kNone = kNoTransfer;

bool follows(const Location& previous, const Location& next) {
  return previous.index >= 0 && next.buffer == previous.buffer && next.index == previous.index + 1;
}

class Layout {
 public:
  Layout(const WriterContext& context, const LayoutChoices& choices, Plan& plan)
      : context_(context),
        schedule_(*context.schedule),
        choices_(choices),
        plan_(plan),
        entry_base_(context.places.entry_base),
        read_(context.places.read),
        write_(context.places.write),
        operand_(context.places.operand),
        writer_of_read_(context.places.writer_of_read),
        written_(context.places.written),
        send_event_(context.places.send_event),
        recv_event_(context.places.recv_event),
        start_order_(context.places.start_order) {}

  bool run(LimitProblem& problem) {
    make_pieces();
    find_forwards();
    if (!assign_channels(problem)) return false;
    make_ops();
    return true;
  }

 private:
  Location initial(int rank, int chunk) const { return initial_place(context_, rank, chunk); }
  Location work(int rank, int chunk) const { return work_place(context_, rank, chunk); }
  std::size_t slot(int rank, ChunkId chunk) const { return context_.slot(rank, chunk); }

  // ---- pieces -----------------------------------------------------------------------------------

  void make_pieces() {
    const std::size_t count = schedule_.size();
    piece_base_.assign(count + 1, 0);
    staging_next_.assign(static_cast<std::size_t>(context_.ranks), 0);
    staging_used_.assign(static_cast<std::size_t>(context_.ranks), 0);
    for (std::size_t t = 0; t < count; ++t) {
      piece_base_[t] = static_cast<int>(plan_.pieces.size());
      const Transfer& transfer = schedule_.transfer(static_cast<TransferId>(t));
      const bool reduce = transfer.kind == TransferKind::kReduce;
      const std::uint64_t base = entry_base_[t];
      if (choices_.stage && stage_piece(static_cast<TransferId>(t), transfer, reduce)) continue;
      for (std::uint32_t i = 0; i < transfer.chunk_count; ++i) {
        const std::uint64_t e = base + i;
        Piece* current =
            plan_.pieces.size() > static_cast<std::size_t>(piece_base_[t]) ? &plan_.pieces.back() : nullptr;
        const bool extend = current != nullptr && current->cnt < choices_.cap && follows(read_[e - 1], read_[e]) &&
                            follows(write_[e - 1], write_[e]) && (!reduce || follows(operand_[e - 1], operand_[e]));
        if (extend) {
          ++current->cnt;
          continue;
        }
        Piece piece = piece_at(static_cast<TransferId>(t), transfer, e, 1);
        piece.part = static_cast<int>(plan_.pieces.size()) - piece_base_[t];
        plan_.pieces.push_back(piece);
      }
    }
    piece_base_[count] = static_cast<int>(plan_.pieces.size());
  }

  /// The piece of `cnt` chunks of transfer `t` from entry `e`, where the replay put them.
  Piece piece_at(TransferId t, const Transfer& transfer, std::uint64_t e, int cnt) const {
    Piece piece;
    piece.transfer = t;
    piece.sender = context_.rank_of[transfer.src];
    piece.receiver = context_.rank_of[transfer.dst];
    piece.reduce = transfer.kind == TransferKind::kReduce;
    piece.cnt = cnt;
    piece.entry = e;
    piece.read = read_[e];
    piece.write = write_[e];
    piece.operand = operand_[e];
    piece.send_event = send_event_[t];
    piece.recv_event = recv_event_[t];
    return piece;
  }

  // ---- staging through scratch (LayoutChoices::stage) -------------------------------------------

  /// True when the entries [first, first + cnt) lie one after the other in `where`.
  static bool contiguous(const std::vector<Location>& where, std::uint64_t first, int cnt) {
    for (int i = 1; i < cnt; ++i) {
      if (!follows(where[first + static_cast<std::size_t>(i) - 1], where[first + static_cast<std::size_t>(i)]))
        return false;
    }
    return true;
  }

  /// `cnt` consecutive scratch chunks of `rank` for staging, after the scratch the collective
  /// itself uses. The region holds as many chunks as the collective has and is reused round
  /// robin: deps.cpp orders a reuse after the accesses before it, as for any slot.
  Location staging_block(int rank, int cnt) {
    int& next = staging_next_[static_cast<std::size_t>(rank)];
    if (next + cnt > staging_capacity()) next = 0;
    const Location block{MscclBuffer::kScratch, staging_base() + next};
    next += cnt;
    int& used = staging_used_[static_cast<std::size_t>(rank)];
    used = std::max(used, block.index + cnt);
    return block;
  }
  int staging_base() const {
    const bool scratch_in_use = !context_.in_place && context_.coll == CollectiveKind::kReduceScatter;
    return scratch_in_use ? context_.chunks - context_.per_rank : 0;
  }
  /// Chunks of the staging region: staging_room times as many as the collective has, within the
  /// int16 offsets.
  int staging_capacity() const {
    return std::min(std::max(choices_.staging_room * context_.chunks, kMaxCount), kMaxOffset + 1 - staging_base());
  }

  /// Copies between the runs of `where` from `first` and the block: into it `before` the step,
  /// out of it after.
  void stage_runs(int piece, bool on_sender, bool before, const std::vector<Location>& where, std::uint64_t first,
                  int cnt, const Location& block, bool reduces = false) {
    int run = 0;
    for (int i = 1; i <= cnt; ++i) {
      const std::uint64_t e = first + static_cast<std::size_t>(i);
      if (i < cnt && follows(where[e - 1], where[e])) continue;
      const Location at = where[first + static_cast<std::size_t>(run)];
      const Location in_block{block.buffer, block.index + run};
      staged_.push_back({piece, on_sender, before, before ? at : in_block, before ? in_block : at, i - run, reduces});
      run = i;
    }
  }

  /// One piece for the whole transfer, through staging blocks where its chunks lie apart. False
  /// (nothing made) where they do not, or where one step cannot carry them.
  bool stage_piece(TransferId t, const Transfer& transfer, bool reduce) {
    const int cnt = static_cast<int>(transfer.chunk_count);
    const std::uint64_t first = entry_base_[t];
    if (cnt < 2 || cnt > choices_.cap || cnt > staging_capacity()) return false;
    const bool read_apart = !contiguous(read_, first, cnt);
    const bool write_apart = !contiguous(write_, first, cnt) || (reduce && !contiguous(operand_, first, cnt));
    if (!read_apart && !write_apart) return false;
    Piece piece = piece_at(t, transfer, first, cnt);
    const int index = static_cast<int>(plan_.pieces.size());
    if (read_apart) {
      piece.read = staging_block(piece.sender, cnt);
      stage_runs(index, true, true, read_, first, cnt, piece.read);
    }
    if (write_apart && reduce && in_place_operands(first, cnt)) {
      // A reduction into its own operands receives into the block and adds each run into place
      // after (`re`): the receive waits for nothing local. Gathering the operands into the block
      // first made it wait for every run's operand before taking any of the sender's calls, and a
      // round of such steps deadlocked once a step of cnt c became c calls (a 144-GPU switch's
      // all-reduce of 1 MiB in synchronous rounds, radix-16 unwinding: no staged file, 35.9 us
      // unstaged).
      piece.reduce = false;
      piece.write = staging_block(piece.receiver, cnt);
      stage_runs(index, false, false, write_, first, cnt, piece.write, true);
    } else if (write_apart) {
      // A reduction adds into the block what the receiver holds, then spreads the sums.
      const Location block = staging_block(piece.receiver, cnt);
      if (reduce) stage_runs(index, false, true, operand_, first, cnt, block);
      stage_runs(index, false, false, write_, first, cnt, block);
      piece.write = block;
      if (reduce) piece.operand = block;
    }
    plan_.pieces.push_back(piece);
    return true;
  }

  /// True when each of the entries' operands is where its sum goes.
  bool in_place_operands(std::uint64_t first, int cnt) const {
    for (int i = 0; i < cnt; ++i) {
      if (!(operand_[first + static_cast<std::size_t>(i)] == write_[first + static_cast<std::size_t>(i)])) return false;
    }
    return true;
  }

  ChunkId chunk_at(std::uint64_t entry, TransferId transfer) const {
    return schedule_.chunks_of(schedule_.transfer(transfer))[entry - entry_base_[transfer]];
  }

  /// A piece forwards a received one when it sends exactly those chunks, from where that receive
  /// put them, and nothing wrote them in between: then one `rcs`/`rrcs` step can do both.
  void find_forwards() {
    for (Piece& piece : plan_.pieces) {
      const TransferId source = writer_of_read_[piece.entry];
      if (source == kNone) continue;
      bool same_writer = true;
      for (int i = 1; i < piece.cnt && same_writer; ++i)
        same_writer = writer_of_read_[piece.entry + static_cast<std::uint64_t>(i)] == source;
      if (!same_writer) continue;
      const ChunkId first = chunk_at(piece.entry, piece.transfer);
      for (int q = piece_base_[source]; q < piece_base_[source + 1]; ++q) {
        const Piece& received = plan_.pieces[static_cast<std::size_t>(q)];
        if (received.cnt != piece.cnt || chunk_at(received.entry, source) != first || !(received.write == piece.read))
          continue;
        bool same = true;
        for (int i = 1; i < piece.cnt && same; ++i) {
          same = chunk_at(received.entry + static_cast<std::uint64_t>(i), source) ==
                 chunk_at(piece.entry + static_cast<std::uint64_t>(i), piece.transfer);
        }
        if (same) piece.forwards = q;
        break;
      }
    }
  }

  // ---- channels ---------------------------------------------------------------------------------

  bool assign_channels(LimitProblem& problem) {
    // Pairs in the order their first transfer starts, transfers of a pair in start order.
    std::map<std::pair<int, int>, std::vector<TransferId>> by_pair;
    for (TransferId t : start_order_) {
      const Transfer& transfer = schedule_.transfer(t);
      by_pair[{context_.rank_of[transfer.src], context_.rank_of[transfer.dst]}].push_back(t);
    }
    // Peer groups: a rank may have 32 send peers and 32 receive peers per channel.
    std::vector<std::map<int, int>> out_per_group(static_cast<std::size_t>(context_.ranks));
    std::vector<std::map<int, int>> in_per_group(static_cast<std::size_t>(context_.ranks));
    std::map<std::pair<int, int>, int> group_of;
    int groups = 1;
    for (const auto& [pair, transfers] : by_pair) {
      int group = 0;
      while (out_per_group[static_cast<std::size_t>(pair.first)][group] >= kMaxPeersPerChannel ||
             in_per_group[static_cast<std::size_t>(pair.second)][group] >= kMaxPeersPerChannel) {
        ++group;
      }
      ++out_per_group[static_cast<std::size_t>(pair.first)][group];
      ++in_per_group[static_cast<std::size_t>(pair.second)][group];
      group_of[pair] = group;
      groups = std::max(groups, group + 1);
    }
    // Lanes: a transfer joins the first lane whose last transfer has ended before it starts; with
    // chain_lanes, first the lane of a transfer between the same pair that it waits for, where
    // that one is the lane's last. A chain of transfers (a tree edge's pieces) then keeps to one
    // lane, in its own order, and a piece that arrives late holds up only its own chain's
    // threadblock (hypercube3d-4x4x4 all-reduce of 16 MiB on 32 trees: 242.0 -> 227.7 us).
    std::map<std::pair<int, int>, std::vector<int>> lane_of_pair;
    int lanes = 1;
    for (const auto& [pair, transfers] : by_pair) {
      std::vector<std::uint64_t> last_end;
      std::vector<TransferId> last_transfer;
      std::vector<int> dealt;
      for (TransferId t : transfers) {
        std::size_t lane = last_end.size();
        for (TransferId dep : choices_.chain_lanes ? schedule_.deps_of(t) : std::span<const TransferId>{}) {
          const auto found = std::find(last_transfer.begin(), last_transfer.end(), dep);
          if (found == last_transfer.end()) continue;
          const auto at = static_cast<std::size_t>(found - last_transfer.begin());
          if (last_end[at] <= send_event_[t]) {
            lane = at;
            break;
          }
        }
        if (lane == last_end.size()) {
          lane = 0;
          while (lane < last_end.size() && last_end[lane] > send_event_[t]) ++lane;
        }
        if (lane == last_end.size()) {
          last_end.push_back(0);
          last_transfer.push_back(kNone);
          dealt.push_back(0);
        }
        last_end[lane] = recv_event_[t];
        last_transfer[lane] = t;
        for (int q = piece_base_[t]; q < piece_base_[t + 1]; ++q) {
          const int slot_in_lane = dealt[lane]++ % static_cast<int>(choices_.channels);
          plan_.pieces[static_cast<std::size_t>(q)].channel =
              group_of[pair] + groups * (static_cast<int>(lane) * static_cast<int>(choices_.channels) + slot_in_lane);
        }
      }
      lanes = std::max(lanes, static_cast<int>(last_end.size()));
    }
    plan_.nchannels = 1;
    for (const Piece& piece : plan_.pieces) plan_.nchannels = std::max(plan_.nchannels, piece.channel + 1);
    if (plan_.nchannels > kMaxChannels) {
      problem.message = "the file would need " + std::to_string(plan_.nchannels) + " channels (" +
                        std::to_string(groups) + " peer group(s) of at most 32 peers x " + std::to_string(lanes) +
                        " overlapping transfer lane(s) between a pair of ranks x " + std::to_string(choices_.channels) +
                        " channel(s) per lane); the runtime has 32";
      problem.fewer_channels_help = choices_.channels > 1;
      return false;
    }
    return true;
  }

  // ---- operations and threadblocks --------------------------------------------------------------

  void make_ops() {
    plan_.ranks.assign(static_cast<std::size_t>(context_.ranks), {});
    for (std::size_t q = 0; q < plan_.pieces.size(); ++q) {
      const Piece& piece = plan_.pieces[q];
      Op send;
      send.kind = OpKind::kSend;
      send.piece = static_cast<int>(q);
      send.event = static_cast<std::int64_t>(piece.send_event);
      send.part = piece.part;
      plan_.ranks[static_cast<std::size_t>(piece.sender)].ops.push_back(send);
      Op receive = send;
      receive.kind = OpKind::kRecv;
      receive.event = static_cast<std::int64_t>(piece.recv_event);
      plan_.ranks[static_cast<std::size_t>(piece.receiver)].ops.push_back(receive);
    }
    // Gathering copies just before their send or receive, spreading ones just after, in the
    // same threadblock (threadblocks.cpp) and at the same replay event, ordered by part.
    int order = 0;
    for (const Staged& staged : staged_) {
      const Piece& piece = plan_.pieces[static_cast<std::size_t>(staged.piece)];
      Op copy;
      copy.kind = OpKind::kCopy;
      copy.copy_src = staged.src;
      copy.copy_dst = staged.dst;
      copy.copy_cnt = staged.cnt;
      copy.staged_piece = staged.piece;
      copy.staged_send = staged.on_sender;
      copy.copy_reduces = staged.reduces;
      copy.event = static_cast<std::int64_t>(staged.on_sender ? piece.send_event : piece.recv_event);
      copy.part = (staged.before ? -kStagedParts : kStagedParts) + order++;
      plan_.ranks[static_cast<std::size_t>(staged.on_sender ? piece.sender : piece.receiver)].ops.push_back(copy);
    }
    for (int rank = 0; rank < context_.ranks; ++rank) {
      plan_.ranks[static_cast<std::size_t>(rank)].s_chunks = staging_used_[static_cast<std::size_t>(rank)];
    }
    for (int rank = 0; rank < context_.ranks; ++rank) add_result_copies(rank);
  }

  /// Out of place, a result slot nothing received into still has its value only in i: copy it.
  void add_result_copies(int rank) {
    RankPlan& plan = plan_.ranks[static_cast<std::size_t>(rank)];
    const int c = context_.per_rank;
    const bool every_chunk = context_.coll == CollectiveKind::kAllReduce;
    const int first = every_chunk ? 0 : rank * c;
    const int last = every_chunk ? context_.chunks : (rank + 1) * c;
    for (int chunk = first; chunk < last; ++chunk) {
      if (context_.in_place || written_[slot(rank, static_cast<ChunkId>(chunk))]) continue;
      const Location from = initial(rank, chunk);
      const Location to = work(rank, chunk);
      if (!plan.ops.empty() && plan.ops.back().kind == OpKind::kCopy && plan.ops.back().copy_cnt < choices_.cap &&
          from.index == plan.ops.back().copy_src.index + plan.ops.back().copy_cnt &&
          to.index == plan.ops.back().copy_dst.index + plan.ops.back().copy_cnt) {
        ++plan.ops.back().copy_cnt;
        continue;
      }
      Op copy;
      copy.kind = OpKind::kCopy;
      copy.copy_src = from;
      copy.copy_dst = to;
      copy.copy_cnt = 1;
      copy.event = -1;
      copy.part = static_cast<int>(plan.ops.size());
      plan.ops.push_back(copy);
    }
  }

  const WriterContext& context_;
  const Schedule& schedule_;
  const LayoutChoices& choices_;
  Plan& plan_;

  // The replay's, shared by every layout (ChunkPlaces).
  const std::vector<std::uint64_t>& entry_base_;
  const std::vector<Location>& read_;
  const std::vector<Location>& write_;
  const std::vector<Location>& operand_;
  const std::vector<TransferId>& writer_of_read_;
  const std::vector<char>& written_;
  const std::vector<std::uint64_t>& send_event_;
  const std::vector<std::uint64_t>& recv_event_;
  const std::vector<TransferId>& start_order_;
  std::vector<int> piece_base_;
  /// Staging copies (stage_piece), in the order made.
  struct Staged {
    int piece;
    bool on_sender;
    bool before;  ///< gathers into the block before the step; else spreads from it after
    Location src;
    Location dst;
    int cnt;
    bool reduces;  ///< adds src into dst (`re`) rather than copying
  };
  /// Parts of staging copies are offset by this from their step's (a transfer's parts count up from 0).
  static constexpr int kStagedParts = 1 << 28;
  std::vector<Staged> staged_;
  std::vector<int> staging_next_;
  std::vector<int> staging_used_;
};

}  // namespace

bool lay_out(const WriterContext& context, const LayoutChoices& choices, Plan& plan, LimitProblem& problem) {
  plan = Plan{};
  plan.schedule_order = choices.schedule_order;
  plan.pair_peers = choices.pair_peers;
  if (!Layout(context, choices, plan).run(problem)) return false;
  form_threadblocks(context, choices, plan);
  return true;
}

}  // namespace tenet::msccl_detail
