// SPDX-License-Identifier: MIT
// From a Schedule to connections, threadblocks and orderings.
//
// Where chunks live (rank r, chunk c, C chunks per member):
//   all-gather      o[c]; out of place the own chunks are first copied from i[c - r*C]
//   all-reduce      i[c] in place; out of place i[c] until c is first received, o[c] after
//   reduce-scatter  (out of place only) i[c] until received; then o[c - r*C] for the own
//                   chunks, scratch for the others
// The schedule is replayed in the verifier's order (reads when a transfer starts, writes when it
// ends, ends first on ties) to learn where each transfer reads and writes. A copy is put straight
// into the receiver's working place when that place is written once and touched by nobody before
// (all-gather); every other transfer lands in a scratch area of its own on the receiver, which the
// receiver then copies or adds into place. So a rank's working buffers are written only by its own
// threadblocks (or by that single put), and all conflicts are between threadblocks of one rank.
//
// Threadblocks. The transfers from one rank to another form lanes (a transfer joins the first lane
// whose last transfer ended before it starts), so transfers that overlap in time stay concurrent;
// lanes are cut into segments when a threadblock would exceed the op limit. Each segment is one
// connection: a channel on both ends. A threadblock holds at most one sending and one receiving
// connection: a receiving connection is paired with the sending connection that forwards most of
// what it receives (a ring step then needs no semaphore).
//
// Why it cannot deadlock: every threadblock runs its groups in replay order, and everything a
// group waits for (a signal, a semaphore) is an event earlier in the replay; by induction over the
// replay every group runs.

#include <algorithm>
#include <limits>
#include <map>
#include <queue>

#include "tenet/common/error.hpp"
#include "tenet/schedule/effective_times.hpp"
#include "writer.hpp"

namespace tenet::mscclpp_detail {
namespace {

constexpr TransferId kNone = ~TransferId{0};

bool follows(const Loc& previous, const Loc& next) {
  if (previous.index < 0 && next.index < 0) return true;
  return previous.index >= 0 && next.type == previous.type && next.index == previous.index + 1;
}

class Builder {
 public:
  Builder(const Schedule& schedule, const std::vector<int>& rank_of, const std::vector<std::uint32_t>& node_of,
          const MscclppOptions& options, int segment_cap, bool pair_all)
      : schedule_(schedule), rank_of_(rank_of), node_of_(node_of), segment_cap_(segment_cap), pair_all_(pair_all) {
    layout_.kind = schedule.collective();
    layout_.in_place = options.in_place;
    layout_.ll = options.protocol == MscclppProtocol::kLL;
    layout_.ranks = static_cast<int>(schedule.members().size());
    layout_.per_rank = static_cast<int>(schedule.chunks_per_member());
    const int all = layout_.ranks * layout_.per_rank;
    layout_.input_chunks = layout_.kind == CollectiveKind::kAllGather ? layout_.per_rank : all;
    layout_.output_chunks = layout_.kind == CollectiveKind::kReduceScatter ? layout_.per_rank : all;
  }

  Layout run() {
    replay();
    place();
    make_connections();
    make_blocks();
    order();
    return std::move(layout_);
  }

 private:
  // ---- where chunks live ------------------------------------------------------------------------

  int chunks() const { return layout_.ranks * layout_.per_rank; }
  bool own(int rank, int chunk) const { return chunk / layout_.per_rank == rank; }

  Loc initial(int rank, int chunk) const {
    if (layout_.kind == CollectiveKind::kAllGather) return own(rank, chunk) ? Loc{BufferType::kOutput, chunk} : Loc{};
    return {BufferType::kInput, chunk};
  }

  Loc work(int rank, int chunk) const {
    const int c = layout_.per_rank;
    switch (layout_.kind) {
      case CollectiveKind::kAllGather: return {BufferType::kOutput, chunk};
      case CollectiveKind::kAllReduce: return {layout_.in_place ? BufferType::kInput : BufferType::kOutput, chunk};
      case CollectiveKind::kReduceScatter:
        if (own(rank, chunk)) return {BufferType::kOutput, chunk - rank * c};
        return {BufferType::kScratch, chunk < rank * c ? chunk : chunk - c};
    }
    return {};
  }

  std::size_t slot(int rank, int chunk) const {
    return static_cast<std::size_t>(rank) * static_cast<std::size_t>(chunks()) + static_cast<std::size_t>(chunk);
  }

  Loc home(int rank, int chunk) const { return written_[slot(rank, chunk)] ? work(rank, chunk) : initial(rank, chunk); }

  /// A rank's places as one number, for the conflict analysis.
  int place_id(const Loc& loc) const {
    const int base = loc.type == BufferType::kInput    ? 0
                     : loc.type == BufferType::kOutput ? layout_.input_chunks
                                                       : layout_.input_chunks + layout_.output_chunks;
    return base + loc.index;
  }

  struct Touch {
    int rank;
    int place;
    std::int64_t event;
    int group;
    bool write;
  };

  int rank_of(NodeId npu, TransferId t) const {
    const int rank = npu < rank_of_.size() ? rank_of_[npu] : -1;
    if (rank < 0) {
      throw InputError("", "",
                       "transfer " + std::to_string(t) + " goes through NPU " + std::to_string(npu) +
                           ", which is not a member of the collective; MSCCL++ plans have ranks for members only");
    }
    return rank;
  }

  void replay() {
    const std::size_t count = schedule_.size();
    EffectiveTimes times = effective_times(schedule_);
    const std::vector<double>& start = times.start;
    const std::vector<double>& end = times.end;
    start_order_ = std::move(times.by_start);

    written_.assign(static_cast<std::size_t>(layout_.ranks) * static_cast<std::size_t>(chunks()), 0);
    last_writer_.assign(written_.size(), kNone);
    send_event_.assign(count, 0);
    recv_event_.assign(count, 0);
    read_.assign(count, {});
    operand_.assign(count, {});
    write_.assign(count, {});
    read_writer_.assign(count, {});
    layout_.send_group.assign(count, -1);
    layout_.recv_group.assign(count, -1);
    for (int r = 0; r < layout_.ranks; ++r) {
      layout_.groups.push_back({GroupKind::kInit, r, 0, -1, -1, {}});
    }

    using Pending = std::pair<double, TransferId>;
    std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
    std::int64_t event = 0;
    const auto apply_end = [&](TransferId t) {
      const Transfer transfer = schedule_.transfer(t);
      const int rank = rank_of(transfer.dst, t);
      recv_event_[t] = event++;
      layout_.recv_group[t] = static_cast<int>(layout_.groups.size());
      layout_.groups.push_back({GroupKind::kRecv, rank, t, recv_event_[t], -1, {}});
      for (ChunkId chunk : schedule_.chunks_of(transfer)) {
        const int c = static_cast<int>(chunk);
        operand_[t].push_back(home(rank, c));
        write_[t].push_back(work(rank, c));
        written_[slot(rank, c)] = 1;
        last_writer_[slot(rank, c)] = t;
      }
    };
    for (TransferId t : start_order_) {
      while (!pending.empty() && pending.top().first <= start[t]) {
        const TransferId done = pending.top().second;
        pending.pop();
        apply_end(done);
      }
      const Transfer transfer = schedule_.transfer(t);
      const int rank = rank_of(transfer.src, t);
      rank_of(transfer.dst, t);
      if (transfer.src == transfer.dst)
        throw InputError("", "", "transfer " + std::to_string(t) + " sends to its own NPU");
      send_event_[t] = event++;
      layout_.send_group[t] = static_cast<int>(layout_.groups.size());
      layout_.groups.push_back({GroupKind::kSend, rank, t, send_event_[t], -1, {}});
      for (ChunkId chunk : schedule_.chunks_of(transfer)) {
        const Loc from = home(rank, static_cast<int>(chunk));
        if (from.index < 0) {
          throw InputError("", "",
                           "transfer " + std::to_string(t) + " sends chunk " + std::to_string(chunk) +
                               " from a rank that does not hold it; write plans of verified schedules only");
        }
        read_[t].push_back(from);
        read_writer_[t].push_back(last_writer_[slot(rank, static_cast<int>(chunk))]);
      }
      pending.push({end[t], t});
    }
    while (!pending.empty()) {
      const TransferId done = pending.top().second;
      pending.pop();
      apply_end(done);
    }
  }

  // ---- landing places, runs, copies and the accesses of every group ------------------------------

  void touch(int group, const Loc& loc, bool write) {
    const Group& g = layout_.groups[static_cast<std::size_t>(group)];
    touches_.push_back({g.rank, place_id(loc), g.event, group, write});
  }

  void place() {
    const std::size_t count = schedule_.size();
    const int ranks = layout_.ranks;
    // Out-of-place copies that come first: all-gather's own chunks into o, and result places that
    // nothing is ever received into (their value is still only in i).
    layout_.init_copies.assign(static_cast<std::size_t>(ranks), {});
    for (int r = 0; r < ranks; ++r) {
      const int group = r;  // the init groups come first
      if (layout_.in_place) break;
      for (int chunk = 0; chunk < chunks(); ++chunk) {
        Loc from;
        Loc to;
        if (layout_.kind == CollectiveKind::kAllGather) {
          if (!own(r, chunk)) continue;
          from = {BufferType::kInput, chunk - r * layout_.per_rank};
          to = {BufferType::kOutput, chunk};
        } else {
          const bool result = layout_.kind == CollectiveKind::kAllReduce || own(r, chunk);
          if (!result || written_[slot(r, chunk)]) continue;
          from = {BufferType::kInput, chunk};
          to = work(r, chunk);
        }
        layout_.init_copies[static_cast<std::size_t>(r)].push_back({from, to});
        touch(group, from, false);
        touch(group, to, true);
      }
    }
    // Writes per place of each rank, to find the places a put may fill directly, and each
    // place's first touch: flat, rank x place (a map of pairs took most of the layout's time).
    // A collective's ranks each touch nearly every chunk, so the map held as many entries.
    int most_place = 0;
    for (std::size_t t = 0; t < count; ++t) {
      for (const std::vector<Loc>* locs : {&read_[t], &write_[t], &operand_[t]}) {
        for (const Loc& loc : *locs) most_place = std::max(most_place, place_id(loc));
      }
    }
    for (int r = 0; r < ranks; ++r) {
      for (const auto& [from, to] : layout_.init_copies[static_cast<std::size_t>(r)])
        most_place = std::max({most_place, place_id(from), place_id(to)});
    }
    const auto places = static_cast<std::size_t>(most_place) + 1;
    const auto at = [&](int rank, const Loc& loc) {
      return static_cast<std::size_t>(rank) * places + static_cast<std::size_t>(place_id(loc));
    };
    std::vector<int> writes(static_cast<std::size_t>(ranks) * places, 0);
    for (std::size_t t = 0; t < count; ++t) {
      const int dst = rank_of_[schedule_.dst(static_cast<TransferId>(t))];
      for (const Loc& loc : write_[t]) ++writes[at(dst, loc)];
    }
    for (int r = 0; r < ranks; ++r) {
      for (const auto& [from, to] : layout_.init_copies[static_cast<std::size_t>(r)]) ++writes[at(r, to)];
    }
    std::vector<std::int64_t> first_touch(writes.size(), std::numeric_limits<std::int64_t>::max());
    const auto note_first = [&](int rank, const Loc& loc, std::int64_t event) {
      std::int64_t& first = first_touch[at(rank, loc)];
      first = std::min(first, event);
    };
    for (int r = 0; r < ranks; ++r) {
      for (const auto& [from, to] : layout_.init_copies[static_cast<std::size_t>(r)]) note_first(r, to, -1);
    }
    for (std::size_t t = 0; t < count; ++t) {
      const Transfer transfer = schedule_.transfer(static_cast<TransferId>(t));
      for (const Loc& loc : read_[t]) note_first(rank_of_[transfer.src], loc, send_event_[t]);
      for (std::size_t i = 0; i < write_[t].size(); ++i) {
        note_first(rank_of_[transfer.dst], write_[t][i], recv_event_[t]);
        if (transfer.kind == TransferKind::kReduce) note_first(rank_of_[transfer.dst], operand_[t][i], recv_event_[t]);
      }
    }

    layout_.scratch_chunks.assign(static_cast<std::size_t>(ranks), 0);
    // Plain scratch (reduce-scatter's partial sums) first; packet chunks (LL) after it, where the
    // packet image of chunk k, bytes [2kC, 2(k+1)C), does not overlap it.
    const int plain = layout_.kind == CollectiveKind::kReduceScatter ? chunks() - layout_.per_rank : 0;
    std::vector<int> next_landing(static_cast<std::size_t>(ranks), layout_.ll ? (plain + 1) / 2 : plain);
    layout_.runs.assign(count, {});
    layout_.staging.assign(count, -1);
    for (TransferId t : start_order_) {
      const Transfer transfer = schedule_.transfer(t);
      const int src = rank_of_[transfer.src];
      const int dst = rank_of_[transfer.dst];
      const bool reduce = transfer.kind == TransferKind::kReduce;
      bool direct = !reduce && !layout_.ll;
      for (const Loc& loc : write_[t]) {
        direct = direct && writes[at(dst, loc)] == 1 && first_touch[at(dst, loc)] == recv_event_[t];
      }
      const int landing_base = direct ? -1 : next_landing[static_cast<std::size_t>(dst)];
      if (!direct) next_landing[static_cast<std::size_t>(dst)] += static_cast<int>(write_[t].size());
      if (layout_.ll && node_of_[static_cast<std::size_t>(src)] != node_of_[static_cast<std::size_t>(dst)]) {
        layout_.staging[t] = next_landing[static_cast<std::size_t>(src)];
        next_landing[static_cast<std::size_t>(src)] += static_cast<int>(read_[t].size());
      }
      std::vector<Run>& runs = layout_.runs[t];
      for (std::size_t i = 0; i < read_[t].size(); ++i) {
        const Loc landing = direct ? Loc{} : Loc{BufferType::kScratch, landing_base + static_cast<int>(i)};
        const Loc operand = reduce ? operand_[t][i] : Loc{};
        if (!runs.empty()) {
          Run& last = runs.back();
          const Run probe{read_[t][i], landing, operand, write_[t][i], 0};
          const auto shifted = [&](const Loc& loc) {
            return loc.index < 0 ? loc : Loc{loc.type, loc.index + last.count - 1};
          };
          if (follows(shifted(last.read), probe.read) && follows(shifted(last.landing), probe.landing) &&
              follows(shifted(last.operand), probe.operand) && follows(shifted(last.write), probe.write)) {
            ++last.count;
            continue;
          }
        }
        runs.push_back({read_[t][i], landing, operand, write_[t][i], 1});
      }
      // Accesses the conflict analysis orders (landing areas are private to one transfer).
      for (const Loc& loc : read_[t]) touch(layout_.send_group[t], loc, false);
      for (std::size_t i = 0; i < write_[t].size(); ++i) {
        if (reduce) touch(layout_.recv_group[t], operand_[t][i], false);
        touch(layout_.recv_group[t], write_[t][i], true);
      }
    }
    for (int r = 0; r < ranks; ++r) {
      int used = next_landing[static_cast<std::size_t>(r)];
      layout_.scratch_chunks[static_cast<std::size_t>(r)] = std::max(used, plain);
    }
    // Every rank declares the same scratch: the executor sizes it per rank, but equal is simpler to read.
    const int most = *std::max_element(layout_.scratch_chunks.begin(), layout_.scratch_chunks.end());
    std::fill(layout_.scratch_chunks.begin(), layout_.scratch_chunks.end(), most);
  }

  // ---- connections and threadblocks ---------------------------------------------------------------

  void make_connections() {
    std::map<std::pair<int, int>, std::vector<TransferId>> by_pair;
    for (TransferId t : start_order_) {
      const Transfer transfer = schedule_.transfer(t);
      by_pair[{rank_of_[transfer.src], rank_of_[transfer.dst]}].push_back(t);
    }
    layout_.connection_of.assign(schedule_.size(), -1);
    for (const auto& [pair, transfers] : by_pair) {
      std::vector<std::int64_t> lane_end;
      std::vector<std::vector<TransferId>> lanes;
      for (TransferId t : transfers) {
        std::size_t lane = 0;
        while (lane < lane_end.size() && lane_end[lane] > send_event_[t]) ++lane;
        if (lane == lane_end.size()) {
          lane_end.push_back(0);
          lanes.emplace_back();
        }
        lane_end[lane] = recv_event_[t];
        lanes[lane].push_back(t);
      }
      for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        const std::size_t cap = segment_cap_ > 0 ? static_cast<std::size_t>(segment_cap_) : lanes[lane].size();
        for (std::size_t first = 0; first < lanes[lane].size(); first += cap) {
          Connection connection;
          connection.src = pair.first;
          connection.dst = pair.second;
          connection.lane = static_cast<int>(lane);
          connection.segment = static_cast<int>(first / cap);
          connection.port =
              node_of_[static_cast<std::size_t>(pair.first)] != node_of_[static_cast<std::size_t>(pair.second)];
          const std::size_t last = std::min(lanes[lane].size(), first + cap);
          connection.transfers.assign(lanes[lane].begin() + static_cast<std::ptrdiff_t>(first),
                                      lanes[lane].begin() + static_cast<std::ptrdiff_t>(last));
          for (TransferId t : connection.transfers)
            layout_.connection_of[t] = static_cast<int>(layout_.connections.size());
          layout_.connections.push_back(std::move(connection));
        }
      }
    }
  }

  void make_blocks() {
    const int ranks = layout_.ranks;
    layout_.blocks.assign(static_cast<std::size_t>(ranks), {});
    std::vector<std::vector<int>> sending(static_cast<std::size_t>(ranks));
    std::vector<std::vector<int>> receiving(static_cast<std::size_t>(ranks));
    for (std::size_t c = 0; c < layout_.connections.size(); ++c) {
      sending[static_cast<std::size_t>(layout_.connections[c].src)].push_back(static_cast<int>(c));
      receiving[static_cast<std::size_t>(layout_.connections[c].dst)].push_back(static_cast<int>(c));
    }
    for (int r = 0; r < ranks; ++r) {
      // How much of what each receiving connection brings a sending connection forwards.
      std::map<std::pair<int, int>, int> forwards;
      for (int send : sending[static_cast<std::size_t>(r)]) {
        for (TransferId t : layout_.connections[static_cast<std::size_t>(send)].transfers) {
          for (TransferId source : read_writer_[t]) {
            if (source == kNone) continue;
            ++forwards[{send, layout_.connection_of[source]}];
          }
        }
      }
      std::vector<std::pair<int, std::pair<int, int>>> candidates;
      for (const auto& [pair, n] : forwards) candidates.push_back({-n, pair});
      std::sort(candidates.begin(), candidates.end());
      std::map<int, int> partner_of_send;
      std::map<int, int> partner_of_recv;
      for (const auto& [negative, pair] : candidates) {
        if (partner_of_send.count(pair.first) || partner_of_recv.count(pair.second)) continue;
        partner_of_send[pair.first] = pair.second;
        partner_of_recv[pair.second] = pair.first;
      }
      if (pair_all_) {
        // Too many threadblocks otherwise: pair what is left in order (a send may then wait behind
        // an unrelated receive of its block, but only one earlier in the replay).
        std::size_t next = 0;
        const std::vector<int>& recvs = receiving[static_cast<std::size_t>(r)];
        for (int send : sending[static_cast<std::size_t>(r)]) {
          if (partner_of_send.count(send)) continue;
          while (next < recvs.size() && partner_of_recv.count(recvs[next])) ++next;
          if (next == recvs.size()) break;
          partner_of_send[send] = recvs[next];
          partner_of_recv[recvs[next]] = send;
        }
      }
      std::vector<LayoutBlock> blocks;
      for (int send : sending[static_cast<std::size_t>(r)]) {
        auto it = partner_of_send.find(send);
        blocks.push_back({send, it == partner_of_send.end() ? -1 : it->second, {}});
      }
      for (int recv : receiving[static_cast<std::size_t>(r)]) {
        if (!partner_of_recv.count(recv)) blocks.push_back({-1, recv, {}});
      }
      if (blocks.empty() && !layout_.init_copies[static_cast<std::size_t>(r)].empty()) blocks.push_back({-1, -1, {}});
      // Blocks in the order of their first event, so block 0 (which does the first copies) starts first.
      const auto first_event = [&](const LayoutBlock& block) {
        std::int64_t first = std::numeric_limits<std::int64_t>::max();
        if (block.send >= 0)
          first =
              std::min(first, send_event_[layout_.connections[static_cast<std::size_t>(block.send)].transfers.front()]);
        if (block.recv >= 0)
          first =
              std::min(first, recv_event_[layout_.connections[static_cast<std::size_t>(block.recv)].transfers.front()]);
        return first;
      };
      std::stable_sort(blocks.begin(), blocks.end(),
                       [&](const LayoutBlock& a, const LayoutBlock& b) { return first_event(a) < first_event(b); });
      layout_.blocks[static_cast<std::size_t>(r)] = std::move(blocks);
    }
    // Groups to blocks.
    for (int r = 0; r < ranks; ++r) {
      auto& blocks = layout_.blocks[static_cast<std::size_t>(r)];
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        for (int side = 0; side < 2; ++side) {
          const int c = side == 0 ? blocks[b].send : blocks[b].recv;
          if (c < 0) continue;
          for (TransferId t : layout_.connections[static_cast<std::size_t>(c)].transfers) {
            const int group = side == 0 ? layout_.send_group[t] : layout_.recv_group[t];
            layout_.groups[static_cast<std::size_t>(group)].block = static_cast<int>(b);
          }
        }
      }
      if (!blocks.empty()) layout_.groups[static_cast<std::size_t>(r)].block = 0;
    }
    for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
      const Group& group = layout_.groups[g];
      if (group.block < 0) continue;
      layout_.blocks[static_cast<std::size_t>(group.rank)][static_cast<std::size_t>(group.block)].groups.push_back(
          static_cast<int>(g));
    }
    for (auto& blocks : layout_.blocks) {
      for (LayoutBlock& block : blocks) {
        std::stable_sort(block.groups.begin(), block.groups.end(), [&](int a, int b) {
          return layout_.groups[static_cast<std::size_t>(a)].event < layout_.groups[static_cast<std::size_t>(b)].event;
        });
      }
    }
  }

  // ---- orderings between threadblocks -------------------------------------------------------------

  void edge(int from, int to) {
    Group& target = layout_.groups[static_cast<std::size_t>(to)];
    const Group& source = layout_.groups[static_cast<std::size_t>(from)];
    if (source.block == target.block || source.block < 0) return;
    target.after.push_back(from);
  }

  void order() {
    // Conflicting accesses of a place, in replay order.
    std::stable_sort(touches_.begin(), touches_.end(), [](const Touch& a, const Touch& b) {
      if (a.rank != b.rank) return a.rank < b.rank;
      if (a.place != b.place) return a.place < b.place;
      return a.event < b.event;
    });
    for (std::size_t i = 0; i < touches_.size();) {
      std::size_t j = i;
      int last_write = -1;
      std::vector<int> reads;
      for (; j < touches_.size() && touches_[j].rank == touches_[i].rank && touches_[j].place == touches_[i].place;
           ++j) {
        const Touch& touch = touches_[j];
        if (last_write >= 0 && last_write != touch.group) edge(last_write, touch.group);
        if (touch.write) {
          for (int read : reads) {
            if (read != touch.group) edge(read, touch.group);
          }
          reads.clear();
          last_write = touch.group;
        } else {
          reads.push_back(touch.group);
        }
      }
      i = j;
    }
    // The schedule's own dependencies, where the sender can see them.
    for (std::size_t t = 0; t < schedule_.size(); ++t) {
      const NodeId src = schedule_.src(static_cast<TransferId>(t));
      for (TransferId dep : schedule_.deps_of(static_cast<TransferId>(t))) {
        if (schedule_.dst(dep) == src)
          edge(layout_.recv_group[dep], layout_.send_group[t]);
        else if (schedule_.src(dep) == src)
          edge(layout_.send_group[dep], layout_.send_group[t]);
      }
    }
    // Segments of one lane send one after the other, as the lane did.
    for (std::size_t c = 1; c < layout_.connections.size(); ++c) {
      const Connection& previous = layout_.connections[c - 1];
      const Connection& current = layout_.connections[c];
      if (current.segment > 0 && previous.src == current.src && previous.dst == current.dst &&
          previous.lane == current.lane) {
        edge(layout_.send_group[previous.transfers.back()], layout_.send_group[current.transfers.front()]);
      }
    }
    for (Group& group : layout_.groups) {
      std::sort(group.after.begin(), group.after.end());
      group.after.erase(std::unique(group.after.begin(), group.after.end()), group.after.end());
    }
  }

  const Schedule& schedule_;
  const std::vector<int>& rank_of_;
  const std::vector<std::uint32_t>& node_of_;
  int segment_cap_;
  bool pair_all_;
  Layout layout_;
  std::vector<TransferId> start_order_;
  std::vector<char> written_;
  std::vector<TransferId> last_writer_;
  std::vector<std::int64_t> send_event_;
  std::vector<std::int64_t> recv_event_;
  std::vector<std::vector<Loc>> read_;
  std::vector<std::vector<Loc>> operand_;
  std::vector<std::vector<Loc>> write_;
  std::vector<std::vector<TransferId>> read_writer_;
  std::vector<Touch> touches_;
};

}  // namespace

Layout lay_out(const Schedule& schedule, const std::vector<int>& rank_of, const std::vector<std::uint32_t>& node_of,
               const MscclppOptions& options, int segment_cap, bool pair_all) {
  return Builder(schedule, rank_of, node_of, options, segment_cap, pair_all).run();
}

}  // namespace tenet::mscclpp_detail
