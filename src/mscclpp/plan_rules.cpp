// SPDX-License-Identifier: MIT
// The rules a plan must follow before it is worth executing (SPEC sections 2-7 and 11, the
// checklist of section 14): what the loader refuses, and what it accepts but runs wrongly
// (references out of range, unpaired channels, limits past which device structs overflow).

#include <map>
#include <string>

#include "plan_model.hpp"

namespace tenet::mscclpp_detail {
namespace {

bool is_packet_op(OpName name) {
  switch (name) {
    case OpName::kCpkt:
    case OpName::kUpkt:
    case OpName::kPpkt:
    case OpName::kRppkt:
    case OpName::kRepkt: return true;
    default: return false;
  }
}

class Rules {
 public:
  explicit Rules(const Plan& plan) : plan_(plan), ranks_(static_cast<int>(plan.gpus.size())) {}

  std::string check() {
    if (!top_level()) return problem_;
    for (int r = 0; r < ranks_ && problem_.empty(); ++r) rank(r);
    if (problem_.empty()) pairing();
    return problem_;
  }

 private:
  bool fail(const std::string& where, const std::string& message) {
    if (problem_.empty()) problem_ = where + ": " + message;
    return false;
  }

  bool top_level() {
    const std::string& c = plan_.collective;
    if (c != "allgather" && c != "reducescatter" && c != "allreduce") {
      return fail("/collective",
                  "'" + c + "' is not a collective tenet verifies; expected allgather, reducescatter or allreduce");
    }
    if (plan_.protocol != "Simple" && plan_.protocol != "LL") {
      return fail("/protocol",
                  "'" + plan_.protocol + "' silently means Simple to the executor; write \"Simple\" or \"LL\"");
    }
    const PlanGpu& first = plan_.gpus.front();
    for (int r = 1; r < ranks_; ++r) {
      const PlanGpu& gpu = plan_.gpus[static_cast<std::size_t>(r)];
      if (gpu.input_chunks != first.input_chunks || gpu.output_chunks != first.output_chunks) {
        return fail("/gpus/" + std::to_string(r),
                    "input_chunks/output_chunks differ from rank 0's; a rank addresses peers with its own chunk size");
      }
    }
    const std::int64_t ni = first.input_chunks;
    const std::int64_t no = first.output_chunks;
    const std::int64_t n = ranks_;
    const bool related =
        (c == "allgather" && no == n * ni) || (c == "reducescatter" && ni == n * no) || (c == "allreduce" && ni == no);
    if (!related) {
      return fail(
          "/gpus/0",
          "input_chunks " + std::to_string(ni) + " and output_chunks " + std::to_string(no) + " do not fit " + c +
              " on " + std::to_string(n) +
              " ranks (allgather: output = ranks x input; reducescatter: input = ranks x output; allreduce: equal)");
    }
    if (plan_.min_message_size > plan_.max_message_size)
      return fail("/min_message_size", "is above max_message_size: no call selects the plan");
    const std::uint64_t unit = plan_.buffer_alignment * static_cast<std::uint64_t>(c == "allgather" ? no : ni);
    const std::uint64_t first_fit = (plan_.min_message_size + unit - 1) / unit * unit;
    if (first_fit > plan_.max_message_size || first_fit < plan_.min_message_size) {
      return fail("/max_message_size", "no message size in [min_message_size, max_message_size] is a multiple of " +
                                           std::to_string(unit) +
                                           " bytes (buffer_alignment x chunks), so the executor refuses every call");
    }
    return true;
  }

  const PlanGpu& gpu(int r) const { return plan_.gpus[static_cast<std::size_t>(r)]; }

  void rank(int r) {
    const PlanGpu& g = gpu(r);
    const std::string at = "/gpus/" + std::to_string(r);
    if (g.has_switch_channels) {
      fail(at + "/channels", "switch (NVLS multicast) channels are not executed by tenet's verifier");
      return;
    }
    for (int pass = 0; pass < 2; ++pass) {
      const std::vector<int>& peers = pass == 0 ? g.memory_peers : g.port_peers;
      for (std::size_t i = 0; i < peers.size(); ++i) {
        if (peers[i] >= ranks_ || peers[i] == r) {
          fail(at + "/channels",
               std::string(pass == 0 ? "memory" : "port") + " channel " + std::to_string(i) + " is connected to rank " +
                   std::to_string(peers[i]) +
                   (peers[i] == r ? ", itself" : ", which does not exist (" + std::to_string(ranks_) + " ranks)"));
          return;
        }
      }
    }
    for (std::size_t b = 0; b < g.remote_buffers.size(); ++b) {
      const RemoteBuffer& buffer = g.remote_buffers[b];
      if (buffer.rank >= ranks_ || buffer.rank == r) {
        fail(at + "/remote_buffers/" + std::to_string(b) + "/rank",
             "rank " + std::to_string(buffer.rank) + " is not a peer of rank " + std::to_string(r));
        return;
      }
      if (!buffer.memory && !buffer.port) {
        fail(at + "/remote_buffers/" + std::to_string(b) + "/access_channel_types",
             "lists neither \"memory\" nor \"port\"");
        return;
      }
    }
    for (std::size_t b = 0; b < g.threadblocks.size() && problem_.empty(); ++b) threadblock(r, static_cast<int>(b));
  }

  void threadblock(int r, int b) {
    const PlanGpu& g = gpu(r);
    const PlanThreadblock& block = g.threadblocks[static_cast<std::size_t>(b)];
    const std::string at = "/gpus/" + std::to_string(r) + "/threadblocks/" + std::to_string(b);
    if (static_cast<int>(block.ops.size()) > kMaxOpsPerThreadblock) {
      fail(at + "/ops", std::to_string(block.ops.size()) + " ops; the executor allows " +
                            std::to_string(kMaxOpsPerThreadblock) + " per threadblock");
      return;
    }
    for (int pass = 0; pass < 2; ++pass) {
      const std::vector<int>& ids = pass == 0 ? block.memory_channels : block.port_channels;
      const std::size_t declared = pass == 0 ? g.memory_peers.size() : g.port_peers.size();
      const char* type = pass == 0 ? "memory" : "port";
      if (static_cast<int>(ids.size()) > kMaxChannelsPerThreadblock) {
        fail(at + "/channels", std::to_string(ids.size()) + " " + type + " channels; a threadblock may use " +
                                   std::to_string(kMaxChannelsPerThreadblock) + " per type");
        return;
      }
      for (int id : ids) {
        if (static_cast<std::size_t>(id) >= declared) {
          fail(at + "/channels", std::string(type) + " channel " + std::to_string(id) + " is not declared (rank " +
                                     std::to_string(r) + " has " + std::to_string(declared) + ")");
          return;
        }
      }
      const std::vector<int>& buffers = pass == 0 ? block.memory_buffers : block.port_buffers;
      if (static_cast<int>(buffers.size()) > kMaxRemoteBuffersPerThreadblock) {
        fail(at + "/remote_buffer_refs", std::to_string(buffers.size()) + " " + type +
                                             " remote buffers; a threadblock may use " +
                                             std::to_string(kMaxRemoteBuffersPerThreadblock) + " per access type");
        return;
      }
      for (int id : buffers) {
        if (static_cast<std::size_t>(id) >= g.remote_buffers.size()) {
          fail(at + "/remote_buffer_refs", "remote buffer " + std::to_string(id) + " is not declared (rank " +
                                               std::to_string(r) + " has " + std::to_string(g.remote_buffers.size()) +
                                               ")");
          return;
        }
        const RemoteBuffer& buffer = g.remote_buffers[static_cast<std::size_t>(id)];
        if (pass == 0 ? !buffer.memory : !buffer.port) {
          fail(at + "/remote_buffer_refs",
               "remote buffer " + std::to_string(id) + " is used with " + type +
                   " access but does not list it (the loader would silently use another buffer)");
          return;
        }
      }
    }
    for (std::size_t o = 0; o < block.ops.size() && problem_.empty(); ++o)
      op(r, block, block.ops[o], at + "/ops/" + std::to_string(o));
  }

  /// Chunk count of `type` on rank `owner`.
  int chunks(int owner, BufferType type) const {
    const PlanGpu& g = gpu(owner);
    switch (type) {
      case BufferType::kInput: return g.input_chunks;
      case BufferType::kOutput: return g.output_chunks;
      case BufferType::kScratch: return g.scratch_chunks;
    }
    return 0;
  }

  /// Checks one entry; `packet` entries address scratch in packet chunks.
  bool entry(int r, const PlanThreadblock& block, const PlanOp& op, const BufferRef& ref, const std::string& at,
             bool packet) {
    int owner = r;
    BufferType type = ref.type;
    if (ref.remote) {
      if (ref.buffer_id < 0) return fail(at, "switch (multicast) entries are not executed by tenet's verifier");
      if (op.channel_type != ChannelType::kMemory && op.channel_type != ChannelType::kPort) {
        return fail(at, "a remote entry needs the op's channel_type memory or port (the loader throws)");
      }
      const std::vector<int>& list =
          op.channel_type == ChannelType::kMemory ? block.memory_buffers : block.port_buffers;
      if (static_cast<std::size_t>(ref.buffer_id) >= list.size()) {
        return fail(at + "/buffer_id", std::to_string(ref.buffer_id) + " is past the threadblock's " +
                                           channel_type_text(op.channel_type) + " remote buffers (" +
                                           std::to_string(list.size()) + ")");
      }
      const RemoteBuffer& buffer =
          gpu(r).remote_buffers[static_cast<std::size_t>(list[static_cast<std::size_t>(ref.buffer_id)])];
      owner = buffer.rank;
      type = buffer.type;
    }
    if (ref.size < 1) return fail(at + "/size", "must be at least 1 chunk");
    if (packet && type != BufferType::kScratch)
      return fail(at, "packet entries must be scratch (packet ops read scratch whatever the type says)");
    const std::int64_t end = static_cast<std::int64_t>(ref.index) + ref.size;
    const char* names[] = {"input", "output", "scratch"};
    if (end > chunks(owner, type)) {
      return fail(at, "chunks [" + std::to_string(ref.index) + ", " + std::to_string(end) + ") are outside rank " +
                          std::to_string(owner) + "'s " + names[static_cast<int>(type)] + " (" +
                          std::to_string(chunks(owner, type)) + " chunks)");
    }
    if (plan_.double_scratch && ref.remote && type == BufferType::kScratch && !packet) {
      return fail(
          at,
          "a non-packet access of a peer's scratch in a plan with use_double_scratch_buffer misses the launch's half");
    }
    return true;
  }

  void op(int r, const PlanThreadblock& block, const PlanOp& op, const std::string& at) {
    const char* name = op_name_text(op.name);
    switch (op.name) {
      case OpName::kGet:
      case OpName::kRespkt:
      case OpName::kRecpkt:
      case OpName::kRecspkt:
      case OpName::kGlres:
      case OpName::kGstore:
      case OpName::kGstorepkt:
      case OpName::kPipeline:
        fail(at + "/name", std::string("operation '") + name + "' is not executed by tenet's verifier");
        return;
      default: break;
    }
    if (is_packet_op(op.name) && !plan_.ll()) {
      fail(at + "/name", std::string("packet operation '") + name +
                             "' in a Simple plan (the scratch is too small for packet offsets)");
      return;
    }
    if (static_cast<int>(op.channel_ids.size()) > kMaxChannelIdsPerOp) {
      fail(at + "/channel_ids",
           std::to_string(op.channel_ids.size()) + " channels; an op may name " + std::to_string(kMaxChannelIdsPerOp));
      return;
    }
    if (static_cast<int>(op.src.size()) > kMaxBuffersPerOp || static_cast<int>(op.dst.size()) > kMaxBuffersPerOp) {
      fail(at, "more than " + std::to_string(kMaxBuffersPerOp) + " src_buff or dst_buff entries; the device op holds " +
                   std::to_string(kMaxBuffersPerOp));
      return;
    }
    if (static_cast<int>(op.semaphore_ids.size()) > kMaxSemaphoreIdsPerOp) {
      fail(at + "/semaphore_ids", std::to_string(op.semaphore_ids.size()) + " semaphores; an op may name " +
                                      std::to_string(kMaxSemaphoreIdsPerOp));
      return;
    }
    for (int id : op.semaphore_ids) {
      if (static_cast<std::size_t>(id) >= gpu(r).semaphores.size()) {
        fail(at + "/semaphore_ids", "semaphore " + std::to_string(id) + " is not declared (rank " + std::to_string(r) +
                                        " has " + std::to_string(gpu(r).semaphores.size()) + ")");
        return;
      }
    }
    if (op.name == OpName::kBarrier && op.barrier_id > kMaxBarrierId) {
      fail(at + "/barrier_id", std::to_string(op.barrier_id) + " is past the device's barriers (0 to " +
                                   std::to_string(kMaxBarrierId) + ")");
      return;
    }
    const bool on_channels = op.channel_type == ChannelType::kMemory || op.channel_type == ChannelType::kPort;
    const std::vector<int>& channel_list =
        op.channel_type == ChannelType::kPort ? block.port_channels : block.memory_channels;
    for (int id : op.channel_ids) {
      if (!on_channels || static_cast<std::size_t>(id) >= channel_list.size()) {
        fail(at + "/channel_ids", "channel " + std::to_string(id) + " is not in the threadblock's " +
                                      channel_type_text(op.channel_type) + " channels (" +
                                      std::to_string(on_channels ? channel_list.size() : 0) + ")");
        return;
      }
    }
    // Shapes: which entries each op takes (SPEC section 8).
    const auto local_only = [](const std::vector<BufferRef>& list) {
      for (const BufferRef& ref : list)
        if (ref.remote) return false;
      return true;
    };
    const auto remote_only = [](const std::vector<BufferRef>& list) {
      for (const BufferRef& ref : list)
        if (!ref.remote) return false;
      return true;
    };
    std::string shape;
    switch (op.name) {
      case OpName::kSignal:
      case OpName::kWait:
      case OpName::kRlxSignal:
      case OpName::kRlxWait:
      case OpName::kFlush:
        if (!on_channels || op.channel_ids.empty())
          shape = "needs channel_type memory or port and at least one channel id";
        if ((op.name == OpName::kRlxWait) && op.channel_type == ChannelType::kPort)
          shape = "rlxwait works on memory channels only";
        break;
      case OpName::kPut:
      case OpName::kPws:
      case OpName::kPwsf:
      case OpName::kPpkt:
        if (!on_channels)
          shape = "needs channel_type memory or port";
        else if (op.src.empty() || op.src.size() != op.dst.size() || !local_only(op.src) || !remote_only(op.dst))
          shape = "needs local src_buff and as many remote dst_buff entries";
        else if (op.channel_type == ChannelType::kPort && op.channel_ids.size() != op.dst.size())
          shape = "on port channels needs one channel id per dst_buff entry";
        break;
      case OpName::kCopy:
        if (op.src.size() != 1 || op.dst.size() != 1 || !local_only(op.src) || !local_only(op.dst))
          shape = "needs one local src_buff and one local dst_buff entry";
        break;
      case OpName::kCpkt:
      case OpName::kUpkt:
        if (op.src.size() != 1 || op.dst.size() != 1 || !local_only(op.src) || !local_only(op.dst))
          shape = "needs one local src_buff and one local dst_buff entry";
        break;
      case OpName::kRe:
      case OpName::kRepkt:
        if (op.src.size() < 2 || op.dst.size() != 1 || !local_only(op.src) || !local_only(op.dst))
          shape = "needs at least two local src_buff entries and one local dst_buff entry";
        break;
      case OpName::kRes:
        if (op.src.empty() || op.dst.empty() || !local_only(op.src) || op.dst[0].remote ||
            op.channel_type != ChannelType::kMemory)
          shape = "needs local src_buff entries, a local dst_buff entry then remote ones, and channel_type memory";
        break;
      case OpName::kRre:
      case OpName::kRres:
        if (op.src.size() < 2 || op.src[0].remote || op.dst.empty() || op.dst[0].remote ||
            op.channel_type != ChannelType::kMemory)
          shape = "needs a local then remote src_buff entries, a local dst_buff entry first, and channel_type memory";
        if (op.name == OpName::kRre && op.dst.size() != 1) shape = "needs exactly one (local) dst_buff entry";
        break;
      case OpName::kRppkt:
        if (!on_channels || op.src.size() != 1 || op.dst.empty() || !local_only(op.src) || !remote_only(op.dst))
          shape = "needs one local src_buff entry, remote dst_buff entries and channel_type memory or port";
        else if (op.channel_type == ChannelType::kPort && op.channel_ids.size() != op.dst.size())
          shape = "on port channels needs one channel id per dst_buff entry";
        break;
      case OpName::kSemAcquire:
      case OpName::kSemRelease:
        if (op.semaphore_ids.empty()) shape = "needs semaphore_ids";
        break;
      default: break;
    }
    if (!shape.empty()) {
      fail(at, std::string("'") + name + "' " + shape);
      return;
    }
    // Entries: in range, and of one size (every handler uses one size for all of them).
    const int size = !op.src.empty() ? op.src[0].size : op.dst.empty() ? 0 : op.dst[0].size;
    for (int side = 0; side < 2; ++side) {
      const std::vector<BufferRef>& list = side == 0 ? op.src : op.dst;
      for (std::size_t e = 0; e < list.size(); ++e) {
        const std::string entry_at = at + (side == 0 ? "/src_buff/" : "/dst_buff/") + std::to_string(e);
        const bool packet = (op.name == OpName::kUpkt && side == 0) ||
                            (op.name == OpName::kRepkt && side == 0 && e > 0) ||
                            (op.name == OpName::kCpkt && side == 1) || (op.name == OpName::kPpkt && side == 1) ||
                            op.name == OpName::kRppkt;
        if (!entry(r, block, op, list[e], entry_at, packet)) return;
        if (list[e].size != size) {
          fail(entry_at + "/size", "is " + std::to_string(list[e].size) + " chunks but the op's first entry has " +
                                       std::to_string(size) + "; every handler uses one size for all entries");
          return;
        }
      }
    }
    // A port put's data goes over the channel it names: that channel's peer must own the destination.
    if ((op.name == OpName::kPut || op.name == OpName::kPws || op.name == OpName::kPwsf || op.name == OpName::kRppkt) &&
        op.channel_type == ChannelType::kPort) {
      for (std::size_t e = 0; e < op.dst.size(); ++e) {
        const int channel = block.port_channels[static_cast<std::size_t>(op.channel_ids[e])];
        const int peer = gpu(r).port_peers[static_cast<std::size_t>(channel)];
        const int buffer = block.port_buffers[static_cast<std::size_t>(op.dst[e].buffer_id)];
        const int owner = gpu(r).remote_buffers[static_cast<std::size_t>(buffer)].rank;
        if (peer != owner) {
          fail(at + "/channel_ids/" + std::to_string(e),
               "port channel " + std::to_string(channel) + " goes to rank " + std::to_string(peer) + " but dst_buff " +
                   std::to_string(e) + " is rank " + std::to_string(owner) + "'s buffer");
          return;
        }
      }
    }
  }

  /// The k-th channel of A to B pairs with the k-th of B to A (SPEC 4.2): counts must agree.
  void pairing() {
    for (int pass = 0; pass < 2 && problem_.empty(); ++pass) {
      std::map<std::pair<int, int>, int> count;
      for (int r = 0; r < ranks_; ++r) {
        for (int peer : pass == 0 ? gpu(r).memory_peers : gpu(r).port_peers) ++count[{r, peer}];
      }
      for (const auto& [pair, n] : count) {
        const auto back = count.find({pair.second, pair.first});
        const int m = back == count.end() ? 0 : back->second;
        if (n != m) {
          fail("/gpus/" + std::to_string(pair.first) + "/channels",
               std::to_string(n) + " " + (pass == 0 ? "memory" : "port") + " channel(s) to rank " +
                   std::to_string(pair.second) + " but rank " + std::to_string(pair.second) + " declares " +
                   std::to_string(m) + " to rank " + std::to_string(pair.first) +
                   "; the k-th channel of a pair connects to the k-th of the other side");
          return;
        }
      }
    }
  }

  const Plan& plan_;
  int ranks_;
  std::string problem_;
};

}  // namespace

std::string check_plan_rules(const Plan& plan) {
  if (plan.gpus.empty()) return "/gpus: no ranks";
  return Rules(plan).check();
}

}  // namespace tenet::mscclpp_detail
