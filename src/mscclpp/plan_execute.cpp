// SPDX-License-Identifier: MIT
// Symbolic execution of a plan (rules checked): every rank's threadblocks run their ops in order,
// round robin, each until it blocks (a wait without a signal to consume, a semaphore at zero, a
// barrier not full, a packet not yet written). Buffer slots hold a chunk identity and the set of
// ranks whose contribution it sums, so a wrong or double reduction is caught where it happens.
//
// Races. Each threadblock carries a vector clock over all threadblocks; its own entry counts the
// nops it passed (data ops between two nops are one segment, since the block's threads may still
// be working on them). A signal or semaphore release carries the sender's clock, a wait or
// acquire merges it at the receiver's next nop (only the waiting threads saw it). Every access
// to a slot must be ordered after the slot's last write and, for a write, after every read since.
// The same clocks say whether a block knows that a peer has started this launch, which it must
// before writing into the peer (SPEC 9.4).
//
// Transfers. With `record`, every put is a transfer; a block's later ops depend on the transfers
// it waited for (memory puts are done by the block's threads, port puts by the proxy and only
// awaited through the signals queued after them).

#include <algorithm>
#include <deque>
#include <string>

#include "plan_model.hpp"

namespace tenet::mscclpp_detail {
namespace {

constexpr std::size_t kMaxRaceBlocks = 1024;
constexpr std::uint64_t kMaxSlotWords = std::uint64_t{1} << 27;

using Deps = std::vector<std::uint32_t>;
using Clock = std::vector<std::uint32_t>;

struct Access {
  int block = -1;
  int op = -1;
  std::uint32_t segment = 0;
};

struct BlockState {
  int rank = 0;
  int local = 0;  ///< position on its rank
  std::size_t pc = 0;
  std::uint32_t segment = 1;
  bool at_barrier = false;
  std::uint64_t barrier_generation = 0;
  Deps deps;
};

struct Endpoint {
  int rank = 0;
  int peer = 0;
  int partner = -1;             ///< the endpoint it is connected to
  std::uint64_t delivered = 0;  ///< signals that arrived here
  std::uint64_t consumed = 0;   ///< waits that returned here
  std::deque<Clock> clocks;
  std::deque<Deps> deps;
  Deps pending_port;  ///< port transfers queued here and not yet covered by a signal
  ChannelType type = ChannelType::kMemory;
  int index = 0;  ///< rank-level channel index
};

struct Semaphore {
  std::int64_t value = 0;
  std::int64_t initial = 0;
  Clock clock;
  std::deque<Deps> deps;
};

struct Barrier {
  int arrived = 0;
  std::uint64_t generation = 0;
  Clock clock;
  Deps deps;
  Clock released_clock;
  Deps released_deps;
};

/// The union of two sets of transfer ids, into the first. Both are nearly always sorted already
/// (ids are handed out in increasing order), and merging them in linear time instead of sorting
/// the whole took a third of a plan's execution.
void merge(Deps& into, const Deps& from) {
  if (from.empty()) return;
  const auto middle = static_cast<std::ptrdiff_t>(into.size());
  into.insert(into.end(), from.begin(), from.end());
  const auto second = into.begin() + middle;
  if (std::is_sorted(into.begin(), second) && std::is_sorted(second, into.end())) {
    std::inplace_merge(into.begin(), second, into.end());
  } else {
    std::sort(into.begin(), into.end());
  }
  into.erase(std::unique(into.begin(), into.end()), into.end());
}

class Executor {
 public:
  Executor(const Plan& plan, bool record) : plan_(plan), record_(record), ranks_(static_cast<int>(plan.gpus.size())) {}

  ExecutionResult run(bool check_result) {
    ExecutionResult result;
    if (!set_up()) {
      result.error = error_;
      return result;
    }
    execute();
    if (error_.empty()) finish_checks();
    if (error_.empty() && check_result) check_collective();
    result.error = error_;
    result.races_checked = races_;
    result.transfers = std::move(transfers_);
    return result;
  }

 private:
  // ---- memory -----------------------------------------------------------------------------------

  int ni() const { return plan_.gpus[0].input_chunks; }
  int no() const { return plan_.gpus[0].output_chunks; }

  bool set_up() {
    words_ = (static_cast<std::size_t>(ranks_) + 63) / 64;
    std::uint64_t total = 0;
    rank_base_.resize(static_cast<std::size_t>(ranks_) + 1);
    for (int r = 0; r < ranks_; ++r) {
      rank_base_[static_cast<std::size_t>(r)] = total;
      const PlanGpu& gpu = plan_.gpus[static_cast<std::size_t>(r)];
      total += static_cast<std::uint64_t>(gpu.input_chunks) + gpu.output_chunks +
               2 * static_cast<std::uint64_t>(gpu.scratch_chunks);
    }
    rank_base_.back() = total;
    if (total * words_ > kMaxSlotWords) {
      error_ = "the plan has " + std::to_string(total) + " buffer chunks on " + std::to_string(ranks_) +
               " ranks, more than tenet's verifier holds";
      return false;
    }
    chunk_.assign(total, -1);
    bits_.assign(total * words_, 0);
    last_write_.assign(total, Access{});
    reads_.assign(total, {});
    packet_writer_.assign(total, ~std::uint32_t{0});
    initial_values();

    for (int r = 0; r < ranks_; ++r) {
      block_base_.push_back(static_cast<int>(blocks_.size()));
      const PlanGpu& gpu = plan_.gpus[static_cast<std::size_t>(r)];
      for (std::size_t b = 0; b < gpu.threadblocks.size(); ++b)
        blocks_.push_back({r, static_cast<int>(b), 0, 1, false, 0, {}});
    }
    block_base_.push_back(static_cast<int>(blocks_.size()));
    races_ = blocks_.size() <= kMaxRaceBlocks;
    const std::size_t n = blocks_.size();
    if (races_) {
      clock_.assign(n * n, 0);
      pending_.assign(n * n, 0);
      for (std::size_t b = 0; b < n; ++b) clock_[b * n + b] = 1;
    }
    connect();
    semaphores_.resize(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) {
      for (std::int64_t value : plan_.gpus[static_cast<std::size_t>(r)].semaphores) {
        Semaphore s;
        s.value = s.initial = value;
        if (races_) s.clock.assign(n, 0);
        semaphores_[static_cast<std::size_t>(r)].push_back(std::move(s));
      }
    }
    barriers_.assign(static_cast<std::size_t>(ranks_) * (kMaxBarrierId + 1), Barrier{});
    if (races_) {
      for (Barrier& barrier : barriers_) barrier.clock.assign(n, 0);
    }
    return true;
  }

  /// Slot of chunk `index` of `type` on rank `rank`, in-place aliases resolved.
  std::uint64_t slot(int rank, BufferType type, int index) const {
    const std::uint64_t base = rank_base_[static_cast<std::size_t>(rank)];
    if (plan_.in_place) {
      if (plan_.collective == "allreduce" && type == BufferType::kOutput) type = BufferType::kInput;
      if (plan_.collective == "allgather" && type == BufferType::kInput) {
        type = BufferType::kOutput;
        index += rank * ni();
      }
      if (plan_.collective == "reducescatter" && type == BufferType::kOutput) {
        type = BufferType::kInput;
        index += rank * no();
      }
    }
    const PlanGpu& gpu = plan_.gpus[static_cast<std::size_t>(rank)];
    switch (type) {
      case BufferType::kInput: return base + static_cast<std::uint64_t>(index);
      case BufferType::kOutput:
        return base + static_cast<std::uint64_t>(gpu.input_chunks) + static_cast<std::uint64_t>(index);
      case BufferType::kScratch:
        return base + static_cast<std::uint64_t>(gpu.input_chunks) + gpu.output_chunks +
               static_cast<std::uint64_t>(index);
    }
    return base;
  }

  /// Packet chunk k of a rank's scratch: a separate slot space (the packet image is twice as large).
  std::uint64_t packet_slot(int rank, int index) const {
    const PlanGpu& gpu = plan_.gpus[static_cast<std::size_t>(rank)];
    return slot(rank, BufferType::kScratch, 0) + static_cast<std::uint64_t>(gpu.scratch_chunks) +
           static_cast<std::uint64_t>(index);
  }

  std::string describe(std::uint64_t s) const {
    const auto it = std::upper_bound(rank_base_.begin(), rank_base_.end(), s);
    const int rank = static_cast<int>(it - rank_base_.begin()) - 1;
    const PlanGpu& gpu = plan_.gpus[static_cast<std::size_t>(rank)];
    std::uint64_t offset = s - rank_base_[static_cast<std::size_t>(rank)];
    const std::string who = "rank " + std::to_string(rank) + "'s ";
    if (offset < static_cast<std::uint64_t>(gpu.input_chunks)) return who + "input chunk " + std::to_string(offset);
    offset -= static_cast<std::uint64_t>(gpu.input_chunks);
    if (offset < static_cast<std::uint64_t>(gpu.output_chunks)) return who + "output chunk " + std::to_string(offset);
    offset -= static_cast<std::uint64_t>(gpu.output_chunks);
    if (offset < static_cast<std::uint64_t>(gpu.scratch_chunks)) return who + "scratch chunk " + std::to_string(offset);
    return who + "scratch packet chunk " + std::to_string(offset - static_cast<std::uint64_t>(gpu.scratch_chunks));
  }

  void set_value(std::uint64_t s, int chunk, int contributor) {
    chunk_[s] = chunk;
    std::fill_n(bits_.begin() + static_cast<std::ptrdiff_t>(s * words_), words_, 0);
    bits_[s * words_ + static_cast<std::size_t>(contributor) / 64] |= std::uint64_t{1} << (contributor % 64);
  }

  void initial_values() {
    for (int r = 0; r < ranks_; ++r) {
      for (int k = 0; k < ni(); ++k) {
        const int chunk = plan_.collective == "allgather" ? r * ni() + k : k;
        set_value(slot(r, BufferType::kInput, k), chunk, r);
      }
    }
  }

  // ---- channels ---------------------------------------------------------------------------------

  void connect() {
    endpoint_base_.resize(static_cast<std::size_t>(ranks_) * 2);
    for (int r = 0; r < ranks_; ++r) {
      const PlanGpu& gpu = plan_.gpus[static_cast<std::size_t>(r)];
      for (int pass = 0; pass < 2; ++pass) {
        endpoint_base_[static_cast<std::size_t>(r) * 2 + static_cast<std::size_t>(pass)] =
            static_cast<int>(endpoints_.size());
        const std::vector<int>& peers = pass == 0 ? gpu.memory_peers : gpu.port_peers;
        for (std::size_t i = 0; i < peers.size(); ++i) {
          Endpoint endpoint;
          endpoint.rank = r;
          endpoint.peer = peers[i];
          endpoint.type = pass == 0 ? ChannelType::kMemory : ChannelType::kPort;
          endpoint.index = static_cast<int>(i);
          endpoints_.push_back(endpoint);
        }
      }
    }
    // The k-th channel of A to B is connected to the k-th of B to A (counts checked by the rules).
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<std::pair<std::pair<int, int>, int>> keyed;  // ((rank, peer), endpoint) in declaration order
      for (std::size_t e = 0; e < endpoints_.size(); ++e) {
        const Endpoint& endpoint = endpoints_[e];
        if ((endpoint.type == ChannelType::kMemory) != (pass == 0)) continue;
        keyed.push_back({{endpoint.rank, endpoint.peer}, static_cast<int>(e)});
      }
      std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t i = 0; i < keyed.size();) {
        std::size_t j = i;
        while (j < keyed.size() && keyed[j].first == keyed[i].first) ++j;
        const auto [a, b] = keyed[i].first;
        if (a < b) {
          auto first = std::lower_bound(keyed.begin(), keyed.end(), std::make_pair(std::make_pair(b, a), -1),
                                        [](const auto& x, const auto& y) { return x.first < y.first; });
          for (std::size_t k = 0; k < j - i && first + static_cast<std::ptrdiff_t>(k) != keyed.end(); ++k) {
            const auto& other = *(first + static_cast<std::ptrdiff_t>(k));
            if (other.first != std::make_pair(b, a)) break;
            endpoints_[static_cast<std::size_t>(keyed[i + k].second)].partner = other.second;
            endpoints_[static_cast<std::size_t>(other.second)].partner = keyed[i + k].second;
          }
        }
        i = j;
      }
    }
  }

  /// The endpoint a block's op names by its position in the block's channel list.
  int endpoint_of(const BlockState& block, ChannelType type, int position) const {
    const PlanThreadblock& tb = threadblock(block);
    const int index = type == ChannelType::kPort ? tb.port_channels[static_cast<std::size_t>(position)]
                                                 : tb.memory_channels[static_cast<std::size_t>(position)];
    return endpoint_base_[static_cast<std::size_t>(block.rank) * 2 + (type == ChannelType::kPort ? 1 : 0)] + index;
  }

  const PlanThreadblock& threadblock(const BlockState& block) const {
    return plan_.gpus[static_cast<std::size_t>(block.rank)].threadblocks[static_cast<std::size_t>(block.local)];
  }

  std::string where(const BlockState& block) const {
    return "/gpus/" + std::to_string(block.rank) + "/threadblocks/" + std::to_string(block.local) + "/ops/" +
           std::to_string(block.pc);
  }

  std::string who(int block_id, int op) const {
    const BlockState& block = blocks_[static_cast<std::size_t>(block_id)];
    return "rank " + std::to_string(block.rank) + " threadblock " + std::to_string(block.local) + " op " +
           std::to_string(op);
  }

  // ---- clocks -----------------------------------------------------------------------------------

  std::size_t n() const { return blocks_.size(); }
  std::uint32_t* clock_of(int b) { return clock_.data() + static_cast<std::size_t>(b) * n(); }
  std::uint32_t* pending_of(int b) { return pending_.data() + static_cast<std::size_t>(b) * n(); }

  Clock snapshot(int b, bool port) {
    if (!races_) return {};
    Clock clock(clock_of(b), clock_of(b) + n());
    // A port signal is queued after the puts of the same thread, so it covers the current segment.
    if (port) clock[static_cast<std::size_t>(b)] = blocks_[static_cast<std::size_t>(b)].segment + 1;
    return clock;
  }

  void receive(int b, const Clock& clock) {
    if (!races_ || clock.empty()) return;
    std::uint32_t* pending = pending_of(b);
    for (std::size_t i = 0; i < n(); ++i) pending[i] = std::max(pending[i], clock[i]);
  }

  void nop(int b) {
    BlockState& block = blocks_[static_cast<std::size_t>(b)];
    ++block.segment;
    if (!races_) return;
    std::uint32_t* clock = clock_of(b);
    const std::uint32_t* pending = pending_of(b);
    for (std::size_t i = 0; i < n(); ++i) clock[i] = std::max(clock[i], pending[i]);
    clock[static_cast<std::size_t>(b)] = block.segment;
  }

  bool ordered(int b, const Access& previous) {
    if (previous.block < 0) return true;
    const BlockState& block = blocks_[static_cast<std::size_t>(b)];
    if (previous.block == b) return previous.op == static_cast<int>(block.pc) || previous.segment < block.segment;
    return clock_of(b)[static_cast<std::size_t>(previous.block)] > previous.segment;
  }

  bool access(int b, std::uint64_t s, bool write) {
    if (!races_) return true;
    const BlockState& block = blocks_[static_cast<std::size_t>(b)];
    const Access here{b, static_cast<int>(block.pc), block.segment};
    auto race = [&](const Access& other, const char* what) {
      error_ = "race: " + who(b, here.op) + " (" + where(block) + ") " + (write ? "writes " : "reads ") + describe(s) +
               " while " + who(other.block, other.op) + " may still " + what +
               " it; nothing orders the two (a nop, a signal and wait, a semaphore)";
      return false;
    };
    if (!ordered(b, last_write_[s])) return race(last_write_[s], "write");
    std::vector<Access>& reads = reads_[s];
    if (write) {
      for (const Access& read : reads) {
        if (!ordered(b, read)) return race(read, "read");
      }
      reads.clear();
      last_write_[s] = here;
    } else {
      if (!reads.empty() && reads.back().block == b) {
        reads.back() = here;
      } else if (std::find_if(reads.begin(), reads.end(), [b](const Access& a) { return a.block == b; }) ==
                 reads.end()) {
        reads.push_back(here);
      } else {
        for (Access& read : reads) {
          if (read.block == b) read = here;
        }
      }
    }
    return true;
  }

  /// SPEC 9.4: a block may write into a peer only once it knows the peer started this launch.
  bool knows_started(int b, int rank) {
    if (!races_) return true;
    const std::uint32_t* clock = clock_of(b);
    for (int x = block_base_[static_cast<std::size_t>(rank)]; x < block_base_[static_cast<std::size_t>(rank) + 1];
         ++x) {
      if (clock[x] >= 1) return true;
    }
    return false;
  }

  // ---- ops --------------------------------------------------------------------------------------

  struct Range {
    int rank = 0;
    BufferType type = BufferType::kInput;
    int index = 0;
    int size = 0;
  };

  Range resolve(const BlockState& block, ChannelType channel_type, const BufferRef& ref) const {
    if (!ref.remote) return {block.rank, ref.type, ref.index, ref.size};
    const PlanThreadblock& tb = threadblock(block);
    const std::vector<int>& list = channel_type == ChannelType::kPort ? tb.port_buffers : tb.memory_buffers;
    const RemoteBuffer& buffer =
        plan_.gpus[static_cast<std::size_t>(block.rank)]
            .remote_buffers[static_cast<std::size_t>(list[static_cast<std::size_t>(ref.buffer_id)])];
    return {buffer.rank, buffer.type, ref.index, ref.size};
  }

  std::uint64_t range_slot(const Range& range, int k, bool packet) const {
    return packet ? packet_slot(range.rank, range.index + k) : slot(range.rank, range.type, range.index + k);
  }

  /// dst[k] = sum of srcs[k] (a copy when there is one source), for every chunk k of the ranges.
  bool combine(int b, const std::vector<Range>& srcs, const std::vector<bool>& src_packet,
               const std::vector<Range>& dsts, const std::vector<bool>& dst_packet) {
    const BlockState& block = blocks_[static_cast<std::size_t>(b)];
    const int size = srcs.front().size;
    std::vector<std::uint64_t> sum(words_);
    for (int k = 0; k < size; ++k) {
      int chunk = -1;
      std::fill(sum.begin(), sum.end(), 0);
      for (std::size_t i = 0; i < srcs.size(); ++i) {
        const std::uint64_t s = range_slot(srcs[i], k, src_packet[i]);
        // A packet carries its own flag: the reader spins until it is there, so it needs no ordering.
        if (!src_packet[i] && !access(b, s, false)) return false;
        if (srcs.size() == 1) {
          chunk = chunk_[s];
          std::copy_n(bits_.begin() + static_cast<std::ptrdiff_t>(s * words_), words_, sum.begin());
          break;
        }
        if (chunk_[s] < 0) {
          error_ = who(b, static_cast<int>(block.pc)) + " (" + where(block) + ") reduces " + describe(s) +
                   ", which holds nothing";
          return false;
        }
        if (i > 0 && chunk_[s] != chunk) {
          error_ = who(b, static_cast<int>(block.pc)) + " (" + where(block) + ") adds chunk " +
                   std::to_string(chunk_[s]) + " (" + describe(s) + ") to chunk " + std::to_string(chunk);
          return false;
        }
        chunk = chunk_[s];
        for (std::size_t w = 0; w < words_; ++w) {
          const std::uint64_t word = bits_[s * words_ + w];
          if ((sum[w] & word) != 0) {
            const int twice = static_cast<int>(w * 64) + __builtin_ctzll(sum[w] & word);
            error_ = who(b, static_cast<int>(block.pc)) + " (" + where(block) + ") adds rank " + std::to_string(twice) +
                     "'s contribution to chunk " + std::to_string(chunk) + " twice";
            return false;
          }
          sum[w] |= word;
        }
      }
      for (std::size_t i = 0; i < dsts.size(); ++i) {
        if (dsts[i].rank != block.rank && !knows_started(b, dsts[i].rank)) {
          error_ = who(b, static_cast<int>(block.pc)) + " (" + where(block) + ") writes into rank " +
                   std::to_string(dsts[i].rank) +
                   " before it knows that rank started this launch; the previous launch may still be using the buffer "
                   "(SPEC 9.4: "
                   "signal and wait once before the first write)";
          return false;
        }
        const std::uint64_t d = range_slot(dsts[i], k, dst_packet[i]);
        if (dst_packet[i] && chunk_[d] >= 0 &&
            (chunk_[d] != chunk ||
             !std::equal(sum.begin(), sum.end(), bits_.begin() + static_cast<std::ptrdiff_t>(d * words_)))) {
          error_ = who(b, static_cast<int>(block.pc)) + " (" + where(block) + ") writes other data into " +
                   describe(d) + ", which already holds packets of this launch; a reader cannot tell the two apart";
          return false;
        }
        if (!dst_packet[i] && !access(b, d, true)) return false;
        chunk_[d] = chunk;
        std::copy(sum.begin(), sum.end(), bits_.begin() + static_cast<std::ptrdiff_t>(d * words_));
      }
    }
    return true;
  }

  std::uint32_t record_transfer(const BlockState& block, const Range& src_owner, const Range& dst) {
    ObservedTransfer transfer;
    transfer.src_rank = src_owner.rank;
    transfer.dst_rank = dst.rank;
    transfer.first_chunk = dst.index;
    transfer.chunks = dst.size;
    transfer.deps = block.deps;
    transfers_.push_back(std::move(transfer));
    return static_cast<std::uint32_t>(transfers_.size() - 1);
  }

  /// Packets a packet op reads: all written this launch? (else the op spins.)
  bool packets_ready(const Range& range) const {
    for (int k = 0; k < range.size; ++k) {
      if (chunk_[packet_slot(range.rank, range.index + k)] < 0 &&
          packet_writer_[packet_slot(range.rank, range.index + k)] == ~std::uint32_t{0}) {
        return false;
      }
    }
    return true;
  }

  void packet_deps(BlockState& block, const Range& range) {
    if (!record_) return;
    Deps writers;
    for (int k = 0; k < range.size; ++k) {
      const std::uint32_t writer = packet_writer_[packet_slot(range.rank, range.index + k)];
      if (writer != ~std::uint32_t{0}) writers.push_back(writer);
    }
    merge(block.deps, writers);
  }

  /// Runs the block's current op; false when it blocks (or on an error, with error_ set).
  bool step(int b) {
    BlockState& block = blocks_[static_cast<std::size_t>(b)];
    const PlanOp& op = threadblock(block).ops[block.pc];
    const ChannelType type = op.channel_type;
    switch (op.name) {
      case OpName::kNop:
      case OpName::kFlush: nop(b); break;
      case OpName::kBarrier: {
        Barrier& barrier = barriers_[static_cast<std::size_t>(block.rank) * (kMaxBarrierId + 1) +
                                     static_cast<std::size_t>(op.barrier_id)];
        if (!block.at_barrier) {
          nop(b);
          block.at_barrier = true;
          block.barrier_generation = barrier.generation;
          if (races_) receive_into(barrier.clock, snapshot(b, false));
          merge(barrier.deps, block.deps);
          if (++barrier.arrived == op.num_threadblocks) {
            barrier.released_clock = barrier.clock;
            barrier.released_deps = barrier.deps;
            barrier.arrived = 0;
            barrier.deps.clear();
            if (races_) std::fill(barrier.clock.begin(), barrier.clock.end(), 0);
            ++barrier.generation;
          }
        }
        if (barrier.generation == block.barrier_generation) return false;
        block.at_barrier = false;
        receive(b, barrier.released_clock);
        merge(block.deps, barrier.released_deps);
        nop(b);
        break;
      }
      case OpName::kSignal:
      case OpName::kRlxSignal:
        for (int id : op.channel_ids) signal(b, endpoint_of(block, type, id));
        break;
      case OpName::kWait:
      case OpName::kRlxWait: {
        for (int id : op.channel_ids) {
          const Endpoint& endpoint = endpoints_[static_cast<std::size_t>(endpoint_of(block, type, id))];
          if (endpoint.delivered <= endpoint.consumed) return false;
        }
        for (int id : op.channel_ids) {
          Endpoint& endpoint = endpoints_[static_cast<std::size_t>(endpoint_of(block, type, id))];
          ++endpoint.consumed;
          if (!endpoint.clocks.empty()) {
            receive(b, endpoint.clocks.front());
            endpoint.clocks.pop_front();
          }
          if (!endpoint.deps.empty()) {
            merge(block.deps, endpoint.deps.front());
            endpoint.deps.pop_front();
          }
        }
        break;
      }
      case OpName::kSemAcquire: {
        // Each semaphore named must hold as many as it is named (an op names at most 16): not a
        // pass over all of the rank's semaphores, which a tree's plan has thousands of.
        for (int id : op.semaphore_ids) {
          const auto need = std::count(op.semaphore_ids.begin(), op.semaphore_ids.end(), id);
          if (semaphores_[static_cast<std::size_t>(block.rank)][static_cast<std::size_t>(id)].value < need)
            return false;
        }
        for (int id : op.semaphore_ids) {
          Semaphore& semaphore = semaphores_[static_cast<std::size_t>(block.rank)][static_cast<std::size_t>(id)];
          --semaphore.value;
          receive(b, semaphore.clock);
          if (!semaphore.deps.empty()) {
            merge(block.deps, semaphore.deps.front());
            semaphore.deps.pop_front();
          }
        }
        break;
      }
      case OpName::kSemRelease:
        for (int id : op.semaphore_ids) {
          Semaphore& semaphore = semaphores_[static_cast<std::size_t>(block.rank)][static_cast<std::size_t>(id)];
          ++semaphore.value;
          if (races_) receive_into(semaphore.clock, snapshot(b, false));
          if (record_) semaphore.deps.push_back(block.deps);
        }
        break;
      case OpName::kCopy:
      case OpName::kRe:
      case OpName::kRes:
      case OpName::kRre:
      case OpName::kRres:
      case OpName::kCpkt:
      case OpName::kUpkt:
      case OpName::kRepkt:
        if (!local_or_memory_data(b, op)) return false;
        break;
      case OpName::kPut:
      case OpName::kPws:
      case OpName::kPwsf:
      case OpName::kPpkt:
      case OpName::kRppkt:
        if (!put(b, op)) return false;
        break;
      default:
        error_ = who(b, static_cast<int>(block.pc)) + " (" + where(block) + "): operation '" + op_name_text(op.name) +
                 "' is not executed by tenet's verifier";
        return false;
    }
    ++block.pc;
    return true;
  }

  void receive_into(Clock& into, const Clock& from) {
    for (std::size_t i = 0; i < into.size() && i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
  }

  void signal(int b, int e) {
    Endpoint& endpoint = endpoints_[static_cast<std::size_t>(e)];
    BlockState& block = blocks_[static_cast<std::size_t>(b)];
    if (endpoint.partner < 0) return;  // unpaired: the rules refuse such plans
    Endpoint& partner = endpoints_[static_cast<std::size_t>(endpoint.partner)];
    ++partner.delivered;
    if (races_) partner.clocks.push_back(snapshot(b, endpoint.type == ChannelType::kPort));
    if (record_) {
      Deps deps = block.deps;
      merge(deps, endpoint.pending_port);
      endpoint.pending_port.clear();
      partner.deps.push_back(std::move(deps));
    }
  }

  std::vector<bool> packet_flags(const PlanOp& op, bool src_side) const {
    const std::vector<BufferRef>& list = src_side ? op.src : op.dst;
    std::vector<bool> flags(list.size(), false);
    for (std::size_t e = 0; e < list.size(); ++e) {
      flags[e] = (op.name == OpName::kUpkt && src_side) || (op.name == OpName::kRepkt && src_side && e > 0) ||
                 (op.name == OpName::kCpkt && !src_side) || (op.name == OpName::kPpkt && !src_side) ||
                 op.name == OpName::kRppkt;
    }
    return flags;
  }

  /// copy, re, res, rre, rres, cpkt, upkt, repkt: one combined value per chunk, written to every dst.
  bool local_or_memory_data(int b, const PlanOp& op) {
    BlockState& block = blocks_[static_cast<std::size_t>(b)];
    std::vector<Range> srcs;
    std::vector<Range> dsts;
    for (const BufferRef& ref : op.src) srcs.push_back(resolve(block, op.channel_type, ref));
    for (const BufferRef& ref : op.dst) dsts.push_back(resolve(block, op.channel_type, ref));
    const std::vector<bool> src_packet = packet_flags(op, true);
    for (std::size_t i = 0; i < srcs.size(); ++i) {
      if (src_packet[i] && !packets_ready(srcs[i])) return false;
    }
    for (std::size_t i = 0; i < srcs.size(); ++i) {
      if (src_packet[i]) packet_deps(block, srcs[i]);
    }
    std::vector<Range> remote_reads;
    for (std::size_t i = 1; i < srcs.size(); ++i) {
      if (op.src[i].remote) remote_reads.push_back(srcs[i]);
    }
    if (!combine(b, srcs, src_packet, dsts, packet_flags(op, false))) return false;
    if (record_) {
      // Remote reads (rre, rres) and remote writes (res, rres) move data over the link.
      Deps done;
      for (const Range& range : remote_reads) {
        Range dst = dsts.front();
        done.push_back(record_transfer(block, range, dst));
      }
      for (std::size_t i = 1; i < dsts.size(); ++i) {
        if (op.dst[i].remote) done.push_back(record_transfer(block, dsts.front(), dsts[i]));
      }
      if (!done.empty()) block.deps = done;
    }
    return true;
  }

  /// put, pws, pwsf, ppkt, rppkt.
  bool put(int b, const PlanOp& op) {
    BlockState& block = blocks_[static_cast<std::size_t>(b)];
    const bool port = op.channel_type == ChannelType::kPort;
    const bool rppkt = op.name == OpName::kRppkt;
    Range first_src = resolve(block, op.channel_type, op.src[0]);
    if (rppkt) {
      if (!packets_ready(first_src)) return false;
      packet_deps(block, first_src);
    }
    Deps done;
    for (std::size_t e = 0; e < op.dst.size(); ++e) {
      // The memory put handler reads every source from the buffer type of the first (SPEC 8).
      Range src = resolve(block, op.channel_type, rppkt ? op.src[0] : op.src[e]);
      if (!port && !rppkt) src.type = first_src.type;
      const Range dst = resolve(block, op.channel_type, op.dst[e]);
      const bool packet_dst = op.name == OpName::kPpkt || rppkt;
      if (!combine(b, {src}, {rppkt}, {dst}, {packet_dst})) return false;
      if (record_ || packet_dst) {
        const std::uint32_t id = record_ ? record_transfer(block, src, dst) : 0;
        if (packet_dst) {
          for (int k = 0; k < dst.size; ++k) packet_writer_[packet_slot(dst.rank, dst.index + k)] = id;
        }
        if (record_) {
          if (port) {
            Endpoint& endpoint =
                endpoints_[static_cast<std::size_t>(endpoint_of(block, ChannelType::kPort, op.channel_ids[e]))];
            endpoint.pending_port.push_back(id);
          }
          done.push_back(id);
        }
      }
      if ((op.name == OpName::kPws || op.name == OpName::kPwsf) && port) {
        signal(b, endpoint_of(block, ChannelType::kPort, op.channel_ids[e]));
      }
    }
    // The block's threads do memory puts; a port put is the proxy's, awaited only by pwsf.
    if (record_ && (!port || op.name == OpName::kPwsf)) block.deps = done;
    return true;
  }

  // ---- the run ----------------------------------------------------------------------------------

  void execute() {
    bool progress = true;
    while (progress && error_.empty()) {
      progress = false;
      for (std::size_t b = 0; b < blocks_.size() && error_.empty(); ++b) {
        BlockState& block = blocks_[b];
        const std::size_t ops = threadblock(block).ops.size();
        while (block.pc < ops && step(static_cast<int>(b))) progress = true;
      }
    }
    if (!error_.empty()) return;
    std::string stuck;
    int listed = 0;
    int blocked = 0;
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      const BlockState& block = blocks_[b];
      if (block.pc >= threadblock(block).ops.size()) continue;
      ++blocked;
      if (listed++ >= 3) continue;
      const PlanOp& op = threadblock(block).ops[block.pc];
      if (!stuck.empty()) stuck += "; ";
      stuck += who(static_cast<int>(b), static_cast<int>(block.pc)) + " (" + where(block) + ") waits forever in '" +
               op_name_text(op.name) + "'";
      if ((op.name == OpName::kWait || op.name == OpName::kRlxWait) && !op.channel_ids.empty()) {
        const Endpoint& endpoint =
            endpoints_[static_cast<std::size_t>(endpoint_of(block, op.channel_type, op.channel_ids[0]))];
        stuck += " on " + std::string(channel_type_text(endpoint.type)) + " channel " + std::to_string(endpoint.index) +
                 " (to rank " + std::to_string(endpoint.peer) + ") for a signal that never comes";
      }
    }
    if (blocked > 0) {
      error_ = "deadlock: " + stuck;
      if (blocked > 3) error_ += "; " + std::to_string(blocked - 3) + " more threadblock(s) blocked";
    }
  }

  void finish_checks() {
    for (const Endpoint& endpoint : endpoints_) {
      if (endpoint.delivered > endpoint.consumed) {
        error_ = "unpaired signal: rank " + std::to_string(endpoint.rank) + "'s " + channel_type_text(endpoint.type) +
                 " channel " + std::to_string(endpoint.index) + " (to rank " + std::to_string(endpoint.peer) +
                 ") receives " + std::to_string(endpoint.delivered) + " signal(s) per launch but waits " +
                 std::to_string(endpoint.consumed) + " time(s); the surplus leaks into the next launch";
        return;
      }
    }
    for (int r = 0; r < ranks_; ++r) {
      const auto& list = semaphores_[static_cast<std::size_t>(r)];
      for (std::size_t s = 0; s < list.size(); ++s) {
        if (list[s].value != list[s].initial) {
          error_ = "rank " + std::to_string(r) + "'s semaphore " + std::to_string(s) + " ends a launch at " +
                   std::to_string(list[s].value) + " instead of its initial " + std::to_string(list[s].initial) +
                   "; releases and acquires must balance per launch";
          return;
        }
      }
    }
  }

  void check_collective() {
    std::vector<std::uint64_t> all(words_, 0);
    for (int r = 0; r < ranks_; ++r) all[static_cast<std::size_t>(r) / 64] |= std::uint64_t{1} << (r % 64);
    for (int r = 0; r < ranks_ && error_.empty(); ++r) {
      for (int k = 0; k < no(); ++k) {
        int chunk = k;
        std::vector<std::uint64_t> expected = all;
        if (plan_.collective == "allgather") {
          std::fill(expected.begin(), expected.end(), 0);
          expected[static_cast<std::size_t>(k / ni()) / 64] |= std::uint64_t{1} << ((k / ni()) % 64);
        } else if (plan_.collective == "reducescatter") {
          chunk = r * no() + k;
        }
        const std::uint64_t s = slot(r, BufferType::kOutput, k);
        const bool same = chunk_[s] == chunk && std::equal(expected.begin(), expected.end(),
                                                           bits_.begin() + static_cast<std::ptrdiff_t>(s * words_));
        if (same) continue;
        std::string held = "nothing";
        if (chunk_[s] >= 0) {
          int count = 0;
          for (std::size_t w = 0; w < words_; ++w) count += __builtin_popcountll(bits_[s * words_ + w]);
          held = "chunk " + std::to_string(chunk_[s]) + " with " + std::to_string(count) + " contribution(s)";
        }
        int want = 0;
        for (std::uint64_t word : expected) want += __builtin_popcountll(word);
        error_ = "wrong result: rank " + std::to_string(r) + "'s output chunk " + std::to_string(k) + " holds " + held +
                 " at the end; " + plan_.collective + " needs chunk " + std::to_string(chunk) + " with " +
                 std::to_string(want) + " contribution(s)";
        return;
      }
    }
  }

  const Plan& plan_;
  bool record_;
  int ranks_;
  std::size_t words_ = 1;
  bool races_ = false;
  std::string error_;
  std::vector<std::uint64_t> rank_base_;
  std::vector<int> chunk_;
  std::vector<std::uint64_t> bits_;
  std::vector<Access> last_write_;
  std::vector<std::vector<Access>> reads_;
  std::vector<std::uint32_t> packet_writer_;
  std::vector<BlockState> blocks_;
  std::vector<int> block_base_;
  std::vector<std::uint32_t> clock_;
  std::vector<std::uint32_t> pending_;
  std::vector<Endpoint> endpoints_;
  std::vector<int> endpoint_base_;
  std::vector<std::vector<Semaphore>> semaphores_;
  std::vector<Barrier> barriers_;
  std::vector<ObservedTransfer> transfers_;
};

}  // namespace

ExecutionResult execute_plan(const Plan& plan, bool check_result, bool record) {
  return Executor(plan, record).run(check_result);
}

}  // namespace tenet::mscclpp_detail
