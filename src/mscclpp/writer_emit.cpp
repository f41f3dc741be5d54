// SPDX-License-Identifier: MIT
// Layout -> Plan: channels, remote buffers, semaphores and the ops of every threadblock.
//
// Per group, in the block's order:
//   acquire   sem_acquire of every semaphore a group of another block released for it, then nop
//   send      Simple memory: put (one per run), nop, signal.   Simple port: put ..., pwsf (the put
//             that signals and waits for the proxy, so the source may be reused).
//             LL memory: ppkt, nop.   LL port: cpkt into the own scratch, nop, rppkt.
//   receive   Simple: wait, nop, then (landed in scratch) copy or re into place, nop.
//             LL: upkt or repkt (they wait for the packets), nop.
//   release   sem_release for every block that waits for this group.
// Every block starts with the handshake of SPEC 9.4: a relaxed signal to each peer it receives
// from ("my buffers may be written") and a relaxed wait from each peer it sends to, then a nop.

#include <algorithm>
#include <map>

#include "writer.hpp"

namespace tenet::mscclpp_detail {
namespace {

const char* collective_text(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather: return "allgather";
    case CollectiveKind::kReduceScatter: return "reducescatter";
    case CollectiveKind::kAllReduce: return "allreduce";
  }
  return "";
}

BufferRef local(const Loc& loc, int count) { return {false, loc.type, -1, loc.index, count}; }

PlanOp simple(OpName name) {
  PlanOp op;
  op.name = name;
  return op;
}

PlanOp on_channel(OpName name, ChannelType type, int position) {
  PlanOp op;
  op.name = name;
  op.channel_type = type;
  op.has_channel_type = true;
  op.channel_ids = {position};
  return op;
}

class Emitter {
 public:
  Emitter(const Layout& layout, const MscclppOptions& options, const std::string& name) : layout_(layout) {
    plan_.name = name;
    plan_.collective = collective_text(layout.kind);
    plan_.protocol = layout.ll ? "LL" : "Simple";
    plan_.in_place = layout.in_place;
    plan_.double_scratch = layout.ll;
    plan_.min_message_size = options.min_message_size;
    plan_.max_message_size = options.max_message_size;
  }

  Plan run() {
    plan_.gpus.resize(static_cast<std::size_t>(layout_.ranks));
    for (int r = 0; r < layout_.ranks; ++r) rank(r);
    return std::move(plan_);
  }

 private:
  const Connection& connection(int c) const { return layout_.connections[static_cast<std::size_t>(c)]; }
  ChannelType type_of(int c) const { return connection(c).port ? ChannelType::kPort : ChannelType::kMemory; }
  int peer_of(int c, int r) const { return connection(c).src == r ? connection(c).dst : connection(c).src; }

  void rank(int r) {
    PlanGpu& gpu = plan_.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = layout_.input_chunks;
    gpu.output_chunks = layout_.output_chunks;
    gpu.scratch_chunks = layout_.scratch_chunks[static_cast<std::size_t>(r)];
    const std::vector<LayoutBlock>& blocks = layout_.blocks[static_cast<std::size_t>(r)];
    declare_channels(r, gpu, blocks);
    make_semaphores(r, gpu, blocks);
    remote_ids_.clear();
    for (std::size_t b = 0; b < blocks.size(); ++b)
      gpu.threadblocks.push_back(threadblock(r, gpu, blocks, static_cast<int>(b)));
  }

  /// Peers in the order the blocks first use them; per peer, its connections in one order that both
  /// ends share (the layout's), so the k-th channel of each end is the same connection.
  void declare_channels(int r, PlanGpu& gpu, const std::vector<LayoutBlock>& blocks) {
    std::map<int, std::vector<int>> by_peer;
    for (std::size_t c = 0; c < layout_.connections.size(); ++c) {
      const Connection& conn = layout_.connections[c];
      if (conn.src == r || conn.dst == r) by_peer[peer_of(static_cast<int>(c), r)].push_back(static_cast<int>(c));
    }
    channel_index_.clear();
    std::map<int, bool> declared;
    for (const LayoutBlock& block : blocks) {
      for (int c : {block.send, block.recv}) {
        if (c < 0) continue;
        const int peer = peer_of(c, r);
        if (declared[peer]) continue;
        declared[peer] = true;
        for (int each : by_peer[peer]) {
          std::vector<int>& peers = connection(each).port ? gpu.port_peers : gpu.memory_peers;
          channel_index_[each] = static_cast<int>(peers.size());
          peers.push_back(peer);
        }
      }
    }
  }

  /// One semaphore per (producer block, consumer block) that must be ordered; each producer group a
  /// consumer needs releases it once, and the consumer acquires up to the count it needs.
  void make_semaphores(int r, PlanGpu& gpu, const std::vector<LayoutBlock>& blocks) {
    position_.clear();
    for (const LayoutBlock& block : blocks) {
      for (std::size_t i = 0; i < block.groups.size(); ++i) position_[block.groups[i]] = static_cast<int>(i);
    }
    std::map<std::pair<int, int>, std::vector<int>> needed;  // (producer, consumer) -> producer groups
    for (const LayoutBlock& block : blocks) {
      for (int g : block.groups) {
        const Group& group = layout_.groups[static_cast<std::size_t>(g)];
        for (int from : group.after) {
          needed[{layout_.groups[static_cast<std::size_t>(from)].block, group.block}].push_back(from);
        }
      }
    }
    semaphore_of_.clear();
    releases_.clear();
    release_rank_.clear();
    for (auto& [pair, producers] : needed) {
      std::sort(producers.begin(), producers.end(), [&](int a, int b) { return position_[a] < position_[b]; });
      producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
      const int id = static_cast<int>(gpu.semaphores.size());
      gpu.semaphores.push_back(0);
      semaphore_of_[pair] = id;
      for (std::size_t i = 0; i < producers.size(); ++i) {
        releases_[producers[i]].push_back(id);
        release_rank_[{producers[i], id}] = static_cast<int>(i) + 1;
      }
    }
    (void)r;
  }

  int remote_buffer(PlanGpu& gpu, int peer, BufferType type, bool port) {
    const auto key = std::make_tuple(peer, static_cast<int>(type), port);
    auto it = remote_ids_.find(key);
    if (it != remote_ids_.end()) return it->second;
    RemoteBuffer buffer;
    buffer.rank = peer;
    buffer.type = type;
    buffer.memory = !port;
    buffer.port = port;
    gpu.remote_buffers.push_back(buffer);
    const int id = static_cast<int>(gpu.remote_buffers.size()) - 1;
    remote_ids_[key] = id;
    return id;
  }

  /// Position of remote buffer `id` in the block's list for its access type.
  static int block_buffer(PlanThreadblock& block, int id, bool port) {
    std::vector<int>& list = port ? block.port_buffers : block.memory_buffers;
    auto it = std::find(list.begin(), list.end(), id);
    if (it != list.end()) return static_cast<int>(it - list.begin());
    list.push_back(id);
    return static_cast<int>(list.size()) - 1;
  }

  static void add_semaphore_ops(PlanThreadblock& block, OpName name, const std::vector<int>& ids) {
    for (std::size_t first = 0; first < ids.size(); first += kMaxSemaphoreIdsPerOp) {
      PlanOp op = simple(name);
      op.semaphore_ids.assign(
          ids.begin() + static_cast<std::ptrdiff_t>(first),
          ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), first + kMaxSemaphoreIdsPerOp)));
      block.ops.push_back(std::move(op));
    }
  }

  PlanThreadblock threadblock(int r, PlanGpu& gpu, const std::vector<LayoutBlock>& blocks, int b) {
    const LayoutBlock& layout_block = blocks[static_cast<std::size_t>(b)];
    PlanThreadblock block;
    // Channels: the sending connection's first, then the receiving one's, per type.
    int send_position = -1;
    int recv_position = -1;
    for (int side = 0; side < 2; ++side) {
      const int c = side == 0 ? layout_block.send : layout_block.recv;
      if (c < 0) continue;
      std::vector<int>& list = connection(c).port ? block.port_channels : block.memory_channels;
      (side == 0 ? send_position : recv_position) = static_cast<int>(list.size());
      list.push_back(channel_index_[c]);
    }
    // Copies that come first, the handshake, and the nop that publishes both to all threads.
    bool need_nop = false;
    for (int g : layout_block.groups) {
      const Group& group = layout_.groups[static_cast<std::size_t>(g)];
      if (group.kind != GroupKind::kInit) continue;
      emit_init_copies(block, layout_.init_copies[static_cast<std::size_t>(r)]);
      need_nop = true;
    }
    if (layout_block.recv >= 0) {
      const bool port = connection(layout_block.recv).port;
      block.ops.push_back(
          on_channel(port ? OpName::kSignal : OpName::kRlxSignal, type_of(layout_block.recv), recv_position));
    }
    if (layout_block.send >= 0) {
      const bool port = connection(layout_block.send).port;
      block.ops.push_back(
          on_channel(port ? OpName::kWait : OpName::kRlxWait, type_of(layout_block.send), send_position));
      need_nop = true;
    }
    if (need_nop) block.ops.push_back(simple(OpName::kNop));

    std::map<int, int> acquired;  // semaphore -> acquired so far
    for (int g : layout_block.groups) {
      const Group& group = layout_.groups[static_cast<std::size_t>(g)];
      // Acquire what this group waits for, up to the count that covers its latest producer.
      std::map<int, int> need;
      for (int from : group.after) {
        const int id = semaphore_of_[{layout_.groups[static_cast<std::size_t>(from)].block, group.block}];
        need[id] = std::max(need[id], release_rank_[{from, id}]);
      }
      std::vector<int> ids;
      for (const auto& [id, count] : need) {
        for (int k = acquired[id]; k < count; ++k) ids.push_back(id);
        acquired[id] = std::max(acquired[id], count);
      }
      if (!ids.empty()) {
        add_semaphore_ops(block, OpName::kSemAcquire, ids);
        block.ops.push_back(simple(OpName::kNop));
      }
      if (group.kind == GroupKind::kSend) emit_send(r, gpu, block, group.transfer, send_position);
      if (group.kind == GroupKind::kRecv) emit_receive(block, group.transfer, recv_position);
      auto released = releases_.find(g);
      if (released != releases_.end()) add_semaphore_ops(block, OpName::kSemRelease, released->second);
    }
    return block;
  }

  void emit_init_copies(PlanThreadblock& block, const std::vector<std::pair<Loc, Loc>>& copies) {
    for (std::size_t i = 0; i < copies.size();) {
      std::size_t j = i + 1;
      while (j < copies.size() && copies[j].first.type == copies[i].first.type &&
             copies[j].second.type == copies[i].second.type &&
             copies[j].first.index == copies[i].first.index + static_cast<int>(j - i) &&
             copies[j].second.index == copies[i].second.index + static_cast<int>(j - i)) {
        ++j;
      }
      PlanOp op = simple(OpName::kCopy);
      op.src = {local(copies[i].first, static_cast<int>(j - i))};
      op.dst = {local(copies[i].second, static_cast<int>(j - i))};
      block.ops.push_back(std::move(op));
      i = j;
    }
  }

  void emit_send(int r, PlanGpu& gpu, PlanThreadblock& block, TransferId t, int position) {
    const int c = layout_.connection_of[t];
    const Connection& conn = connection(c);
    const ChannelType type = type_of(c);
    const std::vector<Run>& runs = layout_.runs[t];
    const auto remote = [&](const Loc& loc, int count) {
      const int id = remote_buffer(gpu, conn.dst, loc.type, conn.port);
      return BufferRef{true, loc.type, block_buffer(block, id, conn.port), loc.index, count};
    };
    if (layout_.ll && conn.port) {
      // Packets into the own scratch run by run, then one proxy copy of the whole (contiguous) image.
      const int staged = layout_.staging[t];
      int offset = 0;
      for (const Run& run : runs) {
        PlanOp pack = simple(OpName::kCpkt);
        pack.src = {local(run.read, run.count)};
        pack.dst = {local({BufferType::kScratch, staged + offset}, run.count)};
        block.ops.push_back(std::move(pack));
        offset += run.count;
      }
      block.ops.push_back(simple(OpName::kNop));
      PlanOp forward = on_channel(OpName::kRppkt, type, position);
      forward.src = {local({BufferType::kScratch, staged}, offset)};
      forward.dst = {remote(runs.front().landing, offset)};
      block.ops.push_back(std::move(forward));
      block.ops.push_back(simple(OpName::kNop));
      return;
    }
    // Runs of equal size from one buffer type share an op (up to the 10 entries a device op holds);
    // on port channels the last run goes alone into the pwsf that signals.
    const std::size_t plain = conn.port && !layout_.ll ? runs.size() - 1 : runs.size();
    // A port put names one channel per entry, and an op holds 8 channel ids.
    const std::size_t per_op = static_cast<std::size_t>(conn.port ? kMaxChannelIdsPerOp : kMaxBuffersPerOp);
    for (std::size_t i = 0; i < plain;) {
      PlanOp op = on_channel(layout_.ll ? OpName::kPpkt : OpName::kPut, type, position);
      op.channel_ids.clear();
      std::size_t j = i;
      while (j < plain && j - i < per_op && runs[j].count == runs[i].count && runs[j].read.type == runs[i].read.type) {
        const Loc target = runs[j].landing.index >= 0 ? runs[j].landing : runs[j].write;
        op.src.push_back(local(runs[j].read, runs[j].count));
        op.dst.push_back(remote(target, runs[j].count));
        if (conn.port) op.channel_ids.push_back(position);
        ++j;
      }
      block.ops.push_back(std::move(op));
      i = j;
    }
    if (conn.port && !layout_.ll) {
      const Run& run = runs.back();
      PlanOp op = on_channel(OpName::kPwsf, type, position);
      op.src = {local(run.read, run.count)};
      op.dst = {remote(run.landing.index >= 0 ? run.landing : run.write, run.count)};
      block.ops.push_back(std::move(op));
      return;
    }
    block.ops.push_back(simple(OpName::kNop));
    if (!layout_.ll) block.ops.push_back(on_channel(OpName::kSignal, type, position));
    (void)r;
  }

  void emit_receive(PlanThreadblock& block, TransferId t, int position) {
    const int c = layout_.connection_of[t];
    const std::vector<Run>& runs = layout_.runs[t];
    if (!layout_.ll) {
      block.ops.push_back(on_channel(OpName::kWait, type_of(c), position));
      block.ops.push_back(simple(OpName::kNop));
      if (runs.empty() || runs.front().landing.index < 0) return;
    }
    for (const Run& run : runs) {
      const bool reduce = run.operand.index >= 0;
      PlanOp op =
          simple(layout_.ll ? (reduce ? OpName::kRepkt : OpName::kUpkt) : (reduce ? OpName::kRe : OpName::kCopy));
      if (reduce) op.src.push_back(local(run.operand, run.count));
      op.src.push_back(local(run.landing, run.count));
      op.dst = {local(run.write, run.count)};
      block.ops.push_back(std::move(op));
    }
    block.ops.push_back(simple(OpName::kNop));
  }

  const Layout& layout_;
  Plan plan_;
  std::map<int, int> channel_index_;  ///< connection -> rank-level channel index on the current rank
  std::map<int, int> position_;       ///< group -> position in its block
  std::map<std::pair<int, int>, int> semaphore_of_;
  std::map<int, std::vector<int>> releases_;
  std::map<std::pair<int, int>, int> release_rank_;  ///< (group, semaphore) -> releases up to and including it
  std::map<std::tuple<int, int, bool>, int> remote_ids_;
};

}  // namespace

Plan emit_plan(const Layout& layout, const MscclppOptions& options, const std::string& name) {
  return Emitter(layout, options, name).run();
}

}  // namespace tenet::mscclpp_detail
