// SPDX-License-Identifier: MIT
#pragma once
// A plan as the executor reads it (SPEC sections 2-8), shared by the writer (which builds one and
// prints it), the parser (which reads one) and the executor. Private to src/mscclpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tenet/schedule/schedule.hpp"

namespace tenet::mscclpp_detail {

// The SPEC's fixed limits (section 6.5).
constexpr int kMaxOpsPerThreadblock = 64;
constexpr int kMaxChannelIdsPerOp = 8;
constexpr int kMaxBuffersPerOp = 10;
constexpr int kMaxChannelsPerThreadblock = 16;       ///< per channel type
constexpr int kMaxRemoteBuffersPerThreadblock = 16;  ///< per access type
constexpr int kMaxSemaphoreIdsPerOp = 16;
constexpr int kMaxBarrierId = 15;
constexpr int kMaxThreadsPerBlock = 1024;

enum class BufferType : std::uint8_t { kInput, kOutput, kScratch };
enum class ChannelType : std::uint8_t { kNone, kMemory, kPort, kSwitch };

enum class OpName : std::uint8_t {
  kNop,
  kBarrier,
  kSignal,
  kRlxSignal,
  kWait,
  kRlxWait,
  kFlush,
  kPut,
  kPws,
  kPwsf,
  kGet,
  kCopy,
  kRe,
  kRes,
  kRre,
  kRres,
  kCpkt,
  kUpkt,
  kPpkt,
  kRppkt,
  kRepkt,
  kRespkt,
  kRecpkt,
  kRecspkt,
  kGlres,
  kGstore,
  kGstorepkt,
  kSemAcquire,
  kSemRelease,
  kPipeline
};

const char* op_name_text(OpName name);
std::optional<OpName> op_name_from(const std::string& text);
const char* buffer_type_text(BufferType type);    ///< "i", "o", "s"
const char* channel_type_text(ChannelType type);  ///< "none", "memory", "port", "switch"

/// A buffer entry: local ({"type", "index", "size"}) or a peer's ({"buffer_id", "index", "size"}).
struct BufferRef {
  bool remote = false;
  BufferType type = BufferType::kInput;  ///< local entries
  int buffer_id = -1;                    ///< remote entries: position in the block's list for the op's channel type
  int index = 0;
  int size = 0;
};

struct PlanOp {
  OpName name = OpName::kNop;
  ChannelType channel_type = ChannelType::kNone;
  bool has_channel_type = false;  ///< printed only when the op names one
  std::vector<int> channel_ids;
  std::vector<BufferRef> src;
  std::vector<BufferRef> dst;
  std::vector<int> semaphore_ids;
  int barrier_id = -1;
  int num_threadblocks = 0;
};

struct PlanThreadblock {
  std::vector<PlanOp> ops;
  std::vector<int> memory_channels;  ///< rank-level memory channel index per block position
  std::vector<int> port_channels;
  std::vector<int> memory_buffers;  ///< remote buffer id per block position, memory access
  std::vector<int> port_buffers;
};

struct RemoteBuffer {
  int rank = 0;
  BufferType type = BufferType::kOutput;
  bool memory = false;
  bool port = false;
};

struct PlanGpu {
  int input_chunks = 1;
  int output_chunks = 1;
  int scratch_chunks = 0;
  std::vector<int> memory_peers;  ///< peer of each memory channel, in rank-level order
  std::vector<int> port_peers;
  std::vector<RemoteBuffer> remote_buffers;
  std::vector<std::int64_t> semaphores;  ///< initial values
  std::vector<PlanThreadblock> threadblocks;
  bool has_switch_channels = false;  ///< read but not executed by tenet
};

struct Plan {
  std::string name;
  std::string collective;
  std::string protocol = "Simple";
  bool in_place = false;
  bool reuse_resources = false;
  bool double_scratch = false;
  std::uint64_t buffer_alignment = 16;
  std::uint64_t min_message_size = 0;
  std::uint64_t max_message_size = ~std::uint64_t{0};
  int threads_per_block = 1024;
  std::vector<PlanGpu> gpus;

  bool ll() const { return protocol == "LL"; }
};

/// The plan as JSON text in the layout of the SPEC's example (one op per line).
std::string plan_to_text(const Plan& plan);

/// Parses plan JSON; InputError naming `source` and the JSON pointer for malformed JSON, missing or
/// wrongly typed fields and unknown names. References and limits are plan_rules' job.
Plan parse_plan(const std::string& text, const std::string& source);

/// The first broken rule of SPEC sections 2-7 (references in range, channel pairing, limits,
/// sizes), as "POINTER: message", or "" when there is none.
std::string check_plan_rules(const Plan& plan);

/// A transfer the execution observed, for the simulator.
struct ObservedTransfer {
  int src_rank = 0;
  int dst_rank = 0;
  int first_chunk = 0;  ///< in the destination buffer
  int chunks = 0;
  std::vector<std::uint32_t> deps;  ///< earlier observed transfers
};

struct ExecutionResult {
  std::string error;  ///< "" when the plan ran to completion with the collective's result
  bool races_checked = false;
  std::vector<ObservedTransfer> transfers;
};

/// Executes the plan (rules already checked) symbolically. `check_result` compares the final
/// buffers with the collective's result; `record` keeps the transfers.
ExecutionResult execute_plan(const Plan& plan, bool check_result, bool record);

/// The transfers an execution recorded, as a schedule of the plan's collective of `size_bytes`
/// with rank r on NPU members[r] (plan_verify.cpp): what the simulator times.
Schedule executed_schedule(const Plan& plan, const ExecutionResult& execution, std::uint64_t size_bytes,
                           const std::vector<NodeId>& members);

}  // namespace tenet::mscclpp_detail
