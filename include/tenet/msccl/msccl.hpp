// SPDX-License-Identifier: MIT
#pragma once
// MSCCL algorithm XML (../shared/msccl/SPEC.md): tenet writes Schedules as files the MSCCL runtime
// loads, and verifies such files by executing them on the CPU the way the runtime's interpreter
// does.
//
// Writing. Ranks are the schedule's members in order (rank r = members[r]); MSCCL chunk c is the
// schedule's chunk c, so nchunksperloop = members x chunks per member. Every transfer becomes one
// send step on the sender and one receive step on the receiver (a block that is not contiguous in
// the buffers becomes several), grouped into threadblocks by (peer, channel, direction). Local
// order follows the verified replay order of the schedule (reads when a transfer starts, writes
// when it ends), and every pair of accesses to one buffer slot from different threadblocks is
// ordered by an explicit dependency, so the file computes exactly what the verifier replayed. See
// src/msccl/layout.cpp for the mapping and the deadlock argument. The writer runs the same
// checks as verify_msccl_xml on its own output before returning it.
//
// Verifying. The file is first checked against the runtime reader's lexical rules (SPEC section 2),
// parsed with pugixml, checked against every load rule (sections 3-8), then executed: threadblocks
// run their steps in order, wait for dependencies on progress flags, and exchange primitive calls
// over per-connection FIFOs of the protocol's depth, with float buffers and symbolic contribution
// sets, once for every way buffer size can split steps into calls.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

enum class MscclProtocol { kSimple, kLL, kLL128 };

/// "Simple", "LL", "LL128" (as the runtime spells them); throws InputError naming `option` otherwise.
MscclProtocol parse_msccl_protocol(const std::string& text, const std::string& option);
std::string msccl_protocol_name(MscclProtocol protocol);
/// Primitive calls one connection buffers: NCCL_STEPS = 8 FIFO steps; a Simple call advances 4 of
/// them, an LL or LL128 call 1 (SPEC 7.3).
std::uint32_t msccl_fifo_calls(MscclProtocol protocol);

/// How the runtime runs a file of `nchunksperloop` chunks for a collective of `size_bytes`
/// (SPEC 6.2, NCCL's default buffer sizes).
struct MscclRuntimeModel {
  std::uint64_t slice_bytes = 0;  ///< of one chunk per iteration: 2 MiB Simple, 32 KiB LL, 576000 B LL128
  std::uint64_t iterations = 1;   ///< the whole step list runs once per slice of the chunks
  int max_allowed_count = 1;      ///< chunks one primitive call moves (mscclMaxAllowedCount)
  int fifo_calls = 2;             ///< calls a connection buffers
};
MscclRuntimeModel msccl_runtime_model(MscclProtocol protocol, int nchunksperloop, std::uint64_t size_bytes);
/// Whether the runtime would run `schedule`'s file in several slices of each chunk (its chunks are
/// larger than a slice of `protocol`): it then pipelines the slices through the whole program,
/// which neither the schedule's time nor msccl_expected_time_us sees.
bool msccl_runtime_slices(const Schedule& schedule, MscclProtocol protocol);

struct MscclWriteOptions {
  MscclProtocol protocol = MscclProtocol::kSimple;
  /// In-place calls (inplace="1") or out-of-place ones (inplace="0"); the runtime picks a file by
  /// this, so covering both takes two files.
  bool in_place = true;
  /// Channels each connection's transfers are dealt over, round robin: more threadblocks working in
  /// parallel, and fewer steps in each (the runtime allows 256 per threadblock). 0: automatic, the
  /// count (1, 2 or 4) whose file runs fastest on the runtime's model.
  std::uint32_t channels = 0;
  /// Automatic channels where the transfers in flight between a pair of ranks must be cut to fewer
  /// lanes: each channel count also finds its own lane count, and the fastest file wins, rather than
  /// the fewest channels at the first lane count that fits. Several times the layouts to time; the
  /// synthesizer turns it off to rank its candidates' files, not to write the one it chose.
  bool search_channels_when_serialized = true;
  /// Chunks the runtime would run in several slices may be cut into up to this many pieces (a
  /// power of two, no more than the slices), each on channels of its own, where that file runs faster:
  /// fewer slices per chunk, so fewer alphas paid again per slice (only with automatic channels
  /// and transfers of one chunk each; 1: never). MscclWritten::chunk_split says what was chosen.
  std::uint32_t max_chunk_split = 32;
  /// false: only time the layouts and return the fastest one's time and shape, without its text
  /// and without running the interpreter on it (which costs more than the timing). For ranking
  /// schedules by their files; the file finally written is checked.
  bool verify = true;
  /// The algo's name; empty: "tenet_<algorithm>_<collective>_<topology>" (63 characters at most).
  std::string name;
  /// The comment lines at the top (tenet version, topology, collective, size, seed, rank mapping).
  bool provenance = true;
  /// Seed the schedule was synthesized with, for the comment.
  std::optional<std::uint64_t> seed;
};

struct MscclWritten {
  std::string text;
  /// The file on `topology` as the runtime runs it (msccl_to_schedule's model, the simulator).
  double time_us = 0.0;
  std::uint32_t channels = 1;
  /// A threadblock serves a receive peer and a send peer, forwards fused into rcs/rrcs steps.
  bool fused = false;
  /// Largest cnt of one step the layout allowed (smaller only when longer steps deadlock).
  int step_cap = 0;
  /// Sends also keep the schedule's order of each rank's transfers (a switch port's plan).
  bool schedule_order = false;
  /// > 0: the schedule had more transfers in flight between a pair of ranks than the runtime's
  /// channels and threadblocks hold, and the file runs them on this many lanes per pair.
  int serialized_lanes = 0;
  /// The schedule with that serialization, on `topology` (0 when not serialized).
  double serialized_schedule_us = 0.0;
  /// > 0: this many transfers were planned on routes other than the runtime's (a file names no
  /// routes, runtime_routes.hpp), and the file runs on the runtime's.
  std::size_t off_route_transfers = 0;
  /// That replay's time (0 when every transfer was on the runtime's route).
  double runtime_routes_us = 0.0;
  /// Each of the schedule's chunks is this many chunks of the file (1: as planned).
  std::uint32_t chunk_split = 1;
  /// Each member's chunks are numbered in the file so that those a transfer carries together lie
  /// side by side (fewer steps or staging copies than the schedule's numbering).
  bool chunks_renumbered = false;
  /// Transfers of more chunks than one of the runtime's primitive calls moves were cut into
  /// transfers side by side, on channels of their own, each paying its alpha at the same time.
  bool calls_side_by_side = false;
  /// Each peer's sends and receives left unpaired share a threadblock: one a peer rather than two,
  /// where the runtime's 128 threadblocks that others can wait for would not hold them otherwise.
  bool peer_threadblocks = false;
  /// The most scratch chunks a rank uses (s_chunks) and the chunks of the collective
  /// (nchunksperloop): the runtime allocates s_chunks / nchunksperloop times maxBytes of scratch.
  std::uint32_t scratch_chunks = 0;
  std::uint32_t loop_chunks = 0;
};

/// The schedule as MSCCL XML for its collective. Requires a schedule that verifies on `topology`
/// (same NPU numbering). Several layouts (channel counts, fused forwards or not) are made, each
/// checked by executing it (right result at every call split, no deadlock) and timed as the
/// runtime runs it on `topology`; the fastest is returned (where the runtime would run the chunks in
/// several slices, also with each chunk cut into pieces: MscclWriteOptions::max_chunk_split). A
/// schedule planned on routes other than the runtime's is laid out in the order of its replay on
/// the runtime's routes, or of its plan, whichever file is faster
/// (MscclWritten::off_route_transfers). A schedule of aggregated transfers is also written with
/// each member's chunks renumbered and with transfers larger than a runtime call cut side by side
/// (MscclWritten::chunks_renumbered, calls_side_by_side), and the fastest file kept. Throws
/// InputError when the schedule cannot be expressed (a transfer through a non-member) or does not
/// fit the runtime's limits, naming the limit and what to change.
MscclWritten write_msccl_xml(const Schedule& schedule, const Topology& topology, const MscclWriteOptions& options);
/// write_msccl_xml's text.
std::string schedule_to_msccl_xml(const Schedule& schedule, const Topology& topology, const MscclWriteOptions& options);

/// A quick check, without laying the file out, that every rank's steps fit the runtime's reader
/// (4095 XML nodes a rank: the algo, the gpus, the threadblocks, the steps): a step per send and
/// per receive, and a threadblock per peer and direction, plus one more for each 256 steps; and
/// that no rank sends to or receives from more peers than it may have threadblocks (216).
/// Passing it does not promise that write_msccl_xml succeeds (other limits, fused layouts); the
/// synthesizer uses it to keep within the file's limits schedules it may choose among.
bool msccl_steps_fit(const Schedule& schedule);

/// Whether every rank has at most 128 peers counted once per direction: then a file with a
/// threadblock per peer and direction stays within the runtime's threadblocks and those a
/// dependency can name (tbs 0..127), which msccl_expected_time_us does not look at. False does not
/// mean no file fits (peers can share threadblocks): write_msccl_xml tells.
bool msccl_threadblocks_surely_fit(const Schedule& schedule);
/// Steps a rank of `ranks` can have beside a send and a receive threadblock per other rank.
std::uint64_t msccl_step_room(std::size_t ranks);
/// What a schedule costs as an MSCCL file, estimated without laying the file out: its time on
/// `topology` once each transfer of chunks that are not consecutive is cut into its steps (one
/// after the other, each paying its alpha) and the transfers in flight between each pair of ranks
/// are cut to the most lanes the runtime's channels and threadblocks could hold.
/// write_msccl_xml starts there and halves the lanes while a layout hits another limit, so the
/// file can be slower (fat-tree-8x4 unwound all-reduce of 1 MiB at 16 chunks: 196 us estimated,
/// 219 us written on 6 lanes), or faster where it deals a transfer's steps onto several channels.
/// Infinity when no file can be written (steps past msccl_steps_fit,
/// transfers through non-members). `schedule` must carry its times on `topology` (a replay's).
/// Planned on routes other than the runtime's, it is replayed on the runtime's first (an MSCCL file
/// names no routes: h100-4x8-rail spanning-tree all-gather of 1 GiB, 2.308 ms on its own routes,
/// 3.401 ms on the runtime's). Where the runtime runs the file in slices (msccl_runtime_slices),
/// the slices' pipeline can make the file far faster than this (msccl_pipelined_time_us).
double msccl_expected_time_us(const Schedule& schedule, const Topology& topology);
/// Where the runtime runs `schedule`'s file in slices (msccl_runtime_slices, with `protocol`), the
/// time of the slices' pipeline at its best: the first slice takes `whole_us` (the file's time
/// unsliced, msccl_expected_time_us) at 1/slices of the bytes, and each later one the busiest
/// link's time for a slice on the runtime's routes. Files run slower (alphas, threadblocks, calls
/// per step; a100-4x8-ib reduce-scatter of 1 GiB, one chunk per NPU: 6.381 ms as planned, 4.174
/// at best, 4.242 as a file). Infinity where the runtime does not slice it.
double msccl_pipelined_time_us(const Schedule& schedule, const Topology& topology, MscclProtocol protocol,
                               double whole_us);

// ------------------------------------------------------------------------------------------------
// The program as the runtime reads it: one entry per element, attributes as written.

enum class MscclStepType {
  kSend,
  kRecv,
  kRecvCopySend,
  kRecvReduceSend,
  kRecvReduceCopy,
  kRecvReduceCopySend,
  kCopy,
  kReduce,
  kResAdd,
  kNop
};
enum class MscclBuffer { kInput, kOutput, kScratch };

/// "s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "ra", "nop".
const char* msccl_step_type_name(MscclStepType type);
/// "i", "o", "s".
const char* msccl_buffer_name(MscclBuffer buffer);

struct MscclStep {
  int s = 0;
  MscclStepType type = MscclStepType::kNop;
  MscclBuffer srcbuf = MscclBuffer::kInput;
  int srcoff = -1;
  MscclBuffer dstbuf = MscclBuffer::kOutput;
  int dstoff = -1;
  int cnt = 0;
  int depid = -1;
  int deps = -1;
  int hasdep = 0;
  int line = 0;  ///< in the file, for messages
};

struct MscclThreadblock {
  int id = 0;
  int send = -1;
  int recv = -1;
  int chan = 0;
  int line = 0;
  std::vector<MscclStep> steps;
};

struct MscclGpu {
  int id = 0;
  int i_chunks = 0;
  int o_chunks = 0;
  int s_chunks = 0;
  int line = 0;
  std::vector<MscclThreadblock> threadblocks;
};

struct MscclProgram {
  std::string name;
  std::string coll;  ///< as written: "allgather", "reduce_scatter", "allreduce", ...
  MscclProtocol protocol = MscclProtocol::kSimple;
  int ngpus = 0;
  int nchunksperloop = 0;
  int nchannels = 0;
  bool in_place = true;
  std::optional<std::int64_t> min_bytes;
  std::optional<std::int64_t> max_bytes;
  std::optional<int> nthreads;
  int line = 0;                ///< of <algo>
  std::vector<MscclGpu> gpus;  ///< in file order
  /// Topology-file NPU id of each rank, from tenet's "rank_to_npu:" comment (empty when absent).
  std::vector<NodeId> rank_to_npu;
  /// Collective size the file was made for, from tenet's "made for ... (N bytes)" comment; the
  /// runtime itself runs a file for any size.
  std::optional<std::uint64_t> size_bytes;
};

/// Checks the runtime reader's lexical rules and parses the file (pugixml). Throws InputError
/// naming `source` and the line of the first problem. Load rules are not checked here.
MscclProgram parse_msccl_xml(const std::string& text, const std::string& source);

/// The program as a tenet Schedule of `size_bytes`, timed as the runtime runs it (the model is at
/// the top of src/msccl/to_schedule.cpp): the whole step list once per slice of the chunks; a step
/// as its primitive calls, each sending call one transfer from the sender's NPU to the receiver's
/// (kReduce when the receiving step reduces); a threadblock's calls one after the other, a send
/// holding it until its data has crossed; a connection at most its FIFO's calls ahead of its
/// receiver; dependencies met in the same slice. Chunk c of slice t is the Schedule's chunk
/// c x iterations + t. Planned times are 0 and links kNoLink: the simulator routes and times
/// every transfer. Ranks are NPUs as verify_msccl_xml maps them (`members`, rank_to_npu). Throws
/// InputError naming `source` and the line for a program that breaks a load rule, deadlocks, or
/// sends scratch nothing wrote; wrong results are verify_msccl_xml's.
Schedule msccl_to_schedule(const MscclProgram& program, const Topology& topology, std::uint64_t size_bytes,
                           const std::string& source, std::span<const NodeId> members = {});

struct MscclVerifyResult {
  bool ok = false;
  /// The first problem, e.g. "line 7: rank 1 tb 0 step 2: ..." or a deadlock with the waiting
  /// threadblocks, or the first wrong slot.
  std::string error;
  std::string coll;
  std::string protocol;
  bool in_place = true;
  int ranks = 0;
  int nchunksperloop = 0;
  int max_threadblocks = 0;  ///< per rank
  int max_steps = 0;         ///< XML steps (nops included) on one rank
  int channels = 0;
  /// Distinct ways buffer size splits steps into primitive calls; each was executed.
  int splits_executed = 0;
  bool races_checked = false;
  /// `error` is a limit of tenet's verifier (such as the chunks per loop it can hold), not a fault
  /// of the file: no verdict, and the CLI refuses the file as bad input.
  bool beyond_limits = false;
  /// `error` says the file does not fit the topology it was checked on (its ranks are not the
  /// topology's NPUs or the given members, or a sender cannot reach its receiver): the CLI refuses
  /// it as bad input rather than calling the algorithm wrong.
  bool wrong_topology = false;
};

/// Verifies MSCCL XML text against every rule above; never throws on a bad file. With a
/// topology, the ranks must be exactly its NPUs, or exactly `members` when given (in rank order
/// unless the rank_to_npu comment maps them), and every sender must have a route to its receiver.
/// `check_races` off skips the vector-clock race check (the costliest part on large files).
MscclVerifyResult verify_msccl_xml(const std::string& text, const Topology* topology = nullptr, bool check_races = true,
                                   std::span<const NodeId> members = {});

}  // namespace tenet
