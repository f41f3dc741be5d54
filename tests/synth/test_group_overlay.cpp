// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include "../../src/synth/group_overlay.hpp"
#include "../support/collectives.hpp"
#include "../support/sanitizers.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

TEST_CASE("the group overlay links each NPU to its leaf and to its peers under the other leaves", "[synth]") {
  // tree-4x8: 4 leaves of 8 NPUs under a root, every link 12.5 GB/s and 1 us.
  const Topology tree = shipped("tree-4x8");
  std::vector<NodeId> members(32);
  for (NodeId i = 0; i < 32; ++i) members[i] = i;
  const std::optional<synth::GroupOverlay> overlay = synth::group_overlay(tree, members);
  REQUIRE(overlay);
  CHECK(overlay->groups == 4);
  CHECK(overlay->topology.switch_count() == 0);
  // 7 leaf-mates and 3 peers each.
  REQUIRE(overlay->topology.link_count() == 32 * 10);
  std::size_t local = 0;
  for (const Link& link : overlay->topology.links()) {
    if (link.src / 8 == link.dst / 8) {
      ++local;
      // NPU port, leaf, NPU port: each port carries the 10 virtual links of its NPU.
      CHECK(link.latency_us == Approx(2.0));
      CHECK(link.bandwidth_GBps == Approx(12.5 / 10));
    } else {
      CHECK(link.src % 8 == link.dst % 8);
      // Up through the root and down: each leaf's uplink carries 8 NPUs x 3 peers.
      CHECK(link.latency_us == Approx(4.0));
      CHECK(link.bandwidth_GBps == Approx(12.5 / 24));
    }
  }
  CHECK(local == 32 * 7);

  // A sub-collective: groups of members only.
  const std::optional<synth::GroupOverlay> part = synth::group_overlay(tree, {0, 1, 8, 9, 10});
  REQUIRE(part);
  CHECK(part->groups == 2);
  // 0-1, 1-0, 8-9, 8-10, 9-8, 9-10, 10-8, 10-9; peers by position: 0-8, 8-0, 1-9, 9-1 (10 has none).
  CHECK(part->topology.link_count() == 12);

  // One switch, or no switches: nothing to overlay.
  CHECK_FALSE(synth::group_overlay(shipped("switch-8"), {0, 1, 2, 3, 4, 5, 6, 7}));
  CHECK_FALSE(synth::group_overlay(shipped("mesh-3x3"), {0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // One member per leaf.
  CHECK_FALSE(synth::group_overlay(tree, {0, 8, 16, 24}));
}

TEST_CASE("on a tree of switches the group overlay's plan beats recursive halving-doubling at 64 KiB", "[synth]") {
  // rhd pays five alphas of up to 4 us each (22.5 us); on the overlay blocks cross the root once,
  // to one NPU per leaf, and spread inside the leaves (13.4 us all-gather, 14.5 us reduce-scatter).
  const Topology tree = shipped("tree-4x8");
  SynthOptions automatic;
  automatic.auto_chunks = true;
  // The reduce-scatter is the all-gather's mirror: the Release run checks both, the sanitizers one.
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    if (kSanitized && kind == CollectiveKind::kReduceScatter) continue;
    INFO(collective_name(kind));
    const Collective collective = make_collective(kind, 64 << 10);
    const SynthResult result = synthesize(tree, collective, automatic);
    const VerifyResult verdict = verify_schedule(tree, result.schedule);
    INFO(verdict.error);
    REQUIRE(verdict.ok);
    CHECK(result.grouped);
    CHECK(result.schedule.planned_time_us() == Approx(result.time_us).epsilon(1e-9));
    CHECK(simulate(tree, result.schedule).time_us == Approx(result.time_us).epsilon(1e-6));
    const double rhd = simulate(tree, generate_baseline("rhd", tree, collective).schedule).time_us;
    CHECK(result.time_us < 0.7 * rhd);
  }
}

TEST_CASE("on the group overlay the chunk counts follow the groups", "[synth]") {
  // fat-tree-8x4 (4 leaves of 8 NPUs), all-gather of 64 MiB: 1336.9 us at 1, 2 and 4 chunks per
  // NPU (the powers of two the aggregated search stops at); 1318.0 on the overlay at 3, a chunk
  // per other leaf, aggregated two a transfer.
  const Topology fat_tree = shipped("fat-tree-8x4");
  SynthOptions automatic;
  automatic.auto_chunks = true;
  const Collective collective = make_collective(CollectiveKind::kAllGather, std::uint64_t{64} << 20);
  const SynthResult result = synthesize(fat_tree, collective, automatic);
  const VerifyResult verdict = verify_schedule(fat_tree, result.schedule);
  INFO(verdict.error);
  REQUIRE(verdict.ok);
  CHECK(result.grouped);
  CHECK(result.chunks_per_npu % 3 == 0);
  CHECK(result.time_us < 1320.0);
  CHECK(simulate(fat_tree, result.schedule).time_us == Approx(result.time_us).epsilon(1e-6));
  // The counts the search stopped at before: slower (Release only, the sanitizers ran the search).
  for (std::uint32_t chunks : {1u, 2u, 4u}) {
    if (kSanitized) break;
    SynthOptions fixed;
    CHECK(synthesize(fat_tree, make_collective(CollectiveKind::kAllGather, std::uint64_t{64} << 20, chunks), fixed)
              .time_us > 1330.0);
  }
}
