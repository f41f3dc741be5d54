// SPDX-License-Identifier: MIT
// Circulant-graph collectives for any number of processes: Träff, Hunold, Vardas, Funk, "Uniform
// Algorithms for Reduce-scatter and (most) other Collectives for MPI", Sec. III-A (skips and the
// correction term epsilon, Listing 1), III-D (reduce-scatter, Eq. (1), Listings 5-6), III-E
// (all-gather, Listing 7), III-G (all-reduce = reduce-scatter + all-gather); the pattern is Bar-Noy,
// Kipnis and Schieber's. One-ported: one block per member (chunks_per_member = 1), one lane,
// members numbered 0..p-1 in id order, transfers routed by the simulator. The index logic is
// declared in include/tenet/baselines/circulant.hpp.
//
// - All-gather, any p: in round k process r sends to t = r - skips[k] + epsilon_k the
//   skips[k+1] - skips[k] blocks r + epsilon_k, ... (Listing 7's takebuf); after round k it holds
//   the blocks r .. r + skips[k+1] - 1, so every process receives each of the p - 1 others once.
//   Table I: ceil(log2 p) alpha + (p-1)/p n beta.
// - Reduce-scatter: in round k process r reduces into t the partial sums of the blocks B_r^k.
//   When p is a power of two (every epsilon_k = 0) the B_r^k partition the other p - 1 blocks and
//   every block travels a tree into its owner: Table I's (2^q - 1)/p n = (p-1)/p n. When p is not
//   a power of two the algorithm sends 2^q - 1 > p - 1 block sums per process, so some block
//   leaves a process twice, and in epsilon_k = 1 rounds it sends sums that leave out its own
//   input (Listing 6 copies tempbuf into partbuf without V_r). In the IR a reduce carries the
//   sender's whole accumulator, own input included (reduce-scatter allows no copies), so a block
//   can leave a process only once: not expressible, reported as not applicable.
// - All-reduce: reduce-scatter then all-gather (Sec. III-G), so applicable when p is a power of
//   two. The direct algorithm (Sec. III-B, Listing 2, the `kDirect` variant) is not expressible
//   at all: in every round a process sends its running sum to t while it receives f's into it,
//   which needs a receive buffer apart from the accumulator (no dependency can make f's reduce
//   land after r's send has read without also delaying f's own send: the sends form a cycle
//   around the circulant graph), and in epsilon_k = 1 rounds it sends the sum without its own
//   input (the second accumulator partbuf of Listing 2).

#include "tenet/baselines/circulant.hpp"

#include <bit>

#include "step_plan.hpp"

namespace tenet::circulant {

std::vector<std::uint32_t> skips(std::uint32_t p) {
  // The halving chain p, ceil(p/2), ..., 1, stored from the end.
  std::vector<std::uint32_t> chain{p};
  while (chain.back() > 1) chain.push_back(chain.back() - chain.back() / 2);
  return {chain.rbegin(), chain.rend()};
}

std::uint32_t rounds(std::uint32_t p) { return p <= 1 ? 0 : static_cast<std::uint32_t>(std::bit_width(p - 1)); }

std::uint32_t epsilon(const std::vector<std::uint32_t>& skips, std::uint32_t round) {
  return skips[round + 1] % 2 == 1 ? 1 : 0;
}

std::uint32_t to_process(std::uint32_t rank, std::uint32_t round, std::uint32_t p) {
  const std::vector<std::uint32_t> s = skips(p);
  const std::uint32_t jump = s[round] - epsilon(s, round);
  return (rank + p - jump % p) % p;
}

std::uint32_t from_process(std::uint32_t rank, std::uint32_t round, std::uint32_t p) {
  const std::vector<std::uint32_t> s = skips(p);
  const std::uint32_t jump = s[round] - epsilon(s, round);
  return static_cast<std::uint32_t>((std::uint64_t{rank} + jump) % p);
}

std::vector<std::uint32_t> reduce_scatter_blocks(std::uint32_t rank, std::uint32_t round, std::uint32_t p) {
  const std::vector<std::uint32_t> s = skips(p);
  const std::uint32_t q = rounds(p);
  // Listing 5: relative_blocks(off, k) lists off + jump_i for i = k..q-1, each followed by its own
  // relative_blocks(off + jump_i, i + 1); B_r^k is the branch that starts with i = k, and the
  // blocks are the processes r - offset.
  std::vector<std::uint64_t> offsets;
  struct Frame {
    std::uint64_t offset;
    std::uint32_t from;
  };
  std::vector<Frame> stack{{s[round] - epsilon(s, round), round + 1}};
  while (!stack.empty()) {
    const Frame frame = stack.back();
    stack.pop_back();
    offsets.push_back(frame.offset);
    for (std::uint32_t i = q; i-- > frame.from;) stack.push_back({frame.offset + s[i] - epsilon(s, i), i + 1});
  }
  std::vector<std::uint32_t> blocks;
  blocks.reserve(offsets.size());
  for (std::uint64_t offset : offsets) blocks.push_back(static_cast<std::uint32_t>((rank + p - offset % p) % p));
  return blocks;
}

std::vector<std::uint32_t> all_gather_blocks(std::uint32_t rank, std::uint32_t round, std::uint32_t p) {
  const std::vector<std::uint32_t> s = skips(p);
  const std::uint32_t first = rank + epsilon(s, round);
  std::vector<std::uint32_t> blocks;
  for (std::uint32_t j = 0; j < s[round + 1] - s[round]; ++j) {
    blocks.push_back(static_cast<std::uint32_t>((std::uint64_t{first} + j) % p));
  }
  return blocks;
}

}  // namespace tenet::circulant

namespace tenet::baselines {
namespace {

StepPlan all_gather_plan(std::uint32_t p) {
  const std::uint32_t q = circulant::rounds(p);
  StepPlan plan(q);
  std::vector<ChunkId> chunks;
  for (std::uint32_t round = 0; round < q; ++round) {
    for (std::uint32_t rank = 0; rank < p; ++rank) {
      const std::vector<std::uint32_t> blocks = circulant::all_gather_blocks(rank, round, p);
      chunks.assign(blocks.begin(), blocks.end());
      plan.add(round, 0, rank, circulant::to_process(rank, round, p), chunks);
    }
  }
  return plan;
}

StepPlan reduce_scatter_plan(std::uint32_t p) {
  const std::uint32_t q = circulant::rounds(p);
  StepPlan plan(q);
  std::vector<ChunkId> chunks;
  for (std::uint32_t round = 0; round < q; ++round) {
    for (std::uint32_t rank = 0; rank < p; ++rank) {
      const std::vector<std::uint32_t> blocks = circulant::reduce_scatter_blocks(rank, round, p);
      chunks.assign(blocks.begin(), blocks.end());
      plan.add(round, 0, rank, circulant::to_process(rank, round, p), chunks);
    }
  }
  return plan;
}

std::string rs_not_expressible(std::uint32_t p, const char* what) {
  const std::uint32_t q = circulant::rounds(p);
  std::string reason = "circulant ";
  reason += what;
  reason += " on ";
  reason += std::to_string(p);
  reason += " NPUs (not a power of two) is not expressible: Traff's reduce-scatter sends 2^";
  reason += std::to_string(q);
  reason += " - 1 = ";
  reason += std::to_string((std::uint64_t{1} << q) - 1);
  reason += " block sums per NPU for ";
  reason += std::to_string(p - 1);
  reason +=
      " blocks, some as sums without the sender's own input (epsilon = 1 rounds); in the schedule IR a "
      "reduce always carries the sender's whole accumulator, so a block can leave an NPU only once";
  return reason;
}

}  // namespace

BaselineResult generate_circulant(const Topology& topology, const Collective& collective) {
  return tenet::generate_circulant(topology, collective, CirculantAllReduce::kReduceScatterAllGather);
}

}  // namespace tenet::baselines

namespace tenet {

BaselineResult generate_circulant(const Topology& topology, const Collective& collective, CirculantAllReduce variant) {
  using baselines::not_applicable;
  const std::uint32_t p = static_cast<std::uint32_t>(collective.participants(topology).size());
  const bool power_of_two = std::has_single_bit(p);
  if (variant == CirculantAllReduce::kDirect) {
    if (collective.kind != CollectiveKind::kAllReduce) {
      return not_applicable("the direct circulant algorithm (Traff Sec. III-B) is an all-reduce; use circulant");
    }
    std::string reason =
        "the direct circulant all-reduce (Traff Sec. III-B) is not expressible: each round an NPU sends its "
        "running sum while the next partial sum is reduced into it, which needs a receive buffer apart from "
        "the accumulator; the schedule IR has one accumulator per NPU and chunk";
    if (!power_of_two) reason += " (and epsilon = 1 rounds send the sum without the sender's own input)";
    return not_applicable(reason);
  }
  if (!power_of_two && collective.kind != CollectiveKind::kAllGather) {
    return not_applicable(baselines::rs_not_expressible(p, collective.kind == CollectiveKind::kAllReduce
                                                               ? "all-reduce (reduce-scatter + all-gather)"
                                                               : "reduce-scatter"));
  }
  baselines::ScheduleBuilder builder(topology, collective, "circulant", 1);
  baselines::StepEmitter emitter(builder, 1);
  switch (collective.kind) {
    case CollectiveKind::kReduceScatter:
      emitter.emit(baselines::reduce_scatter_plan(p), TransferKind::kReduce, false);
      break;
    case CollectiveKind::kAllGather: emitter.emit(baselines::all_gather_plan(p), TransferKind::kCopy, false); break;
    case CollectiveKind::kAllReduce:
      emitter.emit(baselines::reduce_scatter_plan(p), TransferKind::kReduce, false);
      emitter.emit(baselines::all_gather_plan(p), TransferKind::kCopy, false);
      break;
  }
  return builder.finish();
}

}  // namespace tenet
