// SPDX-License-Identifier: MIT
// The tree method's replay budget (synthesize_with_trees' max_replay_work): a trial whose replay
// needs more refill work drops out, and a budget every replay fits changes nothing.

#include "../support/catch.hpp"

#include <cstdint>

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
