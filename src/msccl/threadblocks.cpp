// SPDX-License-Identifier: MIT
// Threadblocks and fused steps, from the operations layout.cpp made.
//
// Threadblocks. One per (peer, channel, direction); with pairing, a receive side and a send side of
// one rank and channel share a tb when the rank forwards what it receives from that peer to the
// other, so that "receive a piece, then send exactly it on" becomes one `rcs` (`rrcs`) step; with
// LayoutChoices::pair_peers, the sides left of each peer share one too. Every tb runs its
// operations in replay order.
//
// Why it cannot deadlock. Consider the sequential execution that performs the operations in
// replay order, one at a time, a whole step at once. Each tb meets its operations in its own order,
// every dependency (deps.cpp) points to an earlier operation, and each receive finds its
// message because the send came earlier on the same lane. It needs FIFO room: at any point of the
// replay a connection holds the pieces started but not ended on it. Synthesized schedules carry
// one chunk per link at a time, so that is one call, within the 2 calls of a Simple FIFO even
// when every chunk is a call (the largest buffers); sides are paired only on connections that
// stay within the FIFO's depth throughout, and a fused step moves its send to the receive before
// it only when the connection then still holds at most the FIFO's depth. So a complete
// execution exists, and because the threadblocks form a determinate process network (blocking
// FIFO reads and writes, monotone flags), every execution completes: no deadlock at any buffer
// size. Schedules with larger blocks in flight (baselines) are not covered by this argument; for
// every file the writer runs the interpreter (execute.cpp) on every call split before
// returning it, and falls back to unpaired threadblocks and smaller steps if it finds a hang.

#include <algorithm>
#include <map>
#include <tuple>

#include "writer.hpp"

namespace tenet::msccl_detail {
namespace {

class ThreadblockBuilder {
 public:
  ThreadblockBuilder(const WriterContext& context, const LayoutChoices& choices, Plan& plan)
      : context_(context), choices_(choices), plan_(plan) {}

  void run() {
    make_threadblocks();
    fuse();
  }

 private:
  std::tuple<int, int, int> connection(const Piece& piece) const {
    return {piece.sender, piece.receiver, piece.channel};
  }

  /// Largest number of calls (cnt, as with the largest buffers) in flight on each connection.
  void measure_occupancy() {
    std::map<std::tuple<int, int, int>, std::vector<std::pair<std::uint64_t, int>>> changes;
    for (std::size_t q = 0; q < plan_.pieces.size(); ++q) {
      const Piece& piece = plan_.pieces[q];
      changes[connection(piece)].emplace_back(piece.send_event, piece.cnt);
      changes[connection(piece)].emplace_back(piece.recv_event, -piece.cnt);
      on_connection_[connection(piece)].push_back(static_cast<int>(q));
    }
    for (auto& [key, list] : changes) {
      std::sort(list.begin(), list.end());
      int level = 0;
      int peak = 0;
      for (const auto& [event, delta] : list) peak = std::max(peak, level += delta);
      peak_[key] = peak;
    }
  }

  /// Calls in flight on the connection just after `event`.
  int open_at(const std::tuple<int, int, int>& key, std::uint64_t event) const {
    int open = 0;
    for (int q : on_connection_.at(key)) {
      const Piece& piece = plan_.pieces[static_cast<std::size_t>(q)];
      if (piece.send_event < event && piece.recv_event > event) open += piece.cnt;
    }
    return open;
  }

  void make_threadblocks() {
    measure_occupancy();
    for (int rank = 0; rank < context_.ranks; ++rank) {
      RankPlan& plan = plan_.ranks[static_cast<std::size_t>(rank)];
      // Sides: (chan, peer) for sending and for receiving.
      std::map<std::pair<int, int>, int> send_side;
      std::map<std::pair<int, int>, int> recv_side;
      std::map<std::tuple<int, int, int>, int> weight;  // (chan, recv peer, send peer)
      for (const Op& op : plan.ops) {
        if (op.kind == OpKind::kCopy) continue;
        const Piece& piece = plan_.pieces[static_cast<std::size_t>(op.piece)];
        if (op.kind == OpKind::kSend) {
          send_side[{piece.channel, piece.receiver}] = -1;
          if (piece.forwards >= 0) {
            const Piece& received = plan_.pieces[static_cast<std::size_t>(piece.forwards)];
            if (received.channel == piece.channel) ++weight[{piece.channel, received.sender, piece.receiver}];
          }
        } else {
          recv_side[{piece.channel, piece.sender}] = -1;
        }
      }
      if (choices_.pair) {
        std::vector<std::pair<int, std::tuple<int, int, int>>> candidates;
        for (const auto& [key, count] : weight) candidates.emplace_back(-count, key);
        std::sort(candidates.begin(), candidates.end());
        for (const auto& [negative, key] : candidates) {
          const auto [chan, from, to] = key;
          int& receiving = recv_side[{chan, from}];
          int& sending = send_side[{chan, to}];
          if (receiving >= 0 || sending >= 0) continue;
          if (peak_.at({from, rank, chan}) > context_.fifo_calls || peak_.at({rank, to, chan}) > context_.fifo_calls)
            continue;
          receiving = sending = static_cast<int>(plan.tbs.size());
          plan.tbs.push_back({to, from, chan, {}, 0});
        }
      }
      if (choices_.pair_peers) {
        for (auto& [key, sending] : send_side) {
          const auto receiving = recv_side.find(key);
          if (sending >= 0 || receiving == recv_side.end() || receiving->second >= 0) continue;
          const auto [chan, peer] = key;
          if (peak_.at({peer, rank, chan}) > context_.fifo_calls || peak_.at({rank, peer, chan}) > context_.fifo_calls)
            continue;
          sending = receiving->second = static_cast<int>(plan.tbs.size());
          plan.tbs.push_back({peer, peer, chan, {}, 0});
        }
      }
      for (auto& [key, tb] : send_side) {
        if (tb >= 0) continue;
        tb = static_cast<int>(plan.tbs.size());
        plan.tbs.push_back({key.second, -1, key.first, {}, 0});
      }
      for (auto& [key, tb] : recv_side) {
        if (tb >= 0) continue;
        tb = static_cast<int>(plan.tbs.size());
        plan.tbs.push_back({-1, key.second, key.first, {}, 0});
      }
      std::vector<int> order(plan.ops.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
      std::sort(order.begin(), order.end(), [&](int a, int b) {
        return plan.ops[static_cast<std::size_t>(a)].before(plan.ops[static_cast<std::size_t>(b)]);
      });
      for (int index : order) {
        Op& op = plan.ops[static_cast<std::size_t>(index)];
        if (op.kind == OpKind::kCopy && op.staged_piece < 0) continue;
        // A staging copy runs in the threadblock of the step it gathers for or spreads after.
        const bool sending = op.kind == OpKind::kCopy ? op.staged_send : op.kind == OpKind::kSend;
        const Piece& piece =
            plan_.pieces[static_cast<std::size_t>(op.kind == OpKind::kCopy ? op.staged_piece : op.piece)];
        op.tb = sending ? send_side.at({piece.channel, piece.receiver}) : recv_side.at({piece.channel, piece.sender});
        plan.tbs[static_cast<std::size_t>(op.tb)].ops.push_back(index);
      }
      number_threadblocks(plan, order);
    }
  }

  /// Ids by channel, then by first operation; the out-of-place copies go first into tb 0.
  void number_threadblocks(RankPlan& plan, const std::vector<int>& order) {
    std::vector<int> ids(plan.tbs.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
    const auto first_op = [&](int tb) {
      return plan.ops[static_cast<std::size_t>(plan.tbs[static_cast<std::size_t>(tb)].ops.front())];
    };
    std::sort(ids.begin(), ids.end(), [&](int a, int b) {
      const PlannedTb& x = plan.tbs[static_cast<std::size_t>(a)];
      const PlannedTb& y = plan.tbs[static_cast<std::size_t>(b)];
      if (x.chan != y.chan) return x.chan < y.chan;
      return first_op(a).before(first_op(b));
    });
    std::vector<PlannedTb> sorted;
    std::vector<int> new_id(plan.tbs.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      new_id[static_cast<std::size_t>(ids[i])] = static_cast<int>(i);
      sorted.push_back(std::move(plan.tbs[static_cast<std::size_t>(ids[i])]));
    }
    plan.tbs = std::move(sorted);
    for (Op& op : plan.ops) {
      if (op.tb >= 0) op.tb = new_id[static_cast<std::size_t>(op.tb)];
    }
    std::vector<int> copies;
    for (int index : order) {
      const Op& op = plan.ops[static_cast<std::size_t>(index)];
      if (op.kind == OpKind::kCopy && op.staged_piece < 0) copies.push_back(index);
    }
    if (!copies.empty()) {
      std::vector<int>& first = plan.tbs.front().ops;
      first.insert(first.begin(), copies.begin(), copies.end());
      for (int index : copies) plan.ops[static_cast<std::size_t>(index)].tb = 0;
    }
  }

  /// In a paired tb, a receive directly followed by the send that forwards it becomes one step,
  /// when the outgoing FIFO can take the send that early.
  void fuse() {
    // Pieces that send on each received piece (LayoutChoices::fuse_shared).
    std::vector<int> forwarders(plan_.pieces.size(), 0);
    for (const Piece& piece : plan_.pieces) {
      if (piece.forwards >= 0) ++forwarders[static_cast<std::size_t>(piece.forwards)];
    }
    for (int rank = 0; rank < context_.ranks; ++rank) {
      RankPlan& plan = plan_.ranks[static_cast<std::size_t>(rank)];
      for (PlannedTb& tb : plan.tbs) {
        if (tb.send < 0 || tb.recv < 0) continue;
        std::vector<int> kept;
        for (std::size_t i = 0; i < tb.ops.size(); ++i) {
          Op& op = plan.ops[static_cast<std::size_t>(tb.ops[i])];
          kept.push_back(tb.ops[i]);
          if (op.kind != OpKind::kRecv || i + 1 == tb.ops.size()) continue;
          Op& next = plan.ops[static_cast<std::size_t>(tb.ops[i + 1])];
          if (next.kind != OpKind::kSend) continue;
          const Piece& sent = plan_.pieces[static_cast<std::size_t>(next.piece)];
          if (sent.forwards != op.piece) continue;
          if (!choices_.fuse_shared && forwarders[static_cast<std::size_t>(op.piece)] > 1) continue;
          const Piece& received = plan_.pieces[static_cast<std::size_t>(op.piece)];
          if (open_at(connection(sent), received.recv_event) + sent.cnt > context_.fifo_calls) continue;
          op.kind = OpKind::kFused;
          op.forward = next.piece;
          next.tb = -1;
          ++i;
        }
        tb.ops = std::move(kept);
      }
      for (std::size_t t = 0; t < plan.tbs.size(); ++t) {
        for (std::size_t i = 0; i < plan.tbs[t].ops.size(); ++i)
          plan.ops[static_cast<std::size_t>(plan.tbs[t].ops[i])].index = static_cast<int>(i);
      }
    }
  }

  const WriterContext& context_;
  const LayoutChoices& choices_;
  Plan& plan_;
  std::map<std::tuple<int, int, int>, int> peak_;
  std::map<std::tuple<int, int, int>, std::vector<int>> on_connection_;
};

}  // namespace

void form_threadblocks(const WriterContext& context, const LayoutChoices& choices, Plan& plan) {
  ThreadblockBuilder(context, choices, plan).run();
}

}  // namespace tenet::msccl_detail
