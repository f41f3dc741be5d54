// SPDX-License-Identifier: MIT
// The all-reduce bound through groups of NPUs, against answers worked out by hand and against the
// schedules tenet makes and simulates on such networks (which must never beat it).

#include "../support/catch.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "../support/collectives.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/group_bound.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/analysis.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

/// `boxes` boxes of two NPUs (2b, 2b + 1) joined by a 100 GB/s, 0.5 us link each way; every NPU
/// also has a 10 GB/s, 1 us port on one spine switch.
Topology two_npu_boxes(std::uint32_t boxes) {
  Topology topology(2 * boxes, {"spine"});
  const NodeId spine = 2 * boxes;
  for (NodeId box = 0; box < boxes; ++box) {
    topology.add_duplex(2 * box, 2 * box + 1, 0.5, 100.0);
    topology.add_duplex(2 * box, spine, 1.0, 10.0);
    topology.add_duplex(2 * box + 1, spine, 1.0, 10.0);
  }
  return topology;
}

/// `boxes` boxes of two NPUs (2b, 2b + 1) joined by a 100 GB/s, 0.5 us link each way, both on
/// their box's NIC switch at 10 GB/s, 1 us; each NIC switch has one port on a spine, 2 us.
Topology boxes_behind_nics(std::uint32_t boxes, double uplink_GBps = 15.0) {
  std::vector<std::string> switches{"spine"};
  for (std::uint32_t box = 0; box < boxes; ++box) switches.push_back("nic" + std::to_string(box));
  Topology topology(2 * boxes, switches);
  const NodeId spine = 2 * boxes;
  for (NodeId box = 0; box < boxes; ++box) {
    const NodeId nic = spine + 1 + box;
    topology.add_duplex(2 * box, 2 * box + 1, 0.5, 100.0);
    topology.add_duplex(2 * box, nic, 1.0, 10.0);
    topology.add_duplex(2 * box + 1, nic, 1.0, 10.0);
    topology.add_duplex(nic, spine, 2.0, uplink_GBps);
  }
  return topology;
}

LowerBound all_reduce_bound(const Topology& topology, std::uint64_t size, std::vector<NodeId> members = {}) {
  const Collective collective = make_collective(CollectiveKind::kAllReduce, size, 1, members);
  return lower_bound(topology, collective, compute_diameter(topology, collective.members));
}

/// The groups term: `groups` member groups, through `bandwidth_GBps` after `latency_us`, each
/// byte sent 2 (groups - 1) times.
void check_groups(const LowerBound& bound, std::uint32_t groups, double bandwidth_GBps, double latency_us,
                  std::uint64_t size) {
  CHECK(bound.groups.groups == groups);
  CHECK(bound.groups.bandwidth_GBps == bandwidth_GBps);
  CHECK(bound.groups.latency_us == latency_us);
  CHECK(bound.groups_us ==
        exactly(latency_us + 2.0 * (groups - 1.0) * static_cast<double>(size) / (bandwidth_GBps * 1e3)));
}

}  // namespace

TEST_CASE("all-reduce through groups: three boxes need 4 n through their six ports", "[bounds][groups]") {
  const Topology topology = two_npu_boxes(3);
  const LowerBound bound = all_reduce_bound(topology, 6'000'000);
  // Boxes are the components of the links faster than 10 GB/s; the spine alone holds no NPU.
  check_groups(bound, 3, 60.0, 1.0, 6'000'000);
  CHECK(bound.groups.threshold_GBps == 10.0);
  CHECK(bound.binding == BoundTerm::kGroups);
  CHECK(bound.binding_name() == "groups");
  // The NPU-level terms are far below: all NPUs take in 2 x 5 n through 660 GB/s (one alone n
  // through 110); the slowest cut, one box, n through 20 GB/s.
  CHECK(bound.ingress_us == exactly(0.5 + 2.0 * 5.0 * 6e6 / 660e3));
  CHECK(bound.cut_us < bound.groups_us);
}

TEST_CASE("all-reduce through groups: member groups count, every group's links carry", "[bounds][groups]") {
  const Topology topology = two_npu_boxes(4);
  SECTION("members in two boxes: never above the cut, not reported") {
    const LowerBound bound = all_reduce_bound(topology, 8'000'000, {0, 1, 2});
    CHECK(bound.groups.groups == 0);
    CHECK(bound.groups_us == 0.0);
  }
  SECTION("members in three boxes of four: the fourth box's ports can relay, so they count") {
    const LowerBound bound = all_reduce_bound(topology, 8'000'000, {0, 2, 4});
    check_groups(bound, 3, 80.0, 1.0, 8'000'000);
  }
}

TEST_CASE("all-reduce through groups: one link speed makes no groups", "[bounds][groups]") {
  const LowerBound bound = all_reduce_bound(shipped("torus-4x4"), 16'000'000);
  CHECK(bound.groups.groups == 0);
  CHECK(bound.groups_us == 0.0);
  CHECK(bound.binding == BoundTerm::kIngress);
}

TEST_CASE("all-reduce through groups: four A100 boxes need 6 n through their 32 NICs", "[bounds][groups]") {
  const std::uint64_t size = std::uint64_t{1} << 30;
  const LowerBound bound = all_reduce_bound(shipped("a100-4x8-ib"), size);
  // A box is its NVSwitch and eight GPUs; the IB switches only forward. 2 x 3 x size through
  // 32 x 25 GB/s, after the NICs' 2 us: 1.5 size / 200 GB/s, above one GPU's 2 (31/32) size / 325.
  check_groups(bound, 4, 800.0, 2.0, size);
  CHECK(bound.binding == BoundTerm::kGroups);
  CHECK(bound.ingress_us < bound.groups_us);
}

TEST_CASE("all-reduce through groups: a switch only its box reaches belongs to the box", "[bounds][groups]") {
  const Topology topology = boxes_behind_nics(4);
  const LowerBound bound = all_reduce_bound(topology, 6'000'000);
  // Boxes alone take in through their NPUs' 10 GB/s ports, 80 GB/s in all; with its NIC switch
  // each takes in through the NIC's 15 GB/s uplink, 60 GB/s in all: 2 x 3 n through those.
  check_groups(bound, 4, 60.0, 2.0, 6'000'000);
  CHECK(bound.groups.threshold_GBps == 15.0);
  CHECK(bound.binding == BoundTerm::kGroups);
  // Where the NICs' uplinks are faster than the ports into them, the boxes alone bind.
  CHECK(all_reduce_bound(boxes_behind_nics(4, 40.0), 6'000'000).groups.bandwidth_GBps == 80.0);
}

TEST_CASE("all-reduce through groups: no schedule tenet makes beats it", "[bounds][groups]") {
  for (const Topology& topology : {two_npu_boxes(3), two_npu_boxes(4), boxes_behind_nics(4)}) {
    const std::uint32_t boxes = topology.npu_count() / 2;
    for (std::uint64_t size : {std::uint64_t{64} << 10, std::uint64_t{16} << 20}) {
      const Collective collective = make_collective(CollectiveKind::kAllReduce, size);
      const LowerBound bound = all_reduce_bound(topology, size);
      REQUIRE(bound.groups.groups == boxes);
      for (const std::string& algorithm : baseline_names()) {
        const BaselineResult baseline = generate_baseline(algorithm, topology, collective);
        if (!baseline.applicable) continue;
        INFO(boxes << " boxes, " << size << " B, " << algorithm);
        CHECK(simulate(topology, baseline.schedule).time_us >= bound.total_us * (1 - 1e-9));
      }
      INFO(boxes << " boxes, " << size << " B, synth");
      CHECK(synthesize(topology, collective, {}).time_us >= bound.total_us * (1 - 1e-9));
    }
  }
}
