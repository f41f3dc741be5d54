// SPDX-License-Identifier: MIT
// msccl_to_schedule: an MSCCL program as a tenet Schedule, timed as the runtime runs it (the
// mapping is in msccl.hpp). The model, from SPEC sections 6 and 7, never more optimistic than the
// runtime where the SPEC says how it behaves:
//  - Slices. The runtime runs the whole step list once per slice of every chunk (SPEC 6.2): with
//    chunks larger than a slice (2 MiB for Simple) the program runs `iterations` times, each time
//    on 1/iterations of every chunk. Iteration t of chunk c is sub-chunk c * iterations + t of the
//    Schedule, so a schedule of iterations x chunks per rank moves exactly the file's bytes.
//  - Calls. A step of cnt chunks is ceil(cnt / mscclMaxAllowedCount) primitive calls, one after
//    the other; each call of a sending step is one transfer.
//  - Threadblocks run their steps in order. A sending call holds its threadblock until its data
//    has crossed (the threadblock's threads do the copy); a receiving call is done when its data
//    has arrived and the threadblock got to it. A forwarding call (rcs, rrs, rrcs) sends once it
//    has received: store and forward per call, as a plan's chunks are.
//  - FIFOs. A connection buffers `fifo_calls` calls (2 with Simple, 8 with LL and LL128, SPEC
//    7.3): call k of a connection starts only after the receiver finished call k - fifo_calls.
//  - Dependencies wait for the step they name, in the same iteration (flags carry the iteration).
// Local copies and reductions take no time (as reductions do in the papers' model, --gamma aside).
// Not modeled: the wire overhead of LL (half of each line is flags) and LL128, and the finer
// pipelining inside one call (a Simple call streams through 4 FIFO steps); both make the
// runtime faster or slower by a constant factor per call, not by the layout's choices.
//
// The program is run once, symbolically, as a worklist of threadblocks that advance call by call
// while the runtime could. That tells, for every buffer slot, which chunk it holds and which
// transfers had to finish for it to hold it, so scratch buffers, local copies and in-place
// aliasing need no rules of their own. "Which transfers had to finish" is a frontier, kept small by
// dropping members that cannot finish after another member: a direct dependency of it, or an
// earlier call on the same connection (both follow the same route and a sending threadblock issues
// its calls one after the other).

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <map>
#include <tuple>

#include "internal.hpp"
#include "tenet/common/error.hpp"

namespace tenet {

MscclRuntimeModel msccl_runtime_model(MscclProtocol protocol, int nchunksperloop, std::uint64_t size_bytes) {
  MscclRuntimeModel model;
  model.fifo_calls = static_cast<int>(msccl_fifo_calls(protocol));
  // NCCL's default buffers: Simple 4 MiB per connection in 8 FIFO steps, a call is 4 of them
  // (SPEC 6.2); LL 512 KiB of 16-byte lines carrying 8 data bytes, a call is 1 step; LL128 about
  // 4.7 MB in 8 steps, 120 of every 128 bytes data.
  switch (protocol) {
    case MscclProtocol::kSimple: model.slice_bytes = std::uint64_t{2} << 20; break;
    case MscclProtocol::kLL: model.slice_bytes = std::uint64_t{32} << 10; break;
    case MscclProtocol::kLL128: model.slice_bytes = 576000; break;
  }
  const std::uint64_t chunks = static_cast<std::uint64_t>(std::max(1, nchunksperloop));
  const std::uint64_t chunk_bytes = std::max<std::uint64_t>(1, (size_bytes + chunks - 1) / chunks);
  model.iterations = (chunk_bytes + model.slice_bytes - 1) / model.slice_bytes;
  model.max_allowed_count = static_cast<int>(std::clamp<std::uint64_t>(
      model.slice_bytes / chunk_bytes, 1, static_cast<std::uint64_t>(msccl_detail::kMaxCount)));
  return model;
}

bool msccl_runtime_slices(const Schedule& schedule, MscclProtocol protocol) {
  const std::uint64_t chunks = std::uint64_t{schedule.chunks_per_member()} * schedule.members().size();
  if (chunks == 0 || chunks > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return false;
  return msccl_runtime_model(protocol, static_cast<int>(chunks), schedule.size_bytes()).iterations > 1;
}

namespace {

using namespace msccl_detail;

constexpr ChunkId kUnwritten = ~ChunkId{0};
/// Transfers the conversion makes at most (iterations x calls): a file that needs more at this
/// size is refused rather than simulated for minutes.
constexpr std::uint64_t kMaxModeledCalls = std::uint64_t{1} << 24;

using Frontier = std::vector<TransferId>;

struct Message {
  std::vector<ChunkId> chunks;  ///< sub-chunks (chunk x iterations + iteration)
  TransferId transfer = 0;
};

struct Connection {
  std::uint32_t id = 0;
  std::size_t sender = 0;    ///< the runner that sends on it
  std::size_t receiver = 0;  ///< the runner that receives on it
  std::uint64_t sent = 0;    ///< calls
  std::uint64_t received = 0;
  std::deque<Message> fifo;  ///< sent, not yet received
  /// Completion of the last fifo_calls received calls, by call index modulo fifo_calls.
  std::vector<Frontier> consumed;
  /// Whether each receiving call of one iteration reduces, in order (the receiver's steps decide
  /// what a message does, SPEC 7.2).
  std::vector<char> reduces;
};

/// What pruning needs to know of a transfer already added.
struct TransferFacts {
  Frontier deps;
  std::uint32_t connection = 0;
  std::uint64_t sequence = 0;  ///< among the connection's calls
};

struct SlotState {
  ChunkId chunk = kUnwritten;
  Frontier written_after;
};

using RankSlots = std::array<std::vector<SlotState>, 3>;

struct Runner {
  int rank = 0;
  const LoadedThreadblock* tb = nullptr;
  std::uint64_t iteration = 0;
  std::size_t next = 0;
  int call = 0;            ///< within the step
  std::int64_t flag = -1;  ///< the runtime's progress flag: iteration x counters + step counter
  Frontier after;          ///< what the calls run so far waited for
  std::vector<std::pair<std::int64_t, Frontier>> publications;  ///< (flag, after) of each hasdep step, in order
  std::vector<std::size_t> waiters;                             ///< runners with a dependency on this one
  /// Its threadblock's connections (map nodes stay put), null where it has no peer.
  Connection* in = nullptr;
  Connection* out = nullptr;
};

bool uses_local_src(MscclStepType type) {
  return type == MscclStepType::kSend || type == MscclStepType::kRecvReduceSend ||
         type == MscclStepType::kRecvReduceCopy || type == MscclStepType::kRecvReduceCopySend ||
         type == MscclStepType::kCopy;
}

bool stores_received(MscclStepType type) {
  return type == MscclStepType::kRecv || type == MscclStepType::kRecvCopySend ||
         type == MscclStepType::kRecvReduceCopy || type == MscclStepType::kRecvReduceCopySend;
}

bool reduces_received(MscclStepType type) {
  return type == MscclStepType::kRecvReduceSend || type == MscclStepType::kRecvReduceCopy ||
         type == MscclStepType::kRecvReduceCopySend;
}

class Conversion {
 public:
  Conversion(const LoadedProgram& program, const std::vector<NodeId>& npus, std::uint64_t size_bytes,
             const MscclRuntimeModel& model, const std::string& name, const std::string& source)
      : program_(program),
        npus_(npus),
        source_(source),
        c_(program.chunks / program.ranks),
        model_(model),
        schedule_(program.coll, size_bytes, npus,
                  static_cast<std::uint32_t>(static_cast<std::uint64_t>(c_) * model.iterations), name) {
    for (int r = 0; r < program.ranks; ++r) {
      const LoadedRank& rank = program.by_rank[static_cast<std::size_t>(r)];
      first_runner_.push_back(runners_.size());
      for (const LoadedThreadblock& tb : rank.threadblocks) {
        Runner runner;
        runner.rank = r;
        runner.tb = &tb;
        runners_.push_back(std::move(runner));
        for (const LoadedTransfer& step : tb.transfers) counters_ = std::max<std::int64_t>(counters_, step.counter + 1);
      }
    }
    for (std::size_t g = 0; g < runners_.size(); ++g) {
      Runner& runner = runners_[g];
      if (runner.tb->send >= 0) {
        runner.out = &connection(runner.rank, runner.tb->send, runner.tb->chan);
        runner.out->sender = g;
      }
      if (runner.tb->recv >= 0) {
        Connection& in = connection(runner.tb->recv, runner.rank, runner.tb->chan);
        runner.in = &in;
        in.receiver = g;
        for (const LoadedTransfer& step : runner.tb->transfers) {
          if (!receives(step.type)) continue;
          for (int call = 0; call < calls_of(step); ++call) in.reduces.push_back(reduces_received(step.type) ? 1 : 0);
        }
      }
      for (const LoadedTransfer& step : runner.tb->transfers) {
        for (const auto& [tb, counter] : step.deps) runners_[index_of(runner.rank, tb)].waiters.push_back(g);
      }
    }
    for (Runner& runner : runners_) {
      std::sort(runner.waiters.begin(), runner.waiters.end());
      runner.waiters.erase(std::unique(runner.waiters.begin(), runner.waiters.end()), runner.waiters.end());
    }
    for (auto& [key, link] : connections_) link.consumed.resize(static_cast<std::size_t>(model_.fifo_calls));
    slots_.resize(model_.iterations);
    left_.assign(model_.iterations, 0);
    for (const Runner& runner : runners_) working_runners_ += runner.tb->transfers.empty() ? 0 : 1;
  }

  Schedule run() {
    // A worklist in a fixed order, so the result is deterministic: a runner that has to wait is
    // queued again by the message, the FIFO room or the progress flag it waits for.
    queued_.assign(runners_.size(), 1);
    for (std::size_t g = 0; g < runners_.size(); ++g) queue_.push_back(g);
    while (!queue_.empty()) {
      const std::size_t g = queue_.front();
      queue_.pop_front();
      queued_[g] = 0;
      while (advance(runners_[g])) {
      }
    }
    for (const Runner& runner : runners_) {
      if (!finished(runner)) throw InputError(source_, "", describe_stuck(runner));
    }
    return std::move(schedule_);
  }

 private:
  bool finished(const Runner& runner) const {
    return runner.tb->transfers.empty() || runner.iteration == model_.iterations;
  }

  int calls_of(const LoadedTransfer& step) const {
    if (!sends(step.type) && !receives(step.type)) return 1;
    return (step.cnt + model_.max_allowed_count - 1) / model_.max_allowed_count;
  }

  /// Inputs hold their chunks (SPEC 9.2); outputs are named by the chunk they end with; scratch
  /// holds nothing yet.
  RankSlots initial_slots(int rank) const {
    const bool ag = program_.coll == CollectiveKind::kAllGather;
    const bool rs = program_.coll == CollectiveKind::kReduceScatter;
    const int n = program_.chunks;
    RankSlots slots;
    slots[0].resize(static_cast<std::size_t>(ag ? c_ : n));
    slots[1].resize(static_cast<std::size_t>(rs ? c_ : n));
    slots[2].resize(static_cast<std::size_t>(program_.by_rank[static_cast<std::size_t>(rank)].s_chunks));
    for (std::size_t j = 0; j < slots[0].size(); ++j) {
      slots[0][j].chunk = static_cast<ChunkId>(ag ? rank * c_ + static_cast<int>(j) : static_cast<int>(j));
    }
    for (std::size_t k = 0; k < slots[1].size(); ++k) {
      slots[1][k].chunk = static_cast<ChunkId>(rs ? rank * c_ + static_cast<int>(k) : static_cast<int>(k));
    }
    return slots;
  }

  /// The slot a buffer index is in one iteration, with the runtime's in-place aliasing (SPEC
  /// section 4). Iterations touch disjoint elements, so each has slots of its own, made when the
  /// first threadblock gets there.
  SlotState& slot(std::uint64_t iteration, int rank, MscclBuffer buffer, int index) {
    auto& by_rank = slots_[iteration];
    if (by_rank.empty()) {
      by_rank.reserve(static_cast<std::size_t>(program_.ranks));
      for (int r = 0; r < program_.ranks; ++r) by_rank.push_back(initial_slots(r));
    }
    auto& slots = by_rank[static_cast<std::size_t>(rank)];
    std::size_t array = buffer == MscclBuffer::kInput ? 0 : buffer == MscclBuffer::kOutput ? 1 : 2;
    int at = index;
    if (program_.in_place && buffer != MscclBuffer::kScratch) {
      switch (program_.coll) {
        case CollectiveKind::kAllGather:
          if (buffer == MscclBuffer::kInput) at = rank * c_ + index;
          array = 1;
          break;
        case CollectiveKind::kReduceScatter:
          if (buffer == MscclBuffer::kOutput) at = rank * c_ + index;
          array = 0;
          break;
        case CollectiveKind::kAllReduce: array = 0; break;
      }
    }
    return slots[array][static_cast<std::size_t>(at)];
  }

  void merge(Frontier& into, const Frontier& other) const { into.insert(into.end(), other.begin(), other.end()); }

  /// Drops the members another member implies: its dependencies, and the earlier calls on its
  /// connection (those finish no later in the simulator, see the top of the file). By connection
  /// and sequence, so a wide frontier (a 64-rank file's reduce steps
  /// gather hundreds) costs f log f rather than f^2.
  void prune(Frontier& frontier) {
    std::sort(frontier.begin(), frontier.end());
    frontier.erase(std::unique(frontier.begin(), frontier.end()), frontier.end());
    if (frontier.size() < 2) return;
    implied_.assign(frontier.size(), 0);
    for (const TransferId member : frontier) {
      for (TransferId dep : facts_[member].deps) {
        const auto at = std::lower_bound(frontier.begin(), frontier.end(), dep);
        if (at != frontier.end() && *at == dep) implied_[static_cast<std::size_t>(at - frontier.begin())] = 1;
      }
    }
    by_connection_.resize(frontier.size());
    for (std::size_t i = 0; i < frontier.size(); ++i) by_connection_[i] = i;
    std::sort(by_connection_.begin(), by_connection_.end(), [&](std::size_t a, std::size_t b) {
      const TransferFacts& x = facts_[frontier[a]];
      const TransferFacts& y = facts_[frontier[b]];
      return x.connection != y.connection ? x.connection < y.connection : x.sequence < y.sequence;
    });
    // In each connection's run, every call before the last finishes first.
    for (std::size_t k = 0; k < by_connection_.size();) {
      std::size_t end = k + 1;
      const std::uint32_t connection = facts_[frontier[by_connection_[k]]].connection;
      while (end < by_connection_.size() && facts_[frontier[by_connection_[end]]].connection == connection) ++end;
      const std::uint64_t last = facts_[frontier[by_connection_[end - 1]]].sequence;
      for (std::size_t j = k; j < end; ++j) {
        if (facts_[frontier[by_connection_[j]]].sequence < last) implied_[by_connection_[j]] = 1;
      }
      k = end;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      if (!implied_[i]) frontier[kept++] = frontier[i];
    }
    frontier.resize(kept);
  }

  const Frontier& published(const Runner& target, std::int64_t flag) const {
    const auto it =
        std::lower_bound(target.publications.begin(), target.publications.end(), flag,
                         [](const auto& publication, std::int64_t value) { return publication.first < value; });
    return it->second;
  }

  std::size_t index_of(int rank, int tb) const {
    return first_runner_[static_cast<std::size_t>(rank)] + static_cast<std::size_t>(tb);
  }

  const Runner& runner_of(int rank, int tb) const { return runners_[index_of(rank, tb)]; }

  void wake(std::size_t g) {
    if (queued_[g]) return;
    queued_[g] = 1;
    queue_.push_back(g);
  }

  Connection& connection(int from, int to, int chan) {
    const auto [it, added] = connections_.try_emplace({from, to, chan});
    if (added) it->second.id = static_cast<std::uint32_t>(connections_.size() - 1);
    return it->second;
  }

  /// A runner is done with `iteration`: once every runner with steps is, nothing reads its slots
  /// again (each call touches the slots of its own iteration), and a file the runtime runs in
  /// thousands of slices would otherwise hold every slice's slots to the end (torus-4x4
  /// all-reduce of 8 GiB, 256 slices, synth -o x.xml: peak 157 -> 139 MB).
  void leave_iteration(std::uint64_t iteration) {
    if (++left_[iteration] < working_runners_) return;
    std::vector<RankSlots>().swap(slots_[iteration]);
  }

  std::int64_t flag_value(std::uint64_t iteration, int counter) const {
    return static_cast<std::int64_t>(iteration) * counters_ + counter;
  }

  bool room_in(const Connection& out) const {
    const auto depth = static_cast<std::uint64_t>(model_.fifo_calls);
    return out.sent < depth || out.received > out.sent - depth;
  }

  ChunkId sub_chunk(ChunkId chunk, std::uint64_t iteration) const {
    return static_cast<ChunkId>(static_cast<std::uint64_t>(chunk) * model_.iterations + iteration);
  }

  /// Runs the runner's next call if the runtime could: false when it has to wait.
  bool advance(Runner& runner) {
    if (finished(runner)) return false;
    const LoadedTransfer& step = runner.tb->transfers[runner.next];
    const std::uint64_t it = runner.iteration;
    if (runner.call == 0) {
      for (const auto& [tb, counter] : step.deps) {
        if (runner_of(runner.rank, tb).flag < flag_value(it, counter)) return false;
      }
    }
    Connection* in = receives(step.type) ? runner.in : nullptr;
    if (in != nullptr && in->fifo.empty()) return false;
    Connection* out = sends(step.type) ? runner.out : nullptr;
    if (out != nullptr && !room_in(*out)) return false;

    const bool transfers_data = in != nullptr || out != nullptr;
    const int first = transfers_data ? runner.call * model_.max_allowed_count : 0;
    const int count = transfers_data ? std::min(model_.max_allowed_count, step.cnt - first) : step.cnt;

    // runner.after is replaced by this call's frontier below: its storage is reused.
    Frontier ready = std::move(runner.after);
    if (runner.call == 0) {
      for (const auto& [tb, counter] : step.deps)
        merge(ready, published(runner_of(runner.rank, tb), flag_value(it, counter)));
    }
    const auto read_range = [&](MscclBuffer buffer, int offset) {
      for (int k = 0; k < count; ++k) merge(ready, slot(it, runner.rank, buffer, offset + first + k).written_after);
    };
    if (uses_local_src(step.type)) read_range(step.srcbuf, step.srcoff);
    if (step.type == MscclStepType::kReduce) {
      read_range(step.dstbuf, step.dstoff);
      for (int source : step.reduce_srcoffs) read_range(step.srcbuf, source);
    }
    if (out != nullptr && out->sent >= static_cast<std::uint64_t>(model_.fifo_calls)) {
      merge(ready, out->consumed[(out->sent - static_cast<std::uint64_t>(model_.fifo_calls)) % out->consumed.size()]);
    }
    prune(ready);

    std::vector<ChunkId> chunks;  // sub-chunks
    Frontier after = std::move(ready);
    if (in != nullptr) {
      Message message = std::move(in->fifo.front());
      in->fifo.pop_front();
      if (message.chunks.size() != static_cast<std::size_t>(count)) {
        throw InputError(source_, "",
                         step_label(step.line, runner.rank, runner.tb->id, step.position, step.type) +
                             ": receives a call of " + std::to_string(count) +
                             " chunk(s) but the matching send carries " + std::to_string(message.chunks.size()) +
                             " (matched steps need the same cnt, SPEC 7.2)");
      }
      after.push_back(message.transfer);
      prune(after);
      in->consumed[in->received % in->consumed.size()] = after;
      ++in->received;
      wake(in->sender);
      chunks = std::move(message.chunks);
    } else if (step.type == MscclStepType::kSend || step.type == MscclStepType::kCopy) {
      for (int k = 0; k < count; ++k) {
        const ChunkId chunk = slot(it, runner.rank, step.srcbuf, step.srcoff + first + k).chunk;
        if (chunk == kUnwritten) {
          throw InputError(source_, "",
                           step_label(step.line, runner.rank, runner.tb->id, step.position, step.type) + ": reads " +
                               msccl_buffer_name(step.srcbuf) + "[" + std::to_string(step.srcoff + first + k) +
                               "], which no earlier step wrote");
        }
        chunks.push_back(sub_chunk(chunk, it));
      }
    }

    if (stores_received(step.type) || step.type == MscclStepType::kCopy) {
      for (int k = 0; k < count; ++k) {
        SlotState& target = slot(it, runner.rank, step.dstbuf, step.dstoff + first + k);
        target.chunk = static_cast<ChunkId>(chunks[static_cast<std::size_t>(k)] / model_.iterations);
        target.written_after = after;
      }
    } else if (step.type == MscclStepType::kReduce) {
      for (int k = 0; k < count; ++k) slot(it, runner.rank, step.dstbuf, step.dstoff + first + k).written_after = after;
    }
    if (out != nullptr) send(runner, step, *out, std::move(chunks), after);
    runner.after = std::move(after);

    if (++runner.call < calls_of(step)) return true;
    runner.call = 0;
    if (step.hasdep) {
      runner.flag = flag_value(it, step.counter);
      runner.publications.emplace_back(runner.flag, runner.after);
      for (std::size_t waiter : runner.waiters) wake(waiter);
    }
    if (++runner.next == runner.tb->transfers.size()) {
      runner.next = 0;
      leave_iteration(runner.iteration++);
    }
    return true;
  }

  /// One call onto the connection: a transfer that starts after `after` and holds the
  /// threadblock until it ends.
  void send(Runner& runner, const LoadedTransfer& step, Connection& out, std::vector<ChunkId> chunks, Frontier& after) {
    if (out.reduces.empty()) {
      throw InputError(source_, "",
                       step_label(step.line, runner.rank, runner.tb->id, step.position, step.type) +
                           ": sends to rank " + std::to_string(runner.tb->send) + " on channel " +
                           std::to_string(runner.tb->chan) + ", which receives nothing there");
    }
    const bool reduce = out.reduces[out.sent % out.reduces.size()] != 0;
    const TransferId id =
        schedule_.add(npus_[static_cast<std::size_t>(runner.rank)], npus_[static_cast<std::size_t>(runner.tb->send)],
                      reduce ? TransferKind::kReduce : TransferKind::kCopy, chunks, after, 0.0, 0.0, kNoLink);
    facts_.push_back({std::move(after), out.id, out.sent});
    out.fifo.push_back({std::move(chunks), id});
    ++out.sent;
    wake(out.receiver);
    after.assign(1, id);
  }

  std::string describe_stuck(const Runner& runner) const {
    const LoadedTransfer& step = runner.tb->transfers[runner.next];
    std::string waits_for;
    if (runner.call == 0) {
      for (const auto& [tb, counter] : step.deps) {
        if (waits_for.empty() && runner_of(runner.rank, tb).flag < flag_value(runner.iteration, counter)) {
          waits_for = "tb " + std::to_string(tb) + " to finish step " + std::to_string(counter);
        }
      }
    }
    if (waits_for.empty() && receives(step.type)) {
      const auto found = connections_.find({runner.tb->recv, runner.rank, runner.tb->chan});
      if (found == connections_.end() || found->second.fifo.empty()) {
        waits_for =
            "a message from rank " + std::to_string(runner.tb->recv) + " on channel " + std::to_string(runner.tb->chan);
      }
    }
    if (waits_for.empty()) {
      waits_for = "room in its connection to rank " + std::to_string(runner.tb->send) + " on channel " +
                  std::to_string(runner.tb->chan) + " (the runtime buffers " + std::to_string(model_.fifo_calls) +
                  " calls per connection)";
    }
    std::string where = step_label(step.line, runner.rank, runner.tb->id, step.position, step.type);
    if (model_.iterations > 1)
      where += " in slice " + std::to_string(runner.iteration + 1) + " of " + std::to_string(model_.iterations);
    return where + " waits forever for " + waits_for + ": the program deadlocks, so it has no time to simulate";
  }

  const LoadedProgram& program_;
  const std::vector<NodeId>& npus_;
  const std::string& source_;
  int c_;
  MscclRuntimeModel model_;
  Schedule schedule_;
  std::int64_t counters_ = 1;         ///< step counter values per iteration
  std::vector<TransferFacts> facts_;  ///< by transfer id
  std::vector<Runner> runners_;
  std::vector<std::size_t> first_runner_;  ///< by rank
  std::deque<std::size_t> queue_;
  std::vector<char> queued_;
  std::vector<std::vector<RankSlots>> slots_;                    ///< by iteration, then rank
  std::vector<std::size_t> left_;                                ///< by iteration: runners with steps done with it
  std::size_t working_runners_ = 0;                              ///< runners with steps
  std::map<std::tuple<int, int, int>, Connection> connections_;  ///< (from, to, chan)
  std::vector<char> implied_;                                    ///< prune's scratch
  std::vector<std::size_t> by_connection_;                       ///< prune's scratch
};

/// Calls the conversion makes: each sending step's calls, every iteration.
std::uint64_t modeled_calls(const LoadedProgram& program, const MscclRuntimeModel& model) {
  std::uint64_t calls = 0;
  for (const LoadedRank& rank : program.by_rank) {
    for (const LoadedThreadblock& tb : rank.threadblocks) {
      for (const LoadedTransfer& step : tb.transfers) {
        if (sends(step.type))
          calls += static_cast<std::uint64_t>((step.cnt + model.max_allowed_count - 1) / model.max_allowed_count);
      }
    }
  }
  return calls * model.iterations;
}

}  // namespace

Schedule msccl_to_schedule(const MscclProgram& program, const Topology& topology, std::uint64_t size_bytes,
                           const std::string& source, std::span<const NodeId> members) {
  LoadedProgram loaded;
  std::string problem = load_program(program, loaded);
  if (!problem.empty()) throw InputError(source, "", problem);
  if (loaded.chunks % loaded.ranks != 0) {
    throw InputError(source, "",
                     "line " + std::to_string(program.line) + ": <algo> nchunksperloop=\"" +
                         std::to_string(loaded.chunks) + "\" is not a multiple of ngpus=\"" +
                         std::to_string(loaded.ranks) + "\": tenet's schedules give every rank as many chunks");
  }
  std::vector<NodeId> npus;
  problem = map_ranks(program, topology, members, npus);
  if (problem.empty()) problem = check_routes(loaded, topology, npus);
  if (!problem.empty()) throw InputError(source, "", problem);
  const MscclRuntimeModel model = msccl_runtime_model(loaded.protocol, loaded.chunks, size_bytes);
  const std::uint64_t per_rank = static_cast<std::uint64_t>(loaded.chunks / loaded.ranks) * model.iterations;
  const std::uint64_t calls = modeled_calls(loaded, model);
  if (per_rank > kMaxChunksPerNpu || calls > kMaxModeledCalls) {
    throw InputError(source, "--size",
                     "at " + std::to_string(size_bytes) + " bytes the runtime runs this file in " +
                         std::to_string(model.iterations) + " slices per chunk, " + std::to_string(calls) +
                         " primitive calls in all; tenet times files of at most " + std::to_string(kMaxModeledCalls) +
                         " calls and " + std::to_string(kMaxChunksPerNpu) + " slices per rank: use a smaller size");
  }
  return Conversion(loaded, npus, size_bytes, model, program.name, source).run();
}

}  // namespace tenet
