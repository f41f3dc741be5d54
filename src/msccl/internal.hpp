// SPDX-License-Identifier: MIT
#pragma once
// The MSCCL checker's passes and what they share (see msccl.hpp for the model). Private to src/msccl.
//
// verify_msccl_xml: scan_text (the runtime reader's lexical rules) -> parse_program (pugixml) ->
// load_program (every load rule; steps become the transfers the interpreter runs) ->
// execute_program (once per way buffer size splits steps into calls).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tenet/msccl/msccl.hpp"

namespace tenet::msccl_detail {

// Runtime constants (SPEC section 8).
constexpr int kMaxSteps = 256;           ///< positions per threadblock (`s` in 0..255)
constexpr int kMaxThreadblocks = 216;    ///< per rank
constexpr int kMaxDependencyTb = 127;    ///< int8 dependentBid
constexpr int kMaxPeersPerChannel = 32;  ///< tbs with a send (recv) peer per channel
constexpr int kMaxChannels = 32;
constexpr int kMaxCount = 71;       ///< cnt of one step
constexpr int kMaxNodes = 4095;     ///< XML nodes one rank loads: 1 + gpus + its tbs + its steps
constexpr int kMaxChildren = 1024;  ///< children of one element (MAX_SUBS): the <gpu>s of <algo>
constexpr int kMaxOffset = 32767;   ///< int16 chunk offsets
/// Chunks of one buffer a step can reach: offsets up to kMaxOffset, kMaxCount chunks from there.
constexpr int kMaxAddressableChunks = kMaxOffset + kMaxCount;
constexpr int kMaxReduceFusion = 16;
constexpr int kMaxAttributes = 16;
constexpr int kMaxNameLength = 253;
constexpr int kMaxValueLength = 255;

/// The runtime reader's view of the text: the first lexical problem ("line 3: ...") or "", and
/// the comments with their lines.
struct TextScan {
  std::string problem;
  std::vector<std::pair<int, std::string>> comments;
};
TextScan scan_text(std::string_view text);

/// Builds the program from well-formed text with pugixml; the first problem or "".
std::string parse_program(const std::string& text, MscclProgram& program);

/// The NPU (topology vertex) of each rank: from the rank_to_npu comment (topology-file ids), or
/// rank r = the r-th of `members` (all the topology's NPUs when empty). The ranks must be exactly
/// those NPUs. The first problem or "".
std::string map_ranks(const MscclProgram& program, const Topology& topology, std::span<const NodeId> members,
                      std::vector<NodeId>& npus);

struct LoadedProgram;
/// Every connection's sender can reach its receiver on the topology; the first problem or "".
std::string check_routes(const LoadedProgram& loaded, const Topology& topology, const std::vector<NodeId>& npus);

/// A transfer as the loader builds it from steps (SPEC 6.3, 6.4): nops fold into the next step's
/// dependencies, consecutive `re` steps fuse.
struct LoadedTransfer {
  MscclStepType type = MscclStepType::kNop;
  MscclBuffer srcbuf = MscclBuffer::kInput;
  MscclBuffer dstbuf = MscclBuffer::kOutput;
  int srcoff = 0;
  int dstoff = 0;
  int cnt = 0;
  std::vector<int> reduce_srcoffs;        ///< `re`: every fused source, in order
  std::vector<std::pair<int, int>> deps;  ///< (tb id, step counter value)
  bool hasdep = false;
  int counter = 0;   ///< the interpreter's step counter when it publishes
  int position = 0;  ///< XML position of the step that made it
  int line = 0;
};

struct LoadedThreadblock {
  int id = 0;
  int send = -1;
  int recv = -1;
  int chan = 0;
  std::vector<LoadedTransfer> transfers;
};

struct LoadedRank {
  int i_chunks = 0;
  int o_chunks = 0;
  int s_chunks = 0;  ///< scratch slots a step can reach: the declared count, at most kMaxAddressableChunks
  std::vector<LoadedThreadblock> threadblocks;  ///< index = tb id
};

struct LoadedProgram {
  CollectiveKind coll = CollectiveKind::kAllReduce;
  bool in_place = true;
  int ranks = 0;
  int chunks = 0;  ///< nchunksperloop
  MscclProtocol protocol = MscclProtocol::kSimple;
  int fifo_calls = 2;
  std::vector<LoadedRank> by_rank;
  int max_threadblocks = 0;
  int max_steps = 0;
  int channels = 0;
  /// load_program's problem is a limit of tenet's, not a fault of the file.
  bool beyond_limits = false;
};

/// Checks every load rule and the generator rules of SPEC section 1; the first problem or "".
std::string load_program(const MscclProgram& program, LoadedProgram& loaded);

/// The runtime's mscclMaxAllowedCount values worth executing: one per distinct way of splitting
/// the program's step counts into calls, 1 (largest buffers) first.
std::vector<int> distinct_splits(const LoadedProgram& loaded);

struct ExecutionOutcome {
  std::string problem;  ///< "" when the run finished and the result is the collective
  bool races_checked = false;
};

/// Runs the program as the interpreter does with steps split into calls of at most
/// `max_allowed_count` chunks; checks races (when affordable and `check_races`), deadlock and the
/// collective's postcondition numerically and symbolically.
ExecutionOutcome execute_program(const LoadedProgram& loaded, int max_allowed_count, bool check_races);

/// "line 7: rank 1 tb 0 step 2 (rcs)".
std::string step_label(int line, int rank, int tb, int position, MscclStepType type);

/// Sends a message / receives one, by step type.
bool sends(MscclStepType type);
bool receives(MscclStepType type);

}  // namespace tenet::msccl_detail
