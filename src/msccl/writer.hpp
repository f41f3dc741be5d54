// SPDX-License-Identifier: MIT
#pragma once
// The writer's plan, between a Schedule and its text. Private to src/msccl.
//
// layout.cpp turns transfers into pieces (runs of chunks contiguous in every buffer they
// touch) and operations (a send on the sender, a receive on the receiver) and deals them to
// channels; threadblocks.cpp groups them into threadblocks in replay order and fuses a
// receive with the send that forwards it into one step.
// deps.cpp adds the dependencies that order conflicting accesses from different threadblocks
// and places nops. program_text.cpp turns the plan into the program and its text; write.cpp
// checks the limits, times the program and verifies the text.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "internal.hpp"
#include "tenet/schedule/effective_times.hpp"
#include "tenet/schedule/schedule.hpp"

namespace tenet::msccl_detail {

/// A chunk position in a rank's buffers; index -1: nowhere (an all-gather chunk not yet received).
struct Location {
  MscclBuffer buffer = MscclBuffer::kInput;
  int index = -1;
  bool operator==(const Location&) const = default;
};

constexpr TransferId kNoTransfer = ~TransferId{0};

/// Where each chunk of each transfer is read and written (chunk_places.cpp): one entry per chunk
/// of each transfer, transfer t's from entry_base[t].
struct ChunkPlaces {
  std::vector<std::uint64_t> entry_base;
  std::vector<Location> read;              ///< on the sender
  std::vector<Location> write;             ///< on the receiver
  std::vector<Location> operand;           ///< the receiver's own value a reduction adds
  std::vector<TransferId> writer_of_read;  ///< the transfer that last wrote what is read, or kNoTransfer
  std::vector<char> written;               ///< rank x chunk: received into at some point
  std::vector<std::uint64_t> send_event;   ///< replay events: sends at their start, receives at their end
  std::vector<std::uint64_t> recv_event;
  std::vector<TransferId> start_order;
};

/// What the writer knows about the collective, fixed for all layouts it tries.
struct WriterContext {
  const Schedule* schedule = nullptr;
  CollectiveKind coll = CollectiveKind::kAllReduce;
  bool in_place = true;
  int ranks = 0;
  int per_rank = 1;  ///< chunks per member (C in SPEC)
  int chunks = 0;    ///< nchunksperloop (N)
  int fifo_calls = 2;
  std::vector<int> rank_of;  ///< NPU id -> rank, -1 for non-members
  ChunkPlaces places;        ///< place_chunks(), before any layout

  /// Index of (rank, chunk) in rank x chunk tables (ChunkPlaces::written).
  std::size_t slot(int rank, ChunkId chunk) const {
    return static_cast<std::size_t>(rank) * static_cast<std::size_t>(chunks) + chunk;
  }
};

/// Where `rank` holds `chunk` before it receives into it ({} for an all-gather chunk it does not
/// have), and where it keeps it from its first receive on (layout.cpp's mapping).
Location initial_place(const WriterContext& context, int rank, int chunk);
Location work_place(const WriterContext& context, int rank, int chunk);

/// Replays the schedule in the verifier's event order.
ChunkPlaces place_chunks(const WriterContext& context);

/// Choices one attempt makes; write.cpp retries with safer ones when a layout fails.
struct LayoutChoices {
  bool pair = true;     ///< pair a receive peer with a send peer in one tb, fusing forwards
  int cap = kMaxCount;  ///< largest cnt of one step
  std::uint32_t channels = 1;
  /// Sends also wait for the transfers of this rank their transfer depends on in the schedule
  /// (a switch port's planned order), not only for their data (deps.cpp).
  bool schedule_order = false;
  /// A transfer whose chunks lie apart in a buffer is one step through scratch: local copies
  /// gather them before the send and spread them after the receive (layout.cpp), instead of a
  /// step per contiguous run, each paying the route's alpha.
  bool stage = false;
  /// A transfer takes the lane of the transfer between the same pair that it waits for, where
  /// that one is the lane's last (layout.cpp): a chain of pieces keeps to one threadblock.
  bool chain_lanes = false;
  /// A send side and a receive side of the same peer and channel left unpaired share one tb (an
  /// all-to-all's rank then needs one tb per peer, not two): tried where the runtime's 128
  /// threadblocks that others can wait for run out otherwise (a 72-GPU switch's direct plan).
  bool pair_peers = false;
  /// Data received once and sent on by several pieces is fused into one of those sends too. A
  /// fused step ends once its send has crossed, and the other sends wait for it (a direct
  /// all-reduce's last reduction and its 127 sends on a 4x4x8 torus: 23.0 us against 16.0 unfused);
  /// trees' pieces gain from it (hypercube3d-4x4x4 all-reduce of 16 MiB: 231.8 us against 236.9).
  bool fuse_shared = true;
  /// The staging region holds this many times the collective's chunks. Reused round robin, a
  /// block's next use waits for its last, and where a round of staged steps each become several
  /// calls those waits can close a cycle (a 144-GPU switch's all-reduce of 1 MiB in synchronous
  /// rounds deadlocked at 1x); more room, more scratch (s_chunks), fewer reuses.
  int staging_room = 1;
};
/// The staging room tried where a staged layout at 1x failed (write.cpp): 4x held every staged
/// block of that all-reduce without reuse (460-481 scratch chunks on 144).
constexpr int kRoomyStaging = 4;

struct Piece {
  TransferId transfer = 0;
  int sender = 0;
  int receiver = 0;
  bool reduce = false;
  int cnt = 0;
  std::uint64_t entry = 0;  ///< its first chunk, as an index into the writer's per-chunk arrays
  Location read;            ///< on the sender
  Location write;           ///< on the receiver
  Location operand;         ///< the receiver's local operand of a reduction
  std::uint64_t send_event = 0;
  std::uint64_t recv_event = 0;
  int part = 0;  ///< index among its transfer's pieces
  int channel = 0;
  int forwards = -1;  ///< the received piece whose data this one sends on unchanged, if any
};

enum class OpKind { kSend, kRecv, kFused, kCopy };

/// One step-to-be. Order is (event, part): the replay event of the access (start for a send, end
/// for a receive, -1 for the out-of-place copies that come first).
struct Op {
  OpKind kind = OpKind::kSend;
  int piece = -1;     ///< kSend / kRecv: the piece; kFused: the piece received
  int forward = -1;   ///< kFused: the piece sent on
  Location copy_src;  ///< kCopy
  Location copy_dst;
  int copy_cnt = 0;
  /// kCopy staging a piece (LayoutChoices::stage): the piece, run in the threadblock of its send
  /// (`staged_send`) or of its receive; -1 for the out-of-place copies, which run first in tb 0.
  int staged_piece = -1;
  bool staged_send = false;
  /// kCopy: adds copy_src into copy_dst (`re`: a staged reduction's received runs into place).
  bool copy_reduces = false;
  std::int64_t event = 0;
  int part = 0;
  int tb = -1;                            ///< -1: absorbed into a fused op
  int index = 0;                          ///< in its tb
  int position = 0;                       ///< XML position in its tb (after nops)
  std::vector<std::pair<int, int>> deps;  ///< (tb, index in that tb), later (tb, position)
  bool awaited = false;

  bool before(const Op& other) const { return event != other.event ? event < other.event : part < other.part; }
};

struct PlannedTb {
  int send = -1;
  int recv = -1;
  int chan = 0;
  std::vector<int> ops;  ///< indices into RankPlan::ops, in order
  int positions = 0;     ///< XML steps, nops included
};

struct RankPlan {
  std::vector<Op> ops;
  std::vector<PlannedTb> tbs;
  /// Scratch chunks its staging blocks reach (LayoutChoices::stage), 0 without.
  int s_chunks = 0;
};

struct Plan {
  std::vector<Piece> pieces;
  std::vector<RankPlan> ranks;
  int nchannels = 1;
  bool schedule_order = false;  ///< LayoutChoices::schedule_order
  bool pair_peers = false;      ///< LayoutChoices::pair_peers
};

/// A limit the layout exceeds; `channels_help` when spreading over more channels could fix it.
struct LimitProblem {
  std::string message;
  bool channels_help = false;
  bool fewer_channels_help = false;
  double excess = 1.0;  ///< needed / allowed, to estimate how many fewer chunks would fit
  int tb_steps = 0;     ///< the most steps of one threadblock, to estimate channels for fewer chunks
};

/// Pieces, channels, threadblocks and fused steps. False (with `problem`) when a limit that
/// cannot be split around is exceeded (channels).
bool lay_out(const WriterContext& context, const LayoutChoices& choices, Plan& plan, LimitProblem& problem);

/// Groups each rank's operations into threadblocks, orders them, and fuses forwards
/// (threadblocks.cpp; called by lay_out).
void form_threadblocks(const WriterContext& context, const LayoutChoices& choices, Plan& plan);

/// Most transfers in flight at once between one pair of ranks (sender, receiver).
int lanes_needed(const Schedule& schedule, const EffectiveTimes& times);

/// The schedule with each pair's transfers on at most `lanes` lanes (each waits for the one
/// before it on its lane), retimed by simulating it on `topology` (serialize.cpp).
Schedule serialized_pairs(const Schedule& schedule, const EffectiveTimes& times, const Topology& topology, int lanes);

/// Runs of consecutive chunk ids in `chunks` (0 when empty).
std::size_t consecutive_runs(std::span<const ChunkId> chunks);

/// The schedule with each transfer cut into one transfer per run of consecutive chunks, one after
/// the other, retimed by simulating it on `topology`; nullopt when every transfer is one run. A
/// file's step carries a contiguous piece of a buffer, so a transfer of chunks 3, 7 and 8 is two
/// steps, each paying the route's alpha, unless it is staged through scratch as one step
/// (LayoutChoices::stage): so only transfers of more chunks than one step carries are cut
/// (serialize.cpp).
std::optional<Schedule> one_transfer_per_step(const Schedule& schedule, const Topology& topology);

/// The schedule with each chunk cut into `pieces` chunks (piece j of chunk c is chunk
/// c * pieces + j) and each transfer into one transfer per piece, in that order, with the
/// transfer's times: `pieces` copies of the schedule on 1/pieces of the data each. Requires
/// transfers of one chunk each (serialize.cpp).
Schedule split_chunks(const Schedule& schedule, std::uint32_t pieces);

/// The schedule with each transfer of more chunks than one of the runtime's primitive calls moves
/// (`max_allowed_count`, MscclRuntimeModel) cut into equal transfers of at most that many, side by
/// side (same times; what waited for it waits for all of them); nullopt where none is that large.
/// A step is one call per max_allowed_count chunks, one after the other, each paying the route's
/// alpha; transfers side by side take lanes and channels of their own and pay it once, together
/// (serialize.cpp).
std::optional<Schedule> calls_side_by_side(const Schedule& schedule, int max_allowed_count);

/// The schedule with each member's chunks renumbered so that chunks carried by the same transfers
/// are consecutive, where that spares at least a tenth as many runs of consecutive chunks as it
/// has transfers; nullopt where it would not (chunk_order.cpp).
std::optional<Schedule> chunks_side_by_side(const Schedule& schedule);

/// Dependencies for every cross-threadblock conflict on one rank, pruned transitively, then nops
/// and XML positions. False (with `problem`) past the step, node or dependency limits.
bool add_dependencies(const WriterContext& context, Plan& plan, LimitProblem& problem);

/// The program the plan's file holds, as parse_msccl_xml reads it back from print_program's text
/// (program_text.cpp): `header` gives the <algo> fields but nchannels, and its line; the plan
/// gives the channels, gpus, threadblocks and steps, each with its line.
MscclProgram plan_program(const WriterContext& context, const Plan& plan, MscclProgram header);

/// The program's text after `preamble` (whole comment lines), in the layout the runtime's
/// reader takes and msccl-tools writes (SPEC section 10).
std::string print_program(const MscclProgram& program, const std::string& preamble);

/// `compute`'s time of `program` run at `size_bytes` with its ranks on `members` of `topology`,
/// remembered for the process (runtime_time_memo.cpp): the same program is timed many times.
double remembered_runtime_time_us(const MscclProgram& program, std::uint64_t size_bytes,
                                  std::span<const NodeId> members, const Topology& topology,
                                  const std::function<double()>& compute);

}  // namespace tenet::msccl_detail
