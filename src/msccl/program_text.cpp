// SPDX-License-Identifier: MIT
// A laid-out plan as the program its file holds, and that program's text. The writer times every
// layout it tries from the program itself and prints only the ones it verifies: printing a file and
// parsing it back cost more than running it (torus-8x8 all-reduce of 1 MiB, a 24 MB file: 0.1 s to
// print, 0.35 s to parse, 0.3 s to run). The program carries the line numbers the parser would give
// it, so a layout that deadlocks names the same lines either way; tests check that parsing the text
// gives back the program.

#include <algorithm>
#include <string>

#include "writer.hpp"

namespace tenet::msccl_detail {
namespace {

MscclStep make_step(int s, MscclStepType type, const Location& src, const Location& dst, int cnt, int depid, int deps,
                    bool hasdep, int line) {
  MscclStep step;
  step.s = s;
  step.type = type;
  step.srcbuf = src.buffer;
  step.srcoff = src.index;
  step.dstbuf = dst.buffer;
  step.dstoff = dst.index;
  step.cnt = cnt;
  step.depid = depid;
  step.deps = deps;
  step.hasdep = hasdep ? 1 : 0;
  step.line = line;
  return step;
}

/// The steps of one operation, nops first (one per dependency past the first, SPEC 6.3).
void add_op_steps(const Plan& plan, const Op& op, std::vector<MscclStep>& steps, int& line) {
  const Location nowhere_in{MscclBuffer::kInput, -1};
  const Location nowhere_out{MscclBuffer::kOutput, -1};
  const int first = op.position - std::max(0, static_cast<int>(op.deps.size()) - 1);
  for (std::size_t d = 1; d < op.deps.size(); ++d) {
    steps.push_back(make_step(first + static_cast<int>(d) - 1, MscclStepType::kNop, nowhere_in, nowhere_out, 0,
                              op.deps[d].first, op.deps[d].second, false, line++));
  }
  const int depid = op.deps.empty() ? -1 : op.deps[0].first;
  const int deps = op.deps.empty() ? -1 : op.deps[0].second;
  const auto add = [&](MscclStepType type, const Location& src, const Location& dst, int cnt) {
    steps.push_back(make_step(op.position, type, src, dst, cnt, depid, deps, op.awaited, line++));
  };
  if (op.kind == OpKind::kCopy) {
    add(op.copy_reduces ? MscclStepType::kReduce : MscclStepType::kCopy, op.copy_src, op.copy_dst, op.copy_cnt);
    return;
  }
  const Piece& piece = plan.pieces[static_cast<std::size_t>(op.piece)];
  switch (op.kind) {
    case OpKind::kSend:
      // Unused dst: where the receiver puts it (as msccl-tools writes).
      add(MscclStepType::kSend, piece.read, piece.write, piece.cnt);
      break;
    case OpKind::kRecv:
    case OpKind::kFused: {
      // A fused step also sends what it received (rcs, rrcs); a reduction reads its operand.
      const bool fused = op.kind == OpKind::kFused;
      if (piece.reduce) {
        add(fused ? MscclStepType::kRecvReduceCopySend : MscclStepType::kRecvReduceCopy, piece.operand, piece.write,
            piece.cnt);
      } else {
        add(fused ? MscclStepType::kRecvCopySend : MscclStepType::kRecv, piece.read, piece.write, piece.cnt);
      }
      break;
    }
    case OpKind::kCopy: break;
  }
}

void print_step(std::string& out, const MscclStep& step) {
  out += "      <step s=\"" + std::to_string(step.s) + "\" type=\"";
  out += msccl_step_type_name(step.type);
  out += "\" srcbuf=\"";
  out += msccl_buffer_name(step.srcbuf);
  out += "\" srcoff=\"" + std::to_string(step.srcoff) + "\" dstbuf=\"";
  out += msccl_buffer_name(step.dstbuf);
  out += "\" dstoff=\"" + std::to_string(step.dstoff) + "\" cnt=\"" + std::to_string(step.cnt) + "\" depid=\"" +
         std::to_string(step.depid) + "\" deps=\"" + std::to_string(step.deps) + "\" hasdep=\"" +
         std::to_string(step.hasdep) + "\"/>\n";
}

}  // namespace

MscclProgram plan_program(const WriterContext& context, const Plan& plan, MscclProgram header) {
  MscclProgram program = std::move(header);
  program.nchannels = plan.nchannels;
  const int n = context.chunks;
  const int c = context.per_rank;
  // Buffers the file never names are declared with 0 chunks, as msccl-tools does.
  int i_chunks = 0;
  int o_chunks = 0;
  int s_chunks = 0;
  switch (context.coll) {
    case CollectiveKind::kAllGather:
      i_chunks = context.in_place ? 0 : c;
      o_chunks = n;
      break;
    case CollectiveKind::kReduceScatter:
      i_chunks = n;
      o_chunks = context.in_place ? 0 : c;
      s_chunks = context.in_place ? 0 : n - c;
      break;
    case CollectiveKind::kAllReduce:
      i_chunks = n;
      o_chunks = context.in_place ? 0 : n;
      break;
  }
  int line = program.line + 1;
  program.gpus.resize(static_cast<std::size_t>(context.ranks));
  for (int rank = 0; rank < context.ranks; ++rank) {
    const RankPlan& ranks_plan = plan.ranks[static_cast<std::size_t>(rank)];
    MscclGpu& gpu = program.gpus[static_cast<std::size_t>(rank)];
    gpu.id = rank;
    gpu.i_chunks = i_chunks;
    gpu.o_chunks = o_chunks;
    gpu.s_chunks = std::max(s_chunks, ranks_plan.s_chunks);
    gpu.line = line++;
    gpu.threadblocks.resize(ranks_plan.tbs.size());
    for (std::size_t t = 0; t < ranks_plan.tbs.size(); ++t) {
      const PlannedTb& planned = ranks_plan.tbs[t];
      MscclThreadblock& tb = gpu.threadblocks[t];
      tb.id = static_cast<int>(t);
      tb.send = planned.send;
      tb.recv = planned.recv;
      tb.chan = planned.chan;
      tb.line = line++;
      tb.steps.reserve(static_cast<std::size_t>(planned.positions));
      for (int index : planned.ops) add_op_steps(plan, ranks_plan.ops[static_cast<std::size_t>(index)], tb.steps, line);
      ++line;  // </tb>
    }
    if (!ranks_plan.tbs.empty()) ++line;  // </gpu>
  }
  return program;
}

std::string print_program(const MscclProgram& program, const std::string& preamble) {
  std::size_t steps = 0;
  for (const MscclGpu& gpu : program.gpus)
    for (const MscclThreadblock& tb : gpu.threadblocks) steps += tb.steps.size();
  std::string out = preamble;
  out.reserve(preamble.size() + 512 + 64 * program.gpus.size() + 128 * steps);
  out += "<algo name=\"" + program.name + "\" proto=\"" + msccl_protocol_name(program.protocol) + "\" nchannels=\"" +
         std::to_string(program.nchannels) + "\" nchunksperloop=\"" + std::to_string(program.nchunksperloop) +
         "\" ngpus=\"" + std::to_string(program.ngpus) + "\" coll=\"" + program.coll + "\" inplace=\"" +
         (program.in_place ? "1" : "0") + "\"";
  if (program.min_bytes) out += " minBytes=\"" + std::to_string(*program.min_bytes) + "\"";
  if (program.max_bytes) out += " maxBytes=\"" + std::to_string(*program.max_bytes) + "\"";
  if (program.nthreads) out += " nthreads=\"" + std::to_string(*program.nthreads) + "\"";
  out += ">\n";
  for (const MscclGpu& gpu : program.gpus) {
    out += "  <gpu id=\"" + std::to_string(gpu.id) + "\" i_chunks=\"" + std::to_string(gpu.i_chunks) +
           "\" o_chunks=\"" + std::to_string(gpu.o_chunks) + "\" s_chunks=\"" + std::to_string(gpu.s_chunks) + "\"";
    if (gpu.threadblocks.empty()) {
      out += "/>\n";
      continue;
    }
    out += ">\n";
    for (const MscclThreadblock& tb : gpu.threadblocks) {
      out += "    <tb id=\"" + std::to_string(tb.id) + "\" send=\"" + std::to_string(tb.send) + "\" recv=\"" +
             std::to_string(tb.recv) + "\" chan=\"" + std::to_string(tb.chan) + "\">\n";
      for (const MscclStep& step : tb.steps) print_step(out, step);
      out += "    </tb>\n";
    }
    out += "  </gpu>\n";
  }
  out += "</algo>\n";
  return out;
}

}  // namespace tenet::msccl_detail
