// SPDX-License-Identifier: MIT
#pragma once
// What is being computed: the collective, its size and how it is cut into chunks, and who takes
// part. Sizes follow DESIGN.md: `size_bytes` is the whole vector (all-reduce vector, all-gather
// output, reduce-scatter input); each member's block is size/members.

#include <cstdint>
#include <string>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet {

enum class CollectiveKind { kAllGather, kReduceScatter, kAllReduce };

/// Most chunks per NPU tenet synthesizes or reads (--chunks-per-npu, a schedule file's
/// chunks_per_member): pipelining gains nothing from more, and per-chunk state stays small.
constexpr std::uint32_t kMaxChunksPerNpu = 1u << 16;

/// "allgather", "reducescatter", "allreduce".
std::string collective_name(CollectiveKind kind);
/// Parses the names above (also "all-gather", "all_gather", "reduce-scatter", "ag", "rs", "ar").
/// Throws InputError naming `option`, with a suggestion, for anything else.
CollectiveKind parse_collective(const std::string& text, const std::string& option);

struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::uint64_t size_bytes = 0;
  std::uint32_t chunks_per_npu = 1;
  /// Participating NPUs (current ids, ascending); empty means every NPU. Non-members only forward.
  std::vector<NodeId> members;

  /// The members, or every NPU of `topology` when `members` is empty.
  std::vector<NodeId> participants(const Topology& topology) const;
};

}  // namespace tenet
