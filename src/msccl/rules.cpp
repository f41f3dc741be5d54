// SPDX-License-Identifier: MIT
// The load rules (SPEC sections 1, 3, 5.2, 6.3, 6.4, 7, 8): what the runtime's loader enforces, and
// what it does not enforce but a correct run needs. Checks are stricter than the loader where the
// loader is lax in a way that breaks runs (every used range checked whole, not just its first
// chunk; `chan` below nchannels, not just <= 32), and each problem names its line and why it matters.
// Passing files are turned into the transfer tables the interpreter runs, exactly as the loader
// builds them (nops folded into dependencies, `re` runs fused, the step counter).

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "internal.hpp"
#include "tenet/common/error.hpp"

namespace tenet::msccl_detail {

bool sends(MscclStepType type) {
  return type == MscclStepType::kSend || type == MscclStepType::kRecvCopySend ||
         type == MscclStepType::kRecvReduceSend || type == MscclStepType::kRecvReduceCopySend;
}

bool receives(MscclStepType type) {
  return type == MscclStepType::kRecv || type == MscclStepType::kRecvCopySend ||
         type == MscclStepType::kRecvReduceSend || type == MscclStepType::kRecvReduceCopy ||
         type == MscclStepType::kRecvReduceCopySend;
}

std::string step_label(int line, int rank, int tb, int position, MscclStepType type) {
  std::string label = "line " + std::to_string(line) + ": rank " + std::to_string(rank) + " tb " + std::to_string(tb);
  label += " step " + std::to_string(position) + " (";
  label += msccl_step_type_name(type);
  label += ")";
  return label;
}

namespace {

/// A step's label, put into words only for a message: loading a 200,000-step file made every
/// label it never printed (a tenth of the load).
struct StepLabel {
  int line;
  int rank;
  int tb;
  int position;
  MscclStepType type;
};

std::string operator+(const StepLabel& label, const std::string& text) {
  return step_label(label.line, label.rank, label.tb, label.position, label.type) + text;
}

std::string operator+(const StepLabel& label, const char* text) { return label + std::string(text); }

bool uses_src(MscclStepType type) {
  return type == MscclStepType::kSend || type == MscclStepType::kRecvReduceSend ||
         type == MscclStepType::kRecvReduceCopy || type == MscclStepType::kRecvReduceCopySend ||
         type == MscclStepType::kCopy || type == MscclStepType::kReduce;
}

bool uses_dst(MscclStepType type) {
  return type == MscclStepType::kRecv || type == MscclStepType::kRecvCopySend ||
         type == MscclStepType::kRecvReduceCopy || type == MscclStepType::kRecvReduceCopySend ||
         type == MscclStepType::kCopy || type == MscclStepType::kReduce;
}

int declared(const MscclGpu& gpu, MscclBuffer buffer) {
  switch (buffer) {
    case MscclBuffer::kInput: return gpu.i_chunks;
    case MscclBuffer::kOutput: return gpu.o_chunks;
    case MscclBuffer::kScratch: return gpu.s_chunks;
  }
  return 0;
}

const char* count_name(MscclBuffer buffer) {
  switch (buffer) {
    case MscclBuffer::kInput: return "i_chunks";
    case MscclBuffer::kOutput: return "o_chunks";
    case MscclBuffer::kScratch: return "s_chunks";
  }
  return "";
}

class RuleChecker {
 public:
  RuleChecker(const MscclProgram& program, LoadedProgram& loaded) : program_(program), loaded_(loaded) {}

  std::string run() {
    if (!check_algo() || !check_gpus()) return problem_;
    for (const MscclGpu& gpu : program_.gpus) {
      if (!check_threadblocks(gpu)) return problem_;
    }
    for (const MscclGpu& gpu : program_.gpus) {
      for (const MscclThreadblock& tb : gpu.threadblocks) {
        for (std::size_t position = 0; position < tb.steps.size(); ++position) {
          if (!check_step(gpu, tb, static_cast<int>(position))) return problem_;
        }
      }
    }
    for (const MscclGpu& gpu : program_.gpus) {
      if (!load_gpu(gpu)) return problem_;
    }
    if (!check_connections()) return problem_;
    return "";
  }

 private:
  bool fail(std::string message) {
    problem_ = std::move(message);
    return false;
  }

  bool fail_algo(const std::string& message) {
    return fail("line " + std::to_string(program_.line) + ": <algo> " + message);
  }

  bool check_algo() {
    const std::string& coll = program_.coll;
    if (coll == "allgather")
      loaded_.coll = CollectiveKind::kAllGather;
    else if (coll == "reduce_scatter")
      loaded_.coll = CollectiveKind::kReduceScatter;
    else if (coll == "allreduce")
      loaded_.coll = CollectiveKind::kAllReduce;
    else if (coll == "reduce" || coll == "broadcast" || coll == "alltoall" || coll == "custom") {
      return fail_algo("coll=\"" + coll + "\": tenet verifies allgather, reduce_scatter and allreduce only");
    } else {
      const std::string suggestion = closest_match(
          coll, {"allreduce", "allgather", "reduce", "broadcast", "alltoall", "reduce_scatter", "custom"});
      std::string message =
          "coll=\"" + coll +
          "\" is not a collective the runtime knows (allreduce, allgather, reduce, broadcast, alltoall, "
          "reduce_scatter, custom): it fails to load";
      if (!suggestion.empty()) message += "; did you mean \"" + suggestion + "\"?";
      return fail_algo(message);
    }
    if (program_.ngpus < 1) return fail_algo("ngpus=\"" + std::to_string(program_.ngpus) + "\": at least 1");
    if (program_.ngpus > kMaxChildren) {
      return fail_algo("ngpus=\"" + std::to_string(program_.ngpus) +
                       "\": the runtime's reader keeps at most 1024 children per element, so at most 1024 <gpu>s");
    }
    if (program_.nchunksperloop < 1) {
      return fail_algo("nchunksperloop=\"" + std::to_string(program_.nchunksperloop) +
                       "\": at least 1 (0 divides by zero when the runtime sizes scratch)");
    }
    // The runtime would load more, but with two or more ranks some chunk is then out of every
    // step's reach, and the interpreter's buffers would grow with the number (16 GB for 2^31).
    if (program_.nchunksperloop > kMaxAddressableChunks) {
      loaded_.beyond_limits = true;
      return fail_algo("nchunksperloop=\"" + std::to_string(program_.nchunksperloop) + "\": tenet verifies at most " +
                       std::to_string(kMaxAddressableChunks) + " chunks per loop (steps reach chunk " +
                       std::to_string(kMaxAddressableChunks - 1) + " at most: int16 offsets, cnt up to " +
                       std::to_string(kMaxCount) + ")");
    }
    if (loaded_.coll != CollectiveKind::kAllReduce && program_.nchunksperloop % program_.ngpus != 0) {
      return fail_algo("nchunksperloop=\"" + std::to_string(program_.nchunksperloop) +
                       "\" is not a multiple of ngpus=\"" + std::to_string(program_.ngpus) + "\", as " + coll +
                       " needs");
    }
    if (program_.nchannels < 1 || program_.nchannels > kMaxChannels) {
      return fail_algo("nchannels=\"" + std::to_string(program_.nchannels) + "\": the runtime has channels 1..32");
    }
    if (program_.min_bytes && *program_.min_bytes < 0) return fail_algo("minBytes must be >= 0");
    if (program_.max_bytes && *program_.max_bytes < 0) return fail_algo("maxBytes must be >= 0");
    if (program_.min_bytes.value_or(0) > program_.max_bytes.value_or(std::int64_t{1} << 27)) {
      return fail_algo("minBytes is above maxBytes (maxBytes defaults to 134217728)");
    }
    if (program_.nthreads && (*program_.nthreads <= 0 || *program_.nthreads % 32 != 0)) {
      return fail_algo("nthreads=\"" + std::to_string(*program_.nthreads) + "\": a positive multiple of 32");
    }
    loaded_.in_place = program_.in_place;
    loaded_.ranks = program_.ngpus;
    loaded_.chunks = program_.nchunksperloop;
    loaded_.protocol = program_.protocol;
    loaded_.fifo_calls = static_cast<int>(msccl_fifo_calls(program_.protocol));
    loaded_.by_rank.assign(static_cast<std::size_t>(program_.ngpus), {});
    return true;
  }

  bool check_gpus() {
    std::vector<int> seen(static_cast<std::size_t>(program_.ngpus), 0);
    const int n = program_.nchunksperloop;
    const int p = program_.ngpus;
    for (const MscclGpu& gpu : program_.gpus) {
      const std::string where = "line " + std::to_string(gpu.line) + ": <gpu id=\"" + std::to_string(gpu.id) + "\">";
      if (gpu.id < 0 || gpu.id >= p)
        return fail(where + ": ranks are 0.." + std::to_string(p - 1) + " (ngpus=" + std::to_string(p) + ")");
      if (seen[static_cast<std::size_t>(gpu.id)]++) return fail(where + ": a second <gpu> for this rank");
      if (gpu.i_chunks < 0 || gpu.o_chunks < 0 || gpu.s_chunks < 0) return fail(where + ": chunk counts must be >= 0");
      const int i_expected = loaded_.coll == CollectiveKind::kAllGather ? n / p : n;
      const int o_expected = loaded_.coll == CollectiveKind::kReduceScatter ? n / p : n;
      if (gpu.i_chunks > 0 && gpu.i_chunks != i_expected) {
        return fail(where + ": i_chunks=\"" + std::to_string(gpu.i_chunks) + "\" but " + program_.coll +
                    " with nchunksperloop=" + std::to_string(n) + " needs " + std::to_string(i_expected) + " (or 0)");
      }
      if (gpu.o_chunks > 0 && gpu.o_chunks != o_expected) {
        return fail(where + ": o_chunks=\"" + std::to_string(gpu.o_chunks) + "\" but " + program_.coll +
                    " with nchunksperloop=" + std::to_string(n) + " needs " + std::to_string(o_expected) + " (or 0)");
      }
      LoadedRank& rank = loaded_.by_rank[static_cast<std::size_t>(gpu.id)];
      rank.i_chunks = gpu.i_chunks;
      rank.o_chunks = gpu.o_chunks;
      // Scratch past what steps can reach is never touched: not worth a slot in the interpreter.
      rank.s_chunks = std::min(gpu.s_chunks, kMaxAddressableChunks);
    }
    for (int r = 0; r < p; ++r) {
      if (!seen[static_cast<std::size_t>(r)]) {
        return fail("no <gpu id=\"" + std::to_string(r) + "\">: every rank 0.." + std::to_string(p - 1) +
                    " needs one (a missing rank runs no threadblocks)");
      }
    }
    return true;
  }

  bool check_threadblocks(const MscclGpu& gpu) {
    const std::string rank = "rank " + std::to_string(gpu.id);
    const int count = static_cast<int>(gpu.threadblocks.size());
    std::vector<int> seen(static_cast<std::size_t>(std::max(count, 1)), 0);
    std::set<std::tuple<int, int, int>> peers;       // (chan, direction, peer)
    std::map<std::pair<int, int>, int> per_channel;  // (chan, direction) -> tbs
    int nodes = 1 + program_.ngpus + count;
    for (const MscclThreadblock& tb : gpu.threadblocks) {
      const std::string where =
          "line " + std::to_string(tb.line) + ": " + rank + " <tb id=\"" + std::to_string(tb.id) + "\">";
      if (tb.id < 0 || tb.id >= kMaxThreadblocks) return fail(where + ": tb ids are 0..215 in the runtime");
      if (tb.id >= count) {
        return fail(where + ": tb ids of a gpu must be exactly 0.." + std::to_string(count - 1) +
                    " (the runtime checks they are contiguous)");
      }
      if (seen[static_cast<std::size_t>(tb.id)]++) return fail(where + ": a second tb with this id on " + rank);
      for (const auto& [peer, name, direction] : {std::tuple{tb.send, "send", 0}, std::tuple{tb.recv, "recv", 1}}) {
        if (peer < -1 || peer >= program_.ngpus || peer == gpu.id) {
          return fail(where + ": " + name + "=\"" + std::to_string(peer) +
                      "\": -1 or another rank below ngpus=" + std::to_string(program_.ngpus));
        }
        if (peer < 0) continue;
        if (!peers.insert({tb.chan, direction, peer}).second) {
          return fail(where + ": a second tb on " + rank + " that " + (direction == 0 ? "sends to" : "receives from") +
                      " rank " + std::to_string(peer) + " on channel " + std::to_string(tb.chan) +
                      " (two tbs on one connection corrupt each other's FIFO)");
        }
        if (++per_channel[{tb.chan, direction}] > kMaxPeersPerChannel) {
          return fail(where + ": more than 32 tbs with a " + name + " peer on channel " + std::to_string(tb.chan) +
                      " of " + rank);
        }
      }
      if (tb.chan < 0 || tb.chan >= program_.nchannels) {
        return fail(where + ": chan=\"" + std::to_string(tb.chan) + "\" is not below nchannels=\"" +
                    std::to_string(program_.nchannels) + "\" (only those channels get connections)");
      }
      if (static_cast<int>(tb.steps.size()) > kMaxSteps) {
        return fail(where + ": " + std::to_string(tb.steps.size()) +
                    " steps; the runtime runs at most 256 per threadblock");
      }
      nodes += static_cast<int>(tb.steps.size());
      loaded_.channels = std::max(loaded_.channels, tb.chan + 1);
    }
    if (nodes > kMaxNodes) {
      return fail(rank + " loads " + std::to_string(nodes) +
                  " XML nodes (1 algo + gpus + its tbs + its steps); the runtime's reader stops at 4095");
    }
    loaded_.max_threadblocks = std::max(loaded_.max_threadblocks, count);
    loaded_.max_steps = std::max(loaded_.max_steps, nodes - 1 - program_.ngpus - count);
    return true;
  }

  const MscclThreadblock* find_tb(const MscclGpu& gpu, int id) const {
    for (const MscclThreadblock& tb : gpu.threadblocks) {
      if (tb.id == id) return &tb;
    }
    return nullptr;
  }

  bool check_range(const MscclGpu& gpu, const MscclStep& step, const StepLabel& label, const char* field,
                   MscclBuffer buffer, int offset) {
    const int limit = declared(gpu, buffer);
    // As written, offset + cnt may not fit an int (srcoff="2147483647").
    const std::int64_t end = std::int64_t{offset} + step.cnt;
    if (offset < 0 || offset > kMaxOffset || end > limit) {
      const std::string range =
          std::string(msccl_buffer_name(buffer)) + "[" + std::to_string(offset) + ".." + std::to_string(end) + ")";
      return fail(label + ": " + field + " " + range + " is outside " + count_name(buffer) + "=" +
                  std::to_string(limit) + " (out of bounds)");
    }
    return true;
  }

  bool check_step(const MscclGpu& gpu, const MscclThreadblock& tb, int position) {
    const MscclStep& step = tb.steps[static_cast<std::size_t>(position)];
    const StepLabel label{step.line, gpu.id, tb.id, position, step.type};
    if (step.s != position) {
      return fail(label + ": s=\"" + std::to_string(step.s) + "\" at position " + std::to_string(position) +
                  ": steps must be numbered 0, 1, 2, ... in order (dependencies and the runtime's step counter count "
                  "positions)");
    }
    if (step.type == MscclStepType::kResAdd) {
      return fail(label + ": type ra loads but the interpreter has no case for it and stops the threadblock");
    }
    if (step.depid >= 0) {
      if (step.depid == tb.id)
        return fail(label + ": depends on its own threadblock (steps of a tb already run in order)");
      const MscclThreadblock* target = find_tb(gpu, step.depid);
      if (target == nullptr)
        return fail(label + ": depid=\"" + std::to_string(step.depid) + "\" names no tb of rank " +
                    std::to_string(gpu.id));
      if (step.depid > kMaxDependencyTb) {
        return fail(label + ": depid=\"" + std::to_string(step.depid) +
                    "\": the runtime stores it in 8 bits, so only tbs 0..127 can be awaited");
      }
      if (step.deps < 0 || step.deps >= static_cast<int>(target->steps.size())) {
        return fail(label + ": deps=\"" + std::to_string(step.deps) + "\" is not a step of tb " +
                    std::to_string(step.depid));
      }
      const MscclStep& awaited = target->steps[static_cast<std::size_t>(step.deps)];
      if (awaited.type == MscclStepType::kNop) {
        return fail(label + ": waits for tb " + std::to_string(step.depid) + " step " + std::to_string(step.deps) +
                    ", a nop, which never publishes progress");
      }
      if (awaited.hasdep != 1) {
        return fail(label + ": waits for tb " + std::to_string(step.depid) + " step " + std::to_string(step.deps) +
                    ", which has hasdep=\"0\" and so does not publish its progress (the wait could hang)");
      }
    } else if (step.depid < -1) {
      return fail(label + ": depid=\"" + std::to_string(step.depid) + "\": -1 or a tb id");
    }
    if (step.type == MscclStepType::kNop) {
      if (step.depid < 0) {
        return fail(label +
                    ": a nop without a dependency shifts the runtime's step counter for the rest of the threadblock");
      }
      return true;
    }
    if (step.hasdep != 0 && step.hasdep != 1)
      return fail(label + ": hasdep=\"" + std::to_string(step.hasdep) + "\": 0 or 1");
    if (step.cnt < 1 || step.cnt > kMaxCount) {
      return fail(label + ": cnt=\"" + std::to_string(step.cnt) + "\": the runtime moves 1..71 chunks per step");
    }
    if (sends(step.type) && tb.send < 0) return fail(label + ": sends, but its tb has send=\"-1\"");
    if (receives(step.type) && tb.recv < 0) return fail(label + ": receives, but its tb has recv=\"-1\"");
    if (uses_src(step.type) && !check_range(gpu, step, label, "src", step.srcbuf, step.srcoff)) return false;
    if (uses_dst(step.type) && !check_range(gpu, step, label, "dst", step.dstbuf, step.dstoff)) return false;
    if (!program_.in_place && uses_dst(step.type) && step.dstbuf == MscclBuffer::kInput) {
      return fail(label + ": writes the input buffer, which an out-of-place call passes as const (inplace=\"0\")");
    }
    return true;
  }

  /// Steps -> transfers as topo.cc builds them, then the step counter of each.
  bool load_gpu(const MscclGpu& gpu) {
    LoadedRank& rank = loaded_.by_rank[static_cast<std::size_t>(gpu.id)];
    rank.threadblocks.assign(gpu.threadblocks.size(), {});
    for (const MscclThreadblock& tb : gpu.threadblocks) {
      LoadedThreadblock& out = rank.threadblocks[static_cast<std::size_t>(tb.id)];
      out.id = tb.id;
      out.send = tb.send;
      out.recv = tb.recv;
      out.chan = tb.chan;
      std::vector<std::pair<int, int>> pending;
      bool run_open = false;
      int position = 0;
      for (const MscclStep& step : tb.steps) {
        const StepLabel label{step.line, gpu.id, tb.id, position, step.type};
        if (step.depid >= 0) pending.emplace_back(step.depid, step.deps);
        if (step.type == MscclStepType::kNop) {
          if (position + 1 == static_cast<int>(tb.steps.size())) {
            return fail(label + ": a nop at the end of a threadblock is dropped by the loader, with its dependency");
          }
          ++position;
          continue;
        }
        if (!pending.empty() && step.depid < 0) {
          return fail(label +
                      ": follows nops with dependencies but has none itself; the runtime fails to load "
                      "(\"the last reduction must be a part of the first immediate instruction\")");
        }
        LoadedTransfer* last = out.transfers.empty() ? nullptr : &out.transfers.back();
        if (step.type == MscclStepType::kReduce && last != nullptr && run_open &&
            last->type == MscclStepType::kReduce && last->dstbuf == step.dstbuf && last->dstoff == step.dstoff &&
            last->srcbuf == step.srcbuf && step.depid < 0) {
          if (step.cnt != last->cnt) return fail(label + ": continues a fused re run with a different cnt");
          if (static_cast<int>(last->reduce_srcoffs.size()) >= kMaxReduceFusion) {
            return fail(label + ": a fused re run longer than 16 overflows the runtime's source table");
          }
          last->reduce_srcoffs.push_back(step.srcoff);
          last->srcoff = step.srcoff;
          last->hasdep = step.hasdep == 1;
          last->position = position;
          last->line = step.line;
          run_open = step.hasdep == 0;
          ++position;
          continue;
        }
        LoadedTransfer transfer;
        transfer.type = step.type;
        transfer.srcbuf = step.srcbuf;
        transfer.srcoff = step.srcoff;
        transfer.dstbuf = step.dstbuf;
        transfer.dstoff = step.dstoff;
        transfer.cnt = step.cnt;
        transfer.deps = std::move(pending);
        pending.clear();
        transfer.hasdep = step.hasdep == 1;
        transfer.position = position;
        transfer.line = step.line;
        if (step.type == MscclStepType::kReduce) transfer.reduce_srcoffs.push_back(step.srcoff);
        run_open = step.type == MscclStepType::kReduce && step.hasdep == 0;
        out.transfers.push_back(std::move(transfer));
        ++position;
      }
      int counter = 0;
      for (LoadedTransfer& transfer : out.transfers) {
        counter += std::max(0, static_cast<int>(transfer.deps.size()) - 1);
        if (transfer.type == MscclStepType::kReduce) counter += static_cast<int>(transfer.reduce_srcoffs.size()) - 1;
        transfer.counter = counter;
        if (counter != transfer.position) {
          return fail(
              step_label(transfer.line, gpu.id, tb.id, transfer.position, transfer.type) +
              ": the runtime's step counter is " + std::to_string(counter) +
              " here, not its position: nops must each carry a dependency and directly precede a step that has one");
        }
        ++counter;
      }
    }
    return true;
  }

  /// Both ends of every connection declared; the k-th send meets the k-th receive with the same cnt.
  bool check_connections() {
    for (int a = 0; a < loaded_.ranks; ++a) {
      for (const LoadedThreadblock& sender : loaded_.by_rank[static_cast<std::size_t>(a)].threadblocks) {
        if (sender.send >= 0) {
          const LoadedThreadblock* receiver = peer_tb(sender.send, a, sender.chan, false);
          if (receiver == nullptr) {
            return fail("rank " + std::to_string(a) + " tb " + std::to_string(sender.id) + " sends to rank " +
                        std::to_string(sender.send) + " on channel " + std::to_string(sender.chan) + ", but rank " +
                        std::to_string(sender.send) + " has no tb receiving from rank " + std::to_string(a) +
                        " on that channel (connections are set up in pairs)");
          }
          if (!match_messages(a, sender, sender.send, *receiver)) return false;
        }
        if (sender.recv >= 0 && peer_tb(sender.recv, a, sender.chan, true) == nullptr) {
          return fail("rank " + std::to_string(a) + " tb " + std::to_string(sender.id) + " receives from rank " +
                      std::to_string(sender.recv) + " on channel " + std::to_string(sender.chan) + ", but rank " +
                      std::to_string(sender.recv) + " has no tb sending to rank " + std::to_string(a) +
                      " on that channel (connections are set up in pairs)");
        }
      }
    }
    return true;
  }

  const LoadedThreadblock* peer_tb(int rank, int peer, int chan, bool sending) const {
    for (const LoadedThreadblock& tb : loaded_.by_rank[static_cast<std::size_t>(rank)].threadblocks) {
      if (tb.chan == chan && (sending ? tb.send : tb.recv) == peer) return &tb;
    }
    return nullptr;
  }

  bool match_messages(int a, const LoadedThreadblock& sender, int b, const LoadedThreadblock& receiver) {
    std::vector<const LoadedTransfer*> out;
    std::vector<const LoadedTransfer*> in;
    for (const LoadedTransfer& transfer : sender.transfers) {
      if (sends(transfer.type)) out.push_back(&transfer);
    }
    for (const LoadedTransfer& transfer : receiver.transfers) {
      if (receives(transfer.type)) in.push_back(&transfer);
    }
    const std::string connection = "connection rank " + std::to_string(a) + " -> rank " + std::to_string(b) +
                                   " channel " + std::to_string(sender.chan);
    for (std::size_t k = 0; k < std::min(out.size(), in.size()); ++k) {
      if (out[k]->cnt != in[k]->cnt) {
        return fail(connection + ": send #" + std::to_string(k) + " (line " + std::to_string(out[k]->line) + ", cnt " +
                    std::to_string(out[k]->cnt) + ") meets receive #" + std::to_string(k) + " (line " +
                    std::to_string(in[k]->line) + ", cnt " + std::to_string(in[k]->cnt) +
                    "): matched steps need the same cnt");
      }
    }
    if (out.size() != in.size()) {
      return fail(connection + ": " + std::to_string(out.size()) + " sends but " + std::to_string(in.size()) +
                  " receives (every message must be received, in the same call)");
    }
    return true;
  }

  const MscclProgram& program_;
  LoadedProgram& loaded_;
  std::string problem_;
};

}  // namespace

std::string load_program(const MscclProgram& program, LoadedProgram& loaded) {
  loaded = LoadedProgram{};
  return RuleChecker(program, loaded).run();
}

std::vector<int> distinct_splits(const LoadedProgram& loaded) {
  std::set<int> counts;
  for (const LoadedRank& rank : loaded.by_rank) {
    for (const LoadedThreadblock& tb : rank.threadblocks) {
      for (const LoadedTransfer& transfer : tb.transfers) {
        if (sends(transfer.type) || receives(transfer.type)) counts.insert(transfer.cnt);
      }
    }
  }
  const int largest = counts.empty() ? 1 : *counts.rbegin();
  std::vector<int> splits;
  std::set<std::vector<int>> seen;
  for (int m = 1; m <= largest; ++m) {
    std::vector<int> calls;
    for (int count : counts) calls.push_back((count + m - 1) / m);
    if (seen.insert(calls).second) splits.push_back(m);
  }
  return splits;
}

}  // namespace tenet::msccl_detail
