// SPDX-License-Identifier: MIT
// The interpreter on the CPU (SPEC section 6, msccl_interpreter.h): every threadblock runs its
// transfers in order; a transfer first waits until each awaited threadblock's progress flag reaches
// the awaited step, then moves its chunks in primitive calls of at most mscclMaxAllowedCount
// chunks; a sending call needs room in its connection's FIFO (2 calls for Simple, 8 for LL/LL128),
// a receiving call needs a message there. Threadblocks are run from a worklist until none can move:
// the system is a determinate process network (FIFOs, monotone flags), so whether it finishes and
// what it computes do not depend on the order they run in, and one run per call split is exact.
//
// Data: memory.hpp.
//
// Races. With vector clocks (one entry per threadblock of every rank, advanced per call, carried by
// messages and by the flags a dependency waits on) every access to a chunk is checked against the
// last write and the reads since: two accesses from different threadblocks, one a write, that no
// dependency or message chain orders are a race even when this run happened to order them well.

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <tuple>

#include "memory.hpp"

namespace tenet::msccl_detail {
namespace {

/// Race checking copies a vector clock per message: skipped above this many clock entries copied.
constexpr double kRaceBudget = 3e8;

struct Message {
  int chunks = 0;
  std::vector<float> values;
  std::vector<Symbol> symbols;
  std::vector<std::uint32_t> clock;
};

struct Connection {
  int sender = 0;  ///< global tb index
  int receiver = 0;
  int from = 0;
  int to = 0;
  int chan = 0;
  std::deque<Message> fifo;
};

enum class Wait { kNone, kFlag, kData, kRoom };

struct Runner {
  int rank = 0;
  const LoadedThreadblock* tb = nullptr;
  int send_connection = -1;
  int recv_connection = -1;
  std::size_t next = 0;
  int calls_done = 0;
  bool deps_done = false;
  long long flag = -1;
  Wait wait = Wait::kNone;
  int wait_tb = 0;
  int wait_step = 0;
  std::vector<std::uint32_t> clock;
  std::vector<std::pair<int, std::vector<std::uint32_t>>> publications;  ///< (value, clock) that release a waiter
  std::vector<int> awaited;                                              ///< sorted step values other tbs wait for
  std::vector<int> waiters;                                              ///< global tbs with a dependency on this one
  bool finished() const { return next == tb->transfers.size(); }
};

class Interpreter {
 public:
  Interpreter(const LoadedProgram& program, int max_allowed_count, bool check_races)
      : program_(program), m_(max_allowed_count), p_(program.ranks), memory_(program) {
    build_runners();
    double clock_copies = 0;
    for (const Runner& runner : runners_) {
      for (const LoadedTransfer& transfer : runner.tb->transfers) {
        if (sends(transfer.type)) clock_copies += 2.0 * calls_of(transfer) * static_cast<double>(runners_.size());
      }
    }
    races_ = check_races && clock_copies <= kRaceBudget;
    if (races_) {
      for (Runner& runner : runners_) runner.clock.assign(runners_.size(), 0);
      memory_.track_accesses();
    }
  }

  ExecutionOutcome run() {
    ExecutionOutcome outcome;
    outcome.races_checked = races_;
    std::deque<int> queue;
    std::vector<char> queued(runners_.size(), 1);
    for (std::size_t g = 0; g < runners_.size(); ++g) queue.push_back(static_cast<int>(g));
    wake_ = [&](int g) {
      if (!queued[static_cast<std::size_t>(g)]) {
        queued[static_cast<std::size_t>(g)] = 1;
        queue.push_back(g);
      }
    };
    while (!queue.empty()) {
      const int g = queue.front();
      queue.pop_front();
      queued[static_cast<std::size_t>(g)] = 0;
      while (advance(g)) {
      }
      if (!problem_.empty()) break;
    }
    if (problem_.empty()) check_finished();
    if (problem_.empty()) problem_ = memory_.check_result();
    outcome.problem = problem_;
    return outcome;
  }

 private:
  // ---- threadblocks -----------------------------------------------------------------------------

  void build_runners() {
    std::map<std::tuple<int, int, int>, int> connection_of;  // (from, to, chan)
    for (int r = 0; r < p_; ++r) {
      first_runner_.push_back(static_cast<int>(runners_.size()));
      for (const LoadedThreadblock& tb : program_.by_rank[static_cast<std::size_t>(r)].threadblocks) {
        Runner runner;
        runner.rank = r;
        runner.tb = &tb;
        runners_.push_back(std::move(runner));
      }
    }
    for (std::size_t g = 0; g < runners_.size(); ++g) {
      Runner& runner = runners_[g];
      const LoadedThreadblock& tb = *runner.tb;
      const auto connection = [&](int from, int to) {
        const auto [it, added] = connection_of.try_emplace({from, to, tb.chan}, static_cast<int>(connections_.size()));
        if (added) connections_.push_back({0, 0, from, to, tb.chan, {}});
        return it->second;
      };
      if (tb.send >= 0) {
        runner.send_connection = connection(runner.rank, tb.send);
        connections_[static_cast<std::size_t>(runner.send_connection)].sender = static_cast<int>(g);
      }
      if (tb.recv >= 0) {
        runner.recv_connection = connection(tb.recv, runner.rank);
        connections_[static_cast<std::size_t>(runner.recv_connection)].receiver = static_cast<int>(g);
      }
      for (const LoadedTransfer& transfer : tb.transfers) {
        for (const auto& [dep_tb, step] : transfer.deps) {
          Runner& target = runners_[static_cast<std::size_t>(global(runner.rank, dep_tb))];
          target.awaited.push_back(step);
          target.waiters.push_back(static_cast<int>(g));
        }
      }
    }
    for (Runner& runner : runners_) {
      std::sort(runner.awaited.begin(), runner.awaited.end());
      std::sort(runner.waiters.begin(), runner.waiters.end());
      runner.waiters.erase(std::unique(runner.waiters.begin(), runner.waiters.end()), runner.waiters.end());
    }
  }

  int global(int rank, int tb) const { return first_runner_[static_cast<std::size_t>(rank)] + tb; }

  int calls_of(const LoadedTransfer& transfer) const { return (transfer.cnt + m_ - 1) / m_; }

  std::string where(const Runner& runner, const LoadedTransfer& transfer) const {
    return step_label(transfer.line, runner.rank, runner.tb->id, transfer.position, transfer.type);
  }

  /// One unit of progress for threadblock g (a dependency check, a call, or a local step); false
  /// when it cannot move.
  bool advance(int g) {
    Runner& runner = runners_[static_cast<std::size_t>(g)];
    if (runner.finished() || !problem_.empty()) return false;
    const LoadedTransfer& transfer = runner.tb->transfers[runner.next];
    if (!runner.deps_done) {
      for (const auto& [dep_tb, step] : transfer.deps) {
        const Runner& target = runners_[static_cast<std::size_t>(global(runner.rank, dep_tb))];
        if (target.flag < step) {
          runner.wait = Wait::kFlag;
          runner.wait_tb = dep_tb;
          runner.wait_step = step;
          return false;
        }
      }
      if (races_) {
        for (const auto& [dep_tb, step] : transfer.deps) {
          const Runner& target = runners_[static_cast<std::size_t>(global(runner.rank, dep_tb))];
          const auto it =
              std::lower_bound(target.publications.begin(), target.publications.end(), step,
                               [](const auto& publication, int value) { return publication.first < value; });
          if (it != target.publications.end()) merge(runner.clock, it->second);
        }
      }
      runner.deps_done = true;
    }
    if (transfer.type == MscclStepType::kCopy || transfer.type == MscclStepType::kReduce) {
      tick(g);
      local_step(g, transfer);
      finish(g);
      return problem_.empty();
    }
    const int first = runner.calls_done * m_;
    const int chunks = std::min(m_, transfer.cnt - first);
    Connection* in =
        receives(transfer.type) ? &connections_[static_cast<std::size_t>(runner.recv_connection)] : nullptr;
    Connection* out = sends(transfer.type) ? &connections_[static_cast<std::size_t>(runner.send_connection)] : nullptr;
    if (in != nullptr && in->fifo.empty()) {
      runner.wait = Wait::kData;
      return false;
    }
    if (out != nullptr && static_cast<int>(out->fifo.size()) >= program_.fifo_calls) {
      runner.wait = Wait::kRoom;
      return false;
    }
    runner.wait = Wait::kNone;
    tick(g);
    Message incoming;
    if (in != nullptr) {
      incoming = std::move(in->fifo.front());
      in->fifo.pop_front();
      if (races_) merge(runner.clock, incoming.clock);
      wake_(in->sender);
      if (incoming.chunks != chunks) {
        problem_ = where(runner, transfer) + ": receives a call of " + std::to_string(incoming.chunks) +
                   " chunks but expects " + std::to_string(chunks);
        return false;
      }
    }
    Message outgoing;
    call(g, transfer, first, chunks, incoming, outgoing);
    if (out != nullptr && problem_.empty()) {
      outgoing.chunks = chunks;
      if (races_) outgoing.clock = runner.clock;
      out->fifo.push_back(std::move(outgoing));
      wake_(out->receiver);
    }
    if (++runner.calls_done == calls_of(transfer)) finish(g);
    return problem_.empty();
  }

  void tick(int g) {
    Runner& runner = runners_[static_cast<std::size_t>(g)];
    if (races_) ++runner.clock[static_cast<std::size_t>(g)];
  }

  void finish(int g) {
    Runner& runner = runners_[static_cast<std::size_t>(g)];
    const LoadedTransfer& transfer = runner.tb->transfers[runner.next];
    if (transfer.hasdep) {
      const int value = transfer.counter;
      if (races_) {
        // Keep the clock only if it is the first publication to reach some awaited value.
        const auto it =
            std::lower_bound(runner.awaited.begin(), runner.awaited.end(), static_cast<int>(runner.flag) + 1);
        if (it != runner.awaited.end() && *it <= value) runner.publications.emplace_back(value, runner.clock);
      }
      runner.flag = value;
      for (int waiter : runner.waiters) wake_(waiter);
    }
    ++runner.next;
    runner.calls_done = 0;
    runner.deps_done = false;
  }

  static void merge(std::vector<std::uint32_t>& into, const std::vector<std::uint32_t>& other) {
    for (std::size_t i = 0; i < into.size() && i < other.size(); ++i) into[i] = std::max(into[i], other[i]);
  }

  // ---- data -------------------------------------------------------------------------------------

  void access(int g, const LoadedTransfer& transfer, const Slot& s, bool write) {
    if (!races_ || !problem_.empty()) return;
    Runner& runner = runners_[static_cast<std::size_t>(g)];
    History& history = s.array->history[s.index];
    const auto unordered = [&](const Access& other) {
      return other.tb != kNobody && other.tb != static_cast<std::uint32_t>(g) && runner.clock[other.tb] < other.epoch;
    };
    const auto report = [&](const Access& other, const char* other_does) {
      const Runner& them = runners_[other.tb];
      problem_ = "race on rank " + std::to_string(runner.rank) + " " + memory_.slot_name(runner.rank, s) + ": tb " +
                 std::to_string(runner.tb->id) + " (line " + std::to_string(transfer.line) + ") " +
                 (write ? "writes" : "reads") + " it and tb " + std::to_string(them.tb->id) + " (line " +
                 std::to_string(other.line) + ") " + other_does + " it, and no dependency or message orders the two";
    };
    if (unordered(history.write)) return report(history.write, "writes");
    const Access mine{static_cast<std::uint32_t>(g), runner.clock[static_cast<std::size_t>(g)], transfer.line};
    if (write) {
      for (const Access& read : history.reads) {
        if (unordered(read)) return report(read, "reads");
      }
      history.write = mine;
      history.reads.clear();
      return;
    }
    for (Access& read : history.reads) {
      if (read.tb == mine.tb) {
        read = mine;
        return;
      }
    }
    history.reads.push_back(mine);
  }

  void load(int g, const LoadedTransfer& transfer, MscclBuffer buffer, int offset, int chunks, Message& into) {
    const int rank = runners_[static_cast<std::size_t>(g)].rank;
    into.values.resize(static_cast<std::size_t>(chunks) * kElements);
    into.symbols.resize(static_cast<std::size_t>(chunks));
    for (int i = 0; i < chunks; ++i) {
      const Slot s = memory_.slot(rank, buffer, offset + i);
      access(g, transfer, s, false);
      std::copy_n(s.array->values.begin() + static_cast<std::ptrdiff_t>(s.index * kElements), kElements,
                  into.values.begin() + static_cast<std::ptrdiff_t>(i) * kElements);
      into.symbols[static_cast<std::size_t>(i)] = s.array->symbols[s.index];
    }
  }

  void store(int g, const LoadedTransfer& transfer, MscclBuffer buffer, int offset, const Message& from) {
    const int rank = runners_[static_cast<std::size_t>(g)].rank;
    for (int i = 0; i < from.chunks; ++i) {
      const Slot s = memory_.slot(rank, buffer, offset + i);
      access(g, transfer, s, true);
      std::copy_n(from.values.begin() + static_cast<std::ptrdiff_t>(i) * kElements, kElements,
                  s.array->values.begin() + static_cast<std::ptrdiff_t>(s.index * kElements));
      s.array->symbols[s.index] = from.symbols[static_cast<std::size_t>(i)];
    }
  }

  static void reduce_into(Message& accumulator, const Message& other) {
    for (std::size_t i = 0; i < accumulator.values.size(); ++i) accumulator.values[i] += other.values[i];
    for (std::size_t i = 0; i < accumulator.symbols.size(); ++i) {
      accumulator.symbols[i] = combine(accumulator.symbols[i], other.symbols[i]);
    }
  }

  /// One primitive call of a communicating step on chunks [first, first + chunks).
  void call(int g, const LoadedTransfer& transfer, int first, int chunks, Message& incoming, Message& outgoing) {
    outgoing.chunks = chunks;
    switch (transfer.type) {
      case MscclStepType::kSend: load(g, transfer, transfer.srcbuf, transfer.srcoff + first, chunks, outgoing); break;
      case MscclStepType::kRecv: store(g, transfer, transfer.dstbuf, transfer.dstoff + first, incoming); break;
      case MscclStepType::kRecvCopySend:
        store(g, transfer, transfer.dstbuf, transfer.dstoff + first, incoming);
        outgoing = std::move(incoming);
        break;
      case MscclStepType::kRecvReduceSend:
      case MscclStepType::kRecvReduceCopy:
      case MscclStepType::kRecvReduceCopySend: {
        Message local;
        local.chunks = chunks;
        load(g, transfer, transfer.srcbuf, transfer.srcoff + first, chunks, local);
        reduce_into(incoming, local);
        if (transfer.type != MscclStepType::kRecvReduceSend)
          store(g, transfer, transfer.dstbuf, transfer.dstoff + first, incoming);
        if (transfer.type != MscclStepType::kRecvReduceCopy) outgoing = std::move(incoming);
        break;
      }
      default: break;
    }
  }

  /// cpy and (fused) re: all sources are read before the destination is written.
  void local_step(int g, const LoadedTransfer& transfer) {
    Message result;
    result.chunks = transfer.cnt;
    if (transfer.type == MscclStepType::kCopy) {
      load(g, transfer, transfer.srcbuf, transfer.srcoff, transfer.cnt, result);
    } else {
      load(g, transfer, transfer.dstbuf, transfer.dstoff, transfer.cnt, result);
      for (int source : transfer.reduce_srcoffs) {
        Message other;
        other.chunks = transfer.cnt;
        load(g, transfer, transfer.srcbuf, source, transfer.cnt, other);
        reduce_into(result, other);
      }
    }
    store(g, transfer, transfer.dstbuf, transfer.dstoff, result);
  }

  // ---- outcome ----------------------------------------------------------------------------------

  std::string describe_wait(const Runner& runner) const {
    const LoadedTransfer& transfer = runner.tb->transfers[runner.next];
    std::string text = where(runner, transfer) + " ";
    switch (runner.wait) {
      case Wait::kFlag: {
        const Runner& target = runners_[static_cast<std::size_t>(global(runner.rank, runner.wait_tb))];
        text +=
            "waits for tb " + std::to_string(runner.wait_tb) + " to finish step " + std::to_string(runner.wait_step);
        text += target.finished() ? std::string(", which ended without publishing it")
                                  : ", which is at step " + std::to_string(target.tb->transfers[target.next].position);
        break;
      }
      case Wait::kData:
        text += "waits for data from rank " + std::to_string(runner.tb->recv) + " on channel " +
                std::to_string(runner.tb->chan);
        break;
      case Wait::kRoom:
        text += "waits for room to send to rank " + std::to_string(runner.tb->send) + " on channel " +
                std::to_string(runner.tb->chan) + " (" + std::to_string(program_.fifo_calls) + " calls unreceived)";
        break;
      case Wait::kNone: text += "never ran"; break;
    }
    return text;
  }

  void check_finished() {
    std::vector<std::string> stuck;
    for (const Runner& runner : runners_) {
      if (!runner.finished()) stuck.push_back(describe_wait(runner));
    }
    if (!stuck.empty()) {
      problem_ = "deadlock: " + std::to_string(stuck.size()) + " threadblock(s) wait forever (FIFOs of " +
                 std::to_string(program_.fifo_calls) + " calls; " +
                 (m_ == 1 ? std::string("each step of cnt c is c calls, as with large buffers")
                          : "steps split into calls of up to " + std::to_string(m_) + " chunks") +
                 "): ";
      for (std::size_t i = 0; i < stuck.size() && i < 6; ++i) problem_ += (i ? "; " : "") + stuck[i];
      if (stuck.size() > 6) problem_ += "; and " + std::to_string(stuck.size() - 6) + " more";
      return;
    }
    for (const Connection& connection : connections_) {
      if (!connection.fifo.empty()) {
        problem_ = "connection rank " + std::to_string(connection.from) + " -> rank " + std::to_string(connection.to) +
                   " channel " + std::to_string(connection.chan) + ": " + std::to_string(connection.fifo.size()) +
                   " call(s) sent but never received";
        return;
      }
    }
  }

  const LoadedProgram& program_;
  int m_;
  int p_;
  Memory memory_;
  bool races_ = false;
  std::vector<Runner> runners_;
  std::vector<int> first_runner_;
  std::vector<Connection> connections_;
  std::function<void(int)> wake_;
  std::string problem_;
};

}  // namespace

ExecutionOutcome execute_program(const LoadedProgram& loaded, int max_allowed_count, bool check_races) {
  return Interpreter(loaded, max_allowed_count, check_races).run();
}

}  // namespace tenet::msccl_detail
