// SPDX-License-Identifier: MIT
// The tree method's limits: the replay budget (synthesize_with_trees' max_replay_work), where a
// trial whose replay needs more refill work drops out and a budget every replay fits changes
// nothing; the time to beat (to_beat_us), past which replays stop; and a file's room per rank (file_transfers_per_rank), which caps the pieces.

#include "../support/catch.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../src/synth/tree_method.hpp"
#include "../support/collectives.hpp"

using namespace tenet;
using namespace tenet::testing;

TEST_CASE("a tree trial whose replay passes the work budget drops out", "[synth][trees]") {
  // Two A100 boxes: the trees' flows share the NVSwitches and the IB switches, so every replay
  // refills rates.
  const Topology topology = shipped("a100-2x8-ib");
  const std::vector<NodeId> members = all_npus(topology);
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    INFO(collective_name(kind));
    const std::uint64_t size = std::uint64_t{64} << 20;
    const auto unlimited = synth::synthesize_with_trees(topology, kind, size, members, 3e5);
    REQUIRE(unlimited);
    const auto roomy =
        synth::synthesize_with_trees(topology, kind, size, members, 3e5, {}, false, {}, std::uint64_t{1} << 62);
    REQUIRE(roomy);
    CHECK(roomy->score_us == unlimited->score_us);
    CHECK(roomy->pieces == unlimited->pieces);
    // No replay finishes within one refill's worth: no trial is left.
    CHECK_FALSE(synth::synthesize_with_trees(topology, kind, size, members, 3e5, {}, false, {}, 1));
  }
}

TEST_CASE("tree replays that provably lose to the time to beat stop early, and change nothing else", "[synth][trees]") {
  const Topology topology = shipped("a100-2x8-ib");
  const std::vector<NodeId> members = all_npus(topology);
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kAllReduce}) {
    INFO(collective_name(kind));
    const std::uint64_t size = std::uint64_t{64} << 20;
    const auto unlimited = synth::synthesize_with_trees(topology, kind, size, members, 3e5);
    REQUIRE(unlimited);
    // Just above the winner: the same winner, replayed to the end.
    const auto just_above = synth::synthesize_with_trees(topology, kind, size, members, 3e5, {}, false, {}, 0, 0,
                                                         unlimited->score_us * (1 + 1e-9));
    REQUIRE(just_above);
    CHECK(just_above->score_us == unlimited->score_us);
    CHECK(just_above->pieces == unlimited->pieces);
    CHECK(just_above->schedule.size() == unlimited->schedule.size());
    CHECK(just_above->replay.simulated);
    // Far below it: every replay stops or is skipped, and nothing comes back.
    CHECK_FALSE(synth::synthesize_with_trees(topology, kind, size, members, 3e5, {}, false, {}, 0, 0,
                                             unlimited->score_us * 0.5));
  }
}

namespace {

/// The most transfers one NPU sends and receives in `schedule`.
std::uint64_t busiest_transfer_ends(const Schedule& schedule, std::size_t nodes) {
  std::vector<std::uint64_t> ends(nodes, 0);
  for (const Transfer& transfer : schedule.transfers()) {
    ++ends[transfer.src];
    ++ends[transfer.dst];
  }
  return *std::max_element(ends.begin(), ends.end());
}

}  // namespace

TEST_CASE("a file's room per rank caps how many pieces the trees are cut into", "[synth][trees]") {
  // mesh-3x3 all-reduce of 256 MiB: unlimited, the trees' deepest pipelines win; a file whose
  // ranks hold 200 transfers gets trees of as many pieces as fit it.
  const Topology topology = shipped("mesh-3x3");
  const std::vector<NodeId> members = all_npus(topology);
  const std::uint64_t size = std::uint64_t{256} << 20;
  const auto by_plan = [](const Schedule& schedule) { return schedule.planned_time_us(); };
  const auto unlimited = synth::synthesize_with_trees(topology, CollectiveKind::kAllReduce, size, members, 3e5, by_plan,
                                                      false, {}, std::uint64_t{1} << 62, 0);
  REQUIRE(unlimited);
  CHECK(busiest_transfer_ends(unlimited->schedule, topology.node_count()) > 200);
  const auto roomed = synth::synthesize_with_trees(topology, CollectiveKind::kAllReduce, size, members, 3e5, by_plan,
                                                   false, {}, std::uint64_t{1} << 62, 200);
  REQUIRE(roomed);
  CHECK(busiest_transfer_ends(roomed->schedule, topology.node_count()) <= 200);
  CHECK(roomed->pieces < unlimited->pieces);
}
