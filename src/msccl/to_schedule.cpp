// msccl_to_schedule: an MSCCL program as a tenet Schedule, for the simulator (the mapping is in
// msccl.hpp). The program is run once, symbolically, with unbounded FIFOs: a threadblock runs
// its steps in order, waits on progress flags, and receives the next message of its connection
// once it has been sent. Buffering decides whether the runtime deadlocks (verify_msccl_xml's
// question), not which data a message carries. Running the steps in an order the runtime takes
// tells, for every buffer slot, which chunk it holds and which transfers had to finish for it to
// hold it, so scratch buffers, local copies and in-place aliasing need no rules of their own.
//
// A transfer waits for what its sending step waited for: the sender's earlier steps (a receive is
// done when its data arrived, a send when it was issued), its depid/deps, and the data it reads.
// What the receiving step waits for holds only the receiver's later steps back, as a message
// waits in the connection until the receiver gets to it. So a ring's transfers wait for exactly
// the transfer that brought their data, as in the baseline's own schedule.
//
// "Which transfers had to finish" is a frontier, kept small by dropping members that cannot finish
// after another member: a direct dependency of it, or an earlier message on the same connection
// that is no larger (and no costlier to reduce). The second rule rests on the simulator's model
// (DESIGN.md): both follow the same route, the earlier one was issued no later (a sending
// threadblock only accumulates conditions), and flows on one route get equal max-min shares. It
// is what keeps a threadblock that receives k messages from carrying all k in every frontier.

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <tuple>

#include "internal.hpp"
#include "tenet/common/error.hpp"

namespace tenet {
namespace {

using namespace msccl_detail;

constexpr ChunkId kUnwritten = ~ChunkId{0};

using Frontier = std::vector<TransferId>;

struct Message {
  std::vector<ChunkId> chunks;
  Frontier ready;  ///< what the sending step waited for, the data it sends included
};

struct Connection {
  std::uint32_t id = 0;
  std::uint32_t received = 0;
  std::size_t receiver = 0;  ///< the runner that receives on it
  std::deque<Message> fifo;  ///< sent, not yet received
};

/// What pruning needs to know of a transfer already added.
struct TransferFacts {
  Frontier deps;
  std::uint32_t connection = 0;
  std::uint32_t sequence = 0;  ///< among the connection's messages
  std::uint32_t chunks = 0;
  bool reduce = false;
};

struct SlotState {
  ChunkId chunk = kUnwritten;
  Frontier written_after;
};

struct Runner {
  int rank = 0;
  const LoadedThreadblock* tb = nullptr;
  std::size_t next = 0;
  int flag = -1;   ///< the runtime's progress flag: the last step counter published
  Frontier after;  ///< what the steps run so far waited for
  std::vector<std::pair<int, Frontier>> publications;  ///< (step counter, after) of each hasdep step, in order
  std::vector<std::size_t> waiters;  ///< runners with a dependency on this one
  bool finished() const { return next == tb->transfers.size(); }
};

bool uses_local_src(MscclStepType type) {
  return type == MscclStepType::kSend || type == MscclStepType::kRecvReduceSend || type == MscclStepType::kRecvReduceCopy ||
         type == MscclStepType::kRecvReduceCopySend || type == MscclStepType::kCopy;
}

bool stores_received(MscclStepType type) {
  return type == MscclStepType::kRecv || type == MscclStepType::kRecvCopySend || type == MscclStepType::kRecvReduceCopy ||
         type == MscclStepType::kRecvReduceCopySend;
}

bool reduces_received(MscclStepType type) {
  return type == MscclStepType::kRecvReduceSend || type == MscclStepType::kRecvReduceCopy ||
         type == MscclStepType::kRecvReduceCopySend;
}

class Conversion {
 public:
  Conversion(const LoadedProgram& program, const std::vector<NodeId>& npus, std::uint64_t size_bytes,
             const std::string& name, const std::string& source)
      : program_(program), npus_(npus), source_(source), c_(program.chunks / program.ranks),
        schedule_(program.coll, size_bytes, npus, static_cast<std::uint32_t>(c_), name) {
    for (int r = 0; r < program.ranks; ++r) {
      const LoadedRank& rank = program.by_rank[static_cast<std::size_t>(r)];
      first_runner_.push_back(runners_.size());
      for (const LoadedThreadblock& tb : rank.threadblocks) {
        Runner runner;
        runner.rank = r;
        runner.tb = &tb;
        runners_.push_back(std::move(runner));
      }
      slots_.push_back(initial_slots(r));
    }
    for (std::size_t g = 0; g < runners_.size(); ++g) {
      const Runner& runner = runners_[g];
      if (runner.tb->recv >= 0) connection(runner.tb->recv, runner.rank, runner.tb->chan).receiver = g;
      for (const LoadedTransfer& step : runner.tb->transfers) {
        for (const auto& [tb, counter] : step.deps) runners_[index_of(runner.rank, tb)].waiters.push_back(g);
      }
    }
    for (Runner& runner : runners_) {
      std::sort(runner.waiters.begin(), runner.waiters.end());
      runner.waiters.erase(std::unique(runner.waiters.begin(), runner.waiters.end()), runner.waiters.end());
    }
  }

  Schedule run() {
    // A worklist in a fixed order, so the result is deterministic: a runner that has to wait is
    // queued again by the message or the progress flag it waits for.
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
      if (!runner.finished()) throw InputError(source_, "", describe_stuck(runner));
    }
    return std::move(schedule_);
  }

 private:
  /// Inputs hold their chunks (SPEC 9.2); outputs are named by the chunk they end with; scratch
  /// holds nothing yet.
  std::array<std::vector<SlotState>, 3> initial_slots(int rank) const {
    const bool ag = program_.coll == CollectiveKind::kAllGather;
    const bool rs = program_.coll == CollectiveKind::kReduceScatter;
    const int n = program_.chunks;
    std::array<std::vector<SlotState>, 3> slots;
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

  /// The slot a buffer index is, with the runtime's in-place aliasing (SPEC section 4).
  SlotState& slot(int rank, MscclBuffer buffer, int index) {
    auto& slots = slots_[static_cast<std::size_t>(rank)];
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
        case CollectiveKind::kAllReduce:
          array = 0;
          break;
      }
    }
    return slots[array][static_cast<std::size_t>(at)];
  }

  void merge(Frontier& into, const Frontier& other) const { into.insert(into.end(), other.begin(), other.end()); }

  /// Whether `earlier` finishes no later than `later` in the simulator (see the top of the file).
  bool finishes_first(const TransferFacts& earlier, const TransferFacts& later) const {
    return earlier.connection == later.connection && earlier.sequence < later.sequence && earlier.chunks <= later.chunks &&
           (!earlier.reduce || later.reduce);
  }

  void prune(Frontier& frontier) const {
    std::sort(frontier.begin(), frontier.end());
    frontier.erase(std::unique(frontier.begin(), frontier.end()), frontier.end());
    std::vector<char> implied(frontier.size(), 0);
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      const TransferFacts& member = facts_[frontier[i]];
      for (TransferId dep : member.deps) {
        const auto at = std::lower_bound(frontier.begin(), frontier.end(), dep);
        if (at != frontier.end() && *at == dep) implied[static_cast<std::size_t>(at - frontier.begin())] = 1;
      }
      for (std::size_t j = 0; j < frontier.size(); ++j) {
        if (j != i && finishes_first(facts_[frontier[j]], member)) implied[j] = 1;
      }
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      if (!implied[i]) frontier[kept++] = frontier[i];
    }
    frontier.resize(kept);
  }

  const Frontier& published(const Runner& target, int counter) const {
    const auto it = std::lower_bound(target.publications.begin(), target.publications.end(), counter,
                                     [](const auto& publication, int value) { return publication.first < value; });
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

  /// Runs the runner's next step if the runtime could: false when it has to wait.
  bool advance(Runner& runner) {
    if (runner.finished()) return false;
    const LoadedTransfer& step = runner.tb->transfers[runner.next];
    for (const auto& [tb, counter] : step.deps) {
      if (runner_of(runner.rank, tb).flag < counter) return false;
    }
    Connection* in = receives(step.type) ? &connection(runner.tb->recv, runner.rank, runner.tb->chan) : nullptr;
    if (in != nullptr && in->fifo.empty()) return false;

    Frontier ready = runner.after;
    for (const auto& [tb, counter] : step.deps) merge(ready, published(runner_of(runner.rank, tb), counter));
    const auto read_range = [&](MscclBuffer buffer, int offset) {
      for (int k = 0; k < step.cnt; ++k) merge(ready, slot(runner.rank, buffer, offset + k).written_after);
    };
    if (uses_local_src(step.type)) read_range(step.srcbuf, step.srcoff);
    if (step.type == MscclStepType::kReduce) {
      read_range(step.dstbuf, step.dstoff);
      for (int source : step.reduce_srcoffs) read_range(step.srcbuf, source);
    }
    prune(ready);

    std::vector<ChunkId> chunks;
    Frontier after = ready;
    if (in != nullptr) {
      Message message = std::move(in->fifo.front());
      in->fifo.pop_front();
      const bool reduce = reduces_received(step.type);
      const TransferId id = schedule_.add(npus_[static_cast<std::size_t>(runner.tb->recv)], npus_[static_cast<std::size_t>(runner.rank)],
                                          reduce ? TransferKind::kReduce : TransferKind::kCopy, message.chunks, message.ready,
                                          0.0, 0.0, kNoLink);
      facts_.push_back({std::move(message.ready), in->id, in->received++, static_cast<std::uint32_t>(message.chunks.size()), reduce});
      chunks = std::move(message.chunks);
      after.push_back(id);
      prune(after);
    } else if (step.type == MscclStepType::kSend || step.type == MscclStepType::kCopy) {
      for (int k = 0; k < step.cnt; ++k) {
        const ChunkId chunk = slot(runner.rank, step.srcbuf, step.srcoff + k).chunk;
        if (chunk == kUnwritten) {
          throw InputError(source_, "", step_label(step.line, runner.rank, runner.tb->id, step.position, step.type) + ": reads " +
                                            msccl_buffer_name(step.srcbuf) + "[" + std::to_string(step.srcoff + k) +
                                            "], which no earlier step wrote");
        }
        chunks.push_back(chunk);
      }
    }

    if (stores_received(step.type) || step.type == MscclStepType::kCopy) {
      for (int k = 0; k < step.cnt; ++k) {
        SlotState& target = slot(runner.rank, step.dstbuf, step.dstoff + k);
        target.chunk = chunks[static_cast<std::size_t>(k)];
        target.written_after = after;
      }
    } else if (step.type == MscclStepType::kReduce) {
      for (int k = 0; k < step.cnt; ++k) slot(runner.rank, step.dstbuf, step.dstoff + k).written_after = after;
    }
    if (sends(step.type)) {
      Connection& out = connection(runner.rank, runner.tb->send, runner.tb->chan);
      out.fifo.push_back({std::move(chunks), after});
      wake(out.receiver);
    }
    if (step.hasdep) {
      runner.flag = step.counter;
      runner.publications.emplace_back(step.counter, after);
      for (std::size_t waiter : runner.waiters) wake(waiter);
    }
    runner.after = std::move(after);
    ++runner.next;
    return true;
  }

  std::string describe_stuck(const Runner& runner) const {
    const LoadedTransfer& step = runner.tb->transfers[runner.next];
    std::string waits_for;
    for (const auto& [tb, counter] : step.deps) {
      if (waits_for.empty() && runner_of(runner.rank, tb).flag < counter) {
        waits_for = "tb " + std::to_string(tb) + " to finish step " + std::to_string(counter);
      }
    }
    if (waits_for.empty()) {
      waits_for = "a message from rank " + std::to_string(runner.tb->recv) + " on channel " + std::to_string(runner.tb->chan);
    }
    return step_label(step.line, runner.rank, runner.tb->id, step.position, step.type) + " waits forever for " + waits_for +
           ": the program deadlocks, so it has no time to simulate";
  }

  const LoadedProgram& program_;
  const std::vector<NodeId>& npus_;
  const std::string& source_;
  int c_;
  Schedule schedule_;
  std::vector<TransferFacts> facts_;  ///< by transfer id
  std::vector<Runner> runners_;
  std::vector<std::size_t> first_runner_;  ///< by rank
  std::deque<std::size_t> queue_;
  std::vector<char> queued_;
  std::vector<std::array<std::vector<SlotState>, 3>> slots_;
  std::map<std::tuple<int, int, int>, Connection> connections_;  ///< (from, to, chan)
};

}  // namespace

Schedule msccl_to_schedule(const MscclProgram& program, const Topology& topology, std::uint64_t size_bytes,
                           const std::string& source) {
  LoadedProgram loaded;
  std::string problem = load_program(program, loaded);
  if (!problem.empty()) throw InputError(source, "", problem);
  if (loaded.chunks % loaded.ranks != 0) {
    throw InputError(source, "", "line " + std::to_string(program.line) + ": <algo> nchunksperloop=\"" +
                                     std::to_string(loaded.chunks) + "\" is not a multiple of ngpus=\"" +
                                     std::to_string(loaded.ranks) + "\": tenet's schedules give every rank as many chunks");
  }
  std::vector<NodeId> npus;
  problem = map_ranks(program, topology, npus);
  if (!problem.empty()) throw InputError(source, "", problem);
  return Conversion(loaded, npus, size_bytes, program.name, source).run();
}

}  // namespace tenet
