// SPDX-License-Identifier: MIT
#pragma once
// MSCCL++ JSON execution plans (../shared/mscclpp/SPEC.md): tenet writes Schedules as plans the
// MSCCL++ executor loads, and verifies and times plans (its own or anyone's) by executing them
// symbolically on the CPU.
//
// Writing. Rank r is the schedule's member r. Plan chunk c is schedule chunk c: all-gather has
// input_chunks = chunks per member and output_chunks = all chunks, reduce-scatter the reverse,
// all-reduce all chunks on both sides. Every transfer becomes a put on the sender (a memory
// channel inside a node, a port channel across nodes) and a wait on the receiver; a reduction lands
// in the receiver's scratch and is summed into place there, so every rank only ever writes its own
// working buffers itself, and conflicting accesses of its threadblocks are ordered by device
// semaphores in the schedule's replay order. Transfers between one pair of ranks that overlap in
// time get separate lanes (threadblocks and channels), so the plan keeps the schedule's
// concurrency. Every threadblock runs its ops in replay order and every wait is for an earlier
// event, which is why the plan cannot deadlock; the writer executes its own output before
// returning it. src/mscclpp/writer_layout.cpp has the details.
//
// Verifying. The plan is parsed (JSON pointer in every message), checked against the loader's
// rules and the SPEC's limits (references, channel pairing, sizes), then executed: every rank's
// threadblocks run their ops in order, signals and waits pair per connection, device semaphores
// count, and data moves as symbolic contribution sets; a vector-clock check proves every pair of
// conflicting accesses ordered (nops, signals, semaphores), and the result is compared with the
// collective's.

#include <cstdint>
#include <optional>
#include <string>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

enum class MscclppProtocol { kSimple, kLL };

/// "simple" or "ll" (any case); throws InputError naming `option` otherwise.
MscclppProtocol parse_mscclpp_protocol(const std::string& text, const std::string& option);

struct MscclppOptions {
  MscclppProtocol protocol = MscclppProtocol::kSimple;
  /// In-place calls (the plan's "inplace": the shim matches it against each call) or out-of-place.
  bool in_place = false;
  /// Ranks per node: memory channels inside a node, port channels between nodes. 0: from the
  /// topology (NPUs on one first-level switch, or joined by direct links, are one node).
  std::uint32_t ranks_per_node = 0;
  /// Threadblocks one rank may run; the executor needs all of them resident at once (a GPU's SM
  /// count: 108 on A100, 132 on H100).
  std::uint32_t max_threadblocks = 108;
  /// The plan's name (part of the executor's cache key); empty: "tenet_<algorithm>_<collective>_<ranks>".
  std::string name;
  /// Message sizes the runtime selects the plan for (bytes, bounds included).
  std::uint64_t min_message_size = 0;
  std::uint64_t max_message_size = ~std::uint64_t{0};
};

/// The schedule as an MSCCL++ plan. Requires a schedule that verifies on `topology`. Throws
/// InputError when the plan cannot be written (a transfer through a non-member, a limit of the
/// SPEC), naming the limit and the option that helps.
std::string schedule_to_mscclpp_plan(const Schedule& schedule, const Topology& topology, const MscclppOptions& options);

/// False where no plan of `schedule` fits the threadblocks a rank may run: the fewest any layout
/// has (every send paired with a receive, no segments) are too many, or the ranks do not form
/// nodes. One layout: a screen for ranking many candidates. True does not promise a plan: cut into
/// segments of at most 64 ops, its threadblocks can still be too many (mscclpp_plan_fits).
bool mscclpp_threadblocks_suffice(const Schedule& schedule, const Topology& topology, const MscclppOptions& options);

/// A plan's text and its time as the runtime runs it (`tenet simulate`'s model), with rank r on
/// NPU members[r] of the schedule.
struct TimedMscclppPlan {
  std::string text;
  double time_us = 0.0;
};
/// schedule_to_mscclpp_plan's text and the time of that text, read back and executed once for
/// both. Throws as schedule_to_mscclpp_plan does.
TimedMscclppPlan schedule_to_timed_mscclpp_plan(const Schedule& schedule, const Topology& topology,
                                                const MscclppOptions& options);

/// The time of the plan schedule_to_mscclpp_plan writes, as `tenet simulate` times it, from the
/// plan in memory: for ranking candidates, without printing, re-reading and checking the text
/// (which the written file still gets). Throws InputError where the plan cannot be written.
double mscclpp_plan_time_us(const Schedule& schedule, const Topology& topology, const MscclppOptions& options);

/// The transfers (sent and received) a rank's plan of the usual shape holds: the ops its
/// threadblocks may run over about seven a transfer end (a send: put, nop, signal; a receive:
/// wait, nop, copy, nop; the semaphores between threadblocks a tree's pipeline adds: its plans
/// measured 6.5). A guide for how finely to cut a schedule, not a limit.
std::uint64_t mscclpp_transfer_room(const MscclppOptions& options);

/// Whether schedule_to_mscclpp_plan writes `schedule` within the SPEC's limits, without printing or
/// executing the plan (the layouts it tries, each laid out and emitted).
bool mscclpp_plan_fits(const Schedule& schedule, const Topology& topology, const MscclppOptions& options);

/// The same, as nullopt with `reason` set instead of an InputError: for commands that write many
/// files and note the ones that cannot be written.
std::optional<std::string> schedule_to_mscclpp_plan(const Schedule& schedule, const Topology& topology,
                                                    const MscclppOptions& options, std::string& reason);
std::optional<TimedMscclppPlan> schedule_to_timed_mscclpp_plan(const Schedule& schedule, const Topology& topology,
                                                               const MscclppOptions& options, std::string& reason);

/// Nodes of the topology's members as the writer sees them (MscclppOptions::ranks_per_node 0):
/// node id per rank. Exposed for tests and messages.
std::vector<std::uint32_t> mscclpp_nodes(const Topology& topology, const std::vector<NodeId>& members);

struct MscclppVerifyResult {
  bool ok = false;
  /// The first problem, with the JSON pointer of the op or field, or the deadlock, or the first
  /// wrong result.
  std::string error;
  std::string name;
  std::string collective;  ///< as written: "allgather", "reducescatter", "allreduce"
  std::string protocol;
  bool in_place = false;
  int ranks = 0;
  int max_threadblocks = 0;  ///< on one rank
  int max_ops = 0;           ///< in one threadblock
  int memory_channels = 0;   ///< over all ranks
  int port_channels = 0;
  bool races_checked = false;
};

/// Parses and verifies a plan; never throws on a bad plan except for malformed JSON and wrongly
/// typed or missing fields, which are InputErrors naming `source` and the JSON pointer. With a
/// topology, the plan's rank count must be its NPU count, or the count of `members` where given
/// (the NPUs its ranks run on: a sub-collective's plan names none) (InputError otherwise).
MscclppVerifyResult verify_mscclpp_plan(const std::string& text, const std::string& source, const Topology* topology,
                                        const std::vector<NodeId>& members = {});

/// The plan as a Schedule of `size_bytes` for the simulator: every put (or get) is a transfer from
/// the rank whose data moves to the rank it lands on, depending on what its threadblock learned
/// before it (its earlier ops, waits on signals, semaphores). Rank r is NPU members[r], NPU r
/// without `members`. Throws InputError for a plan that does not execute (verify_mscclpp_plan says
/// why) or does not fit the topology.
Schedule mscclpp_plan_to_schedule(const std::string& text, const std::string& source, const Topology& topology,
                                  std::uint64_t size_bytes, const std::vector<NodeId>& members = {});

}  // namespace tenet
