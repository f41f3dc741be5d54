// SPDX-License-Identifier: MIT
// Direct reduce-scatter / all-gather / all-reduce.
//
// Follows TACOS (Won et al.) Sec. II-B and Fig. 5 ("Direct", contention free on a fully connected
// network) and its baseline list in Sec. V-A: reduce-scatter in one step, where every member i
// sends every other member j the block j owns and j reduces it; all-gather in one step, where every
// owner sends its block to every other member; all-reduce is the one then the other. On a fully
// connected network every transfer has its own link, so each phase takes alpha + n/(p*B).
//
// Size: p(p-1) transfers a phase by nature. Each of a member's all-gather sends in an all-reduce
// waits on the p-1 reductions into it; those sends share one stored dependency list
// (ScheduleBuilder::add_sharing_deps), so the schedule stays O(p^2), not O(p^3).

#include "builder.hpp"

namespace tenet::baselines {
namespace {

/// Each all-gather send of a direct all-reduce waits on the p-1 reductions into its source: the
/// DAG has p(p-1)^2 dependency edges (stored once per source, but every consumer, the verifier and
/// the simulator, walks them all). 1,024 members is about 10^9 edges, seconds to check.
constexpr std::size_t kMaxDirectAllReduceMembers = 1024;

}  // namespace

BaselineResult generate_direct(const Topology& topology, const Collective& collective) {
  const std::vector<NodeId> members = collective.participants(topology);
  const std::size_t p = members.size();
  const bool all_reduce = collective.kind == CollectiveKind::kAllReduce;
  const std::uint64_t transfers = std::uint64_t{p} * (p - 1) * (all_reduce ? 2 : 1);
  if (transfers > kMaxBaselineTransfers) return too_many_transfers("direct", p, transfers);
  if (all_reduce && p > kMaxDirectAllReduceMembers) {
    return not_applicable("direct all-reduce on " + std::to_string(p) +
                          " members has p(p-1)^2 = " + std::to_string(std::uint64_t{p} * (p - 1) * (p - 1)) +
                          " dependencies (each all-gather send waits on every reduction into its source); it is "
                          "generated for at most " +
                          std::to_string(kMaxDirectAllReduceMembers) + " members");
  }
  ScheduleBuilder builder(topology, collective, "direct", 1);
  builder.schedule().reserve(p * (p - 1) * (all_reduce ? 2 : 1), p * (p - 1) * (all_reduce ? 2 : 1),
                             all_reduce ? p * (p - 1) : 0);

  // Reduce-scatter: source-major, so the reduction from member i into member j has id
  // first + i * (p-1) + (j < i ? j : j - 1).
  const TransferId first = static_cast<TransferId>(builder.schedule().size());
  if (collective.kind != CollectiveKind::kAllGather) {
    for (std::size_t i = 0; i < p; ++i) {
      builder.warm_source(members[i]);
      for (std::size_t j = 0; j < p; ++j) {
        if (j == i) continue;
        const ChunkId chunk = static_cast<ChunkId>(j);
        builder.add(members[i], members[j], TransferKind::kReduce, std::span(&chunk, 1), {});
      }
    }
  }
  if (collective.kind != CollectiveKind::kReduceScatter) {
    std::vector<TransferId> into;  // the reductions into the sending owner
    for (std::size_t j = 0; j < p; ++j) {
      builder.warm_source(members[j]);
      const ChunkId chunk = static_cast<ChunkId>(j);
      into.clear();
      if (all_reduce) {
        for (std::size_t i = 0; i < p; ++i) {
          if (i != j) into.push_back(first + static_cast<TransferId>(i * (p - 1) + (j < i ? j : j - 1)));
        }
      }
      TransferId sibling = 0;
      bool have_sibling = false;
      for (std::size_t k = 0; k < p; ++k) {
        if (k == j) continue;
        if (!have_sibling) {
          sibling = builder.add(members[j], members[k], TransferKind::kCopy, std::span(&chunk, 1), into);
          have_sibling = true;
        } else {
          builder.add_sharing_deps(sibling, members[j], members[k], TransferKind::kCopy, std::span(&chunk, 1));
        }
      }
    }
  }
  return builder.finish();
}

}  // namespace tenet::baselines
