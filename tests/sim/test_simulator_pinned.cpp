// SPDX-License-Identifier: MIT
// Simulated times of every baseline on shipped topologies, pinned to the values the simulator gave
// before its event loop was reworked for speed (issue #13). The simulator's semantics are a
// contract (DESIGN.md): making it faster must not move any schedule's time, so these literals
// (recorded with `tenet baseline --json`, 3 MiB) may change only with a change of the model itself.
// One moved by rounding: since a route's flows are refilled as one (flow_network.hpp), the ring
// all-reduce on fat-tree-8x4, whose 3,968 routed flows share links with unequal rates, ends
// 2.2e-8 later (213.00088245444832 us before): its end times first differ in the 14th digit and
// the differences grow from event to event; every other pin is unchanged to 1e-9.

#include "../support/catch.hpp"

#include <string>
#include <vector>

#include "tenet/baselines/baseline.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/topology_json.hpp"

using namespace tenet;

namespace {

struct Pinned {
  const char* topology;
  CollectiveKind collective;
  const char* algorithm;
  double time_us;  ///< < 0: the baseline does not apply
};

constexpr double kNotApplicable = -1.0;

// clang-format off
const Pinned kPinned[] = {
    {"torus-4x4", CollectiveKind::kAllReduce, "ring", 73.98240000000001},
    {"torus-4x4", CollectiveKind::kAllReduce, "direct", 95.37184},
    {"torus-4x4", CollectiveKind::kAllReduce, "rhd", 163.28640000000001},
    {"torus-4x4", CollectiveKind::kAllReduce, "swing", 33.4912},
    {"torus-4x4", CollectiveKind::kAllReduce, "swing-latency", kNotApplicable},
    {"torus-4x4", CollectiveKind::kAllReduce, "bucket", 35.4912},
    {"torus-4x4", CollectiveKind::kAllReduce, "circulant", 184.4472},
    {"torus-4x4", CollectiveKind::kAllGather, "ring", 36.991200000000006},
    {"torus-4x4", CollectiveKind::kAllGather, "direct", 47.68592},
    {"torus-4x4", CollectiveKind::kAllGather, "rhd", 81.6432},
    {"torus-4x4", CollectiveKind::kAllGather, "swing", 16.7456},
    {"torus-4x4", CollectiveKind::kAllGather, "swing-latency", 16.7456},
    {"torus-4x4", CollectiveKind::kAllGather, "bucket", 17.7456},
    {"torus-4x4", CollectiveKind::kAllGather, "circulant", 102.054},
    {"torus-4x4", CollectiveKind::kReduceScatter, "ring", 36.991200000000006},
    {"torus-4x4", CollectiveKind::kReduceScatter, "direct", 47.68592},
    {"torus-4x4", CollectiveKind::kReduceScatter, "rhd", 81.64320000000001},
    {"torus-4x4", CollectiveKind::kReduceScatter, "swing", 16.7456},
    {"torus-4x4", CollectiveKind::kReduceScatter, "swing-latency", kNotApplicable},
    {"torus-4x4", CollectiveKind::kReduceScatter, "bucket", 17.7456},
    {"torus-4x4", CollectiveKind::kReduceScatter, "circulant", 82.39320000000001},
    {"torus-8x8", CollectiveKind::kAllReduce, "ring", 124.93151999999971},
    {"torus-8x8", CollectiveKind::kAllReduce, "direct", 158.2864},
    {"torus-8x8", CollectiveKind::kAllReduce, "rhd", 226.33663999999996},
    {"torus-8x8", CollectiveKind::kAllReduce, "swing", 43.91488},
    {"torus-8x8", CollectiveKind::kAllReduce, "swing-latency", kNotApplicable},
    {"torus-8x8", CollectiveKind::kAllReduce, "bucket", 44.96576},
    {"torus-8x8", CollectiveKind::kAllReduce, "circulant", 307.6139216666666},
    {"torus-8x8", CollectiveKind::kAllGather, "ring", 62.46576000000006},
    {"torus-8x8", CollectiveKind::kAllGather, "direct", 79.1432},
    {"torus-8x8", CollectiveKind::kAllGather, "rhd", 113.16832},
    {"torus-8x8", CollectiveKind::kAllGather, "swing", 21.957440000000002},
    {"torus-8x8", CollectiveKind::kAllGather, "swing-latency", 44.07584},
    {"torus-8x8", CollectiveKind::kAllGather, "bucket", 22.48288},
    {"torus-8x8", CollectiveKind::kAllGather, "circulant", 193.62789333333333},
    {"torus-8x8", CollectiveKind::kReduceScatter, "ring", 62.46576000000006},
    {"torus-8x8", CollectiveKind::kReduceScatter, "direct", 79.1432},
    {"torus-8x8", CollectiveKind::kReduceScatter, "rhd", 113.16831999999998},
    {"torus-8x8", CollectiveKind::kReduceScatter, "swing", 21.95744},
    {"torus-8x8", CollectiveKind::kReduceScatter, "swing-latency", kNotApplicable},
    {"torus-8x8", CollectiveKind::kReduceScatter, "bucket", 22.482880000000005},
    {"torus-8x8", CollectiveKind::kReduceScatter, "circulant", 114.00165333333331},
    {"torus-4x4x4", CollectiveKind::kAllReduce, "ring", 186.86303999999967},
    {"torus-4x4x4", CollectiveKind::kAllReduce, "direct", 189.74367999999998},
    {"torus-4x4x4", CollectiveKind::kAllReduce, "rhd", 339.30144000000007},
    {"torus-4x4x4", CollectiveKind::kAllReduce, "swing", 47.28768000000001},
    {"torus-4x4x4", CollectiveKind::kAllReduce, "swing-latency", kNotApplicable},
    {"torus-4x4x4", CollectiveKind::kAllReduce, "bucket", 50.28768000000001},
    {"torus-4x4x4", CollectiveKind::kAllReduce, "circulant", 384.83912000000004},
    {"torus-4x4x4", CollectiveKind::kAllGather, "ring", 93.43152000000009},
    {"torus-4x4x4", CollectiveKind::kAllGather, "direct", 94.87183999999999},
    {"torus-4x4x4", CollectiveKind::kAllGather, "rhd", 169.65072},
    {"torus-4x4x4", CollectiveKind::kAllGather, "swing", 23.643840000000004},
    {"torus-4x4x4", CollectiveKind::kAllGather, "swing-latency", 23.643840000000004},
    {"torus-4x4x4", CollectiveKind::kAllGather, "bucket", 25.143839999999997},
    {"torus-4x4x4", CollectiveKind::kAllGather, "circulant", 213.1884},
    {"torus-4x4x4", CollectiveKind::kReduceScatter, "ring", 93.43152000000009},
    {"torus-4x4x4", CollectiveKind::kReduceScatter, "direct", 94.87183999999999},
    {"torus-4x4x4", CollectiveKind::kReduceScatter, "rhd", 169.65072000000004},
    {"torus-4x4x4", CollectiveKind::kReduceScatter, "swing", 23.643840000000004},
    {"torus-4x4x4", CollectiveKind::kReduceScatter, "swing-latency", kNotApplicable},
    {"torus-4x4x4", CollectiveKind::kReduceScatter, "bucket", 25.143840000000004},
    {"torus-4x4x4", CollectiveKind::kReduceScatter, "circulant", 171.90072000000004},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllReduce, "ring", 150.07825449876452},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllReduce, "direct", 297.430984924812},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllReduce, "rhd", 287.1246742857143},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllReduce, "swing", 212.6430109327104},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllReduce, "swing-latency", kNotApplicable},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllReduce, "bucket", kNotApplicable},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllReduce, "circulant", kNotApplicable},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllGather, "ring", 75.9701009932818},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllGather, "direct", 148.79860571428569},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllGather, "rhd", 146.55877714285714},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllGather, "swing", 108.5024444490179},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllGather, "swing-latency", 152.53705663021748},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllGather, "bucket", kNotApplicable},
    {"mesh-4x4-failed-7-9", CollectiveKind::kAllGather, "circulant", 200.73147428571428},
    {"mesh-4x4-failed-7-9", CollectiveKind::kReduceScatter, "ring", 75.9701009932818},
    {"mesh-4x4-failed-7-9", CollectiveKind::kReduceScatter, "direct", 148.79860571428569},
    {"mesh-4x4-failed-7-9", CollectiveKind::kReduceScatter, "rhd", 143.05776},
    {"mesh-4x4-failed-7-9", CollectiveKind::kReduceScatter, "swing", 108.52869999683482},
    {"mesh-4x4-failed-7-9", CollectiveKind::kReduceScatter, "swing-latency", kNotApplicable},
    {"mesh-4x4-failed-7-9", CollectiveKind::kReduceScatter, "bucket", kNotApplicable},
    {"mesh-4x4-failed-7-9", CollectiveKind::kReduceScatter, "circulant", kNotApplicable},
    {"fat-tree-8x4", CollectiveKind::kAllReduce, "ring", 213.0008870999039},
    {"fat-tree-8x4", CollectiveKind::kAllReduce, "direct", 381.48735999999997},
    {"fat-tree-8x4", CollectiveKind::kAllReduce, "rhd", 171.28640000000001},
    {"fat-tree-8x4", CollectiveKind::kAllReduce, "swing", 168.234299957584},
    {"fat-tree-8x4", CollectiveKind::kAllReduce, "swing-latency", kNotApplicable},
    {"fat-tree-8x4", CollectiveKind::kAllReduce, "bucket", kNotApplicable},
    {"fat-tree-8x4", CollectiveKind::kAllReduce, "circulant", 307.8739647736626},
    {"fat-tree-8x4", CollectiveKind::kAllGather, "ring", 101.02781802694653},
    {"fat-tree-8x4", CollectiveKind::kAllGather, "direct", 190.74367999999998},
    {"fat-tree-8x4", CollectiveKind::kAllGather, "rhd", 85.6432},
    {"fat-tree-8x4", CollectiveKind::kAllGather, "swing", 85.22244},
    {"fat-tree-8x4", CollectiveKind::kAllGather, "swing-latency", 186.84544},
    {"fat-tree-8x4", CollectiveKind::kAllGather, "bucket", kNotApplicable},
    {"fat-tree-8x4", CollectiveKind::kAllGather, "circulant", 215.81500444444447},
    {"fat-tree-8x4", CollectiveKind::kReduceScatter, "ring", 101.02781802694653},
    {"fat-tree-8x4", CollectiveKind::kReduceScatter, "direct", 190.74367999999998},
    {"fat-tree-8x4", CollectiveKind::kReduceScatter, "rhd", 85.64320000000001},
    {"fat-tree-8x4", CollectiveKind::kReduceScatter, "swing", 81.03475888888889},
    {"fat-tree-8x4", CollectiveKind::kReduceScatter, "swing-latency", kNotApplicable},
    {"fat-tree-8x4", CollectiveKind::kReduceScatter, "bucket", kNotApplicable},
    {"fat-tree-8x4", CollectiveKind::kReduceScatter, "circulant", 91.95196444444444},
    {"dragonfly-4x5", CollectiveKind::kAllReduce, "ring", 31.22361600000001},
    {"dragonfly-4x5", CollectiveKind::kAllReduce, "direct", 35.103008},
    {"dragonfly-4x5", CollectiveKind::kAllReduce, "rhd", 58.227375999999985},
    {"dragonfly-4x5", CollectiveKind::kAllReduce, "swing", 35.506367000000004},
    {"dragonfly-4x5", CollectiveKind::kAllReduce, "swing-latency", kNotApplicable},
    {"dragonfly-4x5", CollectiveKind::kAllReduce, "bucket", kNotApplicable},
    {"dragonfly-4x5", CollectiveKind::kAllReduce, "circulant", kNotApplicable},
    {"dragonfly-4x5", CollectiveKind::kAllGather, "ring", 15.611808000000002},
    {"dragonfly-4x5", CollectiveKind::kAllGather, "direct", 17.801504},
    {"dragonfly-4x5", CollectiveKind::kAllGather, "rhd", 28.59296},
    {"dragonfly-4x5", CollectiveKind::kAllGather, "swing", 19.947616888888888},
    {"dragonfly-4x5", CollectiveKind::kAllGather, "swing-latency", 24.136350458333332},
    {"dragonfly-4x5", CollectiveKind::kAllGather, "bucket", kNotApplicable},
    {"dragonfly-4x5", CollectiveKind::kAllGather, "circulant", 36.030144},
    {"dragonfly-4x5", CollectiveKind::kReduceScatter, "ring", 15.611808000000002},
    {"dragonfly-4x5", CollectiveKind::kReduceScatter, "direct", 17.801504},
    {"dragonfly-4x5", CollectiveKind::kReduceScatter, "rhd", 31.988687999999996},
    {"dragonfly-4x5", CollectiveKind::kReduceScatter, "swing", 19.052237333333334},
    {"dragonfly-4x5", CollectiveKind::kReduceScatter, "swing-latency", kNotApplicable},
    {"dragonfly-4x5", CollectiveKind::kReduceScatter, "bucket", kNotApplicable},
    {"dragonfly-4x5", CollectiveKind::kReduceScatter, "circulant", kNotApplicable},
    {"hypercube-6", CollectiveKind::kAllReduce, "ring", 124.93151999999971},
    {"hypercube-6", CollectiveKind::kAllReduce, "direct", 63.914559999999994},
    {"hypercube-6", CollectiveKind::kAllReduce, "rhd", 129.86304},
    {"hypercube-6", CollectiveKind::kAllReduce, "swing", 26.64384},
    {"hypercube-6", CollectiveKind::kAllReduce, "swing-latency", kNotApplicable},
    {"hypercube-6", CollectiveKind::kAllReduce, "bucket", 26.64384},
    {"hypercube-6", CollectiveKind::kAllReduce, "circulant", 154.22736000000003},
    {"hypercube-6", CollectiveKind::kAllGather, "ring", 62.46576000000006},
    {"hypercube-6", CollectiveKind::kAllGather, "direct", 31.95728},
    {"hypercube-6", CollectiveKind::kAllGather, "rhd", 64.93152},
    {"hypercube-6", CollectiveKind::kAllGather, "swing", 13.321920000000002},
    {"hypercube-6", CollectiveKind::kAllGather, "swing-latency", 13.321920000000002},
    {"hypercube-6", CollectiveKind::kAllGather, "bucket", 13.321920000000002},
    {"hypercube-6", CollectiveKind::kAllGather, "circulant", 78.93151999999999},
    {"hypercube-6", CollectiveKind::kReduceScatter, "ring", 62.46576000000006},
    {"hypercube-6", CollectiveKind::kReduceScatter, "direct", 31.95728},
    {"hypercube-6", CollectiveKind::kReduceScatter, "rhd", 64.93151999999999},
    {"hypercube-6", CollectiveKind::kReduceScatter, "swing", 13.321920000000002},
    {"hypercube-6", CollectiveKind::kReduceScatter, "swing-latency", kNotApplicable},
    {"hypercube-6", CollectiveKind::kReduceScatter, "bucket", 13.321920000000002},
    {"hypercube-6", CollectiveKind::kReduceScatter, "circulant", 77.89760000000001},
    {"a100-2x8-ib", CollectiveKind::kAllReduce, "ring", 149.88657514895732},
    {"a100-2x8-ib", CollectiveKind::kAllReduce, "direct", 322.57280000000003},
    {"a100-2x8-ib", CollectiveKind::kAllReduce, "rhd", 50.478719999999996},
    {"a100-2x8-ib", CollectiveKind::kAllReduce, "swing", 197.0387913987076},
    {"a100-2x8-ib", CollectiveKind::kAllReduce, "swing-latency", kNotApplicable},
    {"a100-2x8-ib", CollectiveKind::kAllReduce, "bucket", kNotApplicable},
    {"a100-2x8-ib", CollectiveKind::kAllReduce, "circulant", 353.87104},
    {"a100-2x8-ib", CollectiveKind::kAllGather, "ring", 81.26269978052125},
    {"a100-2x8-ib", CollectiveKind::kAllGather, "direct", 161.28640000000001},
    {"a100-2x8-ib", CollectiveKind::kAllGather, "rhd", 25.239359999999998},
    {"a100-2x8-ib", CollectiveKind::kAllGather, "swing", 95.83967999999999},
    {"a100-2x8-ib", CollectiveKind::kAllGather, "swing-latency", 221.6688},
    {"a100-2x8-ib", CollectiveKind::kAllGather, "bucket", kNotApplicable},
    {"a100-2x8-ib", CollectiveKind::kAllGather, "circulant", 158.32384},
    {"a100-2x8-ib", CollectiveKind::kReduceScatter, "ring", 81.26269978052125},
    {"a100-2x8-ib", CollectiveKind::kReduceScatter, "direct", 161.28640000000001},
    {"a100-2x8-ib", CollectiveKind::kReduceScatter, "rhd", 25.239359999999998},
    {"a100-2x8-ib", CollectiveKind::kReduceScatter, "swing", 100.84858181818181},
    {"a100-2x8-ib", CollectiveKind::kReduceScatter, "swing-latency", kNotApplicable},
    {"a100-2x8-ib", CollectiveKind::kReduceScatter, "bucket", kNotApplicable},
    {"a100-2x8-ib", CollectiveKind::kReduceScatter, "circulant", 198.27936},
};
// clang-format on

}  // namespace

TEST_CASE("baseline times on shipped topologies stay as pinned", "[simulator][pinned]") {
  std::string loaded_name;
  Topology topology;
  for (const Pinned& pin : kPinned) {
    if (loaded_name != pin.topology) {
      topology = load_topology(std::string(TENET_SOURCE_DIR) + "/topologies/" + pin.topology + ".json");
      loaded_name = pin.topology;
    }
    Collective collective;
    collective.kind = pin.collective;
    collective.size_bytes = 3ull << 20;
    const BaselineResult baseline = generate_baseline(pin.algorithm, topology, collective);
    INFO(pin.topology << " " << pin.algorithm << " " << static_cast<int>(pin.collective));
    REQUIRE(baseline.applicable == (pin.time_us >= 0.0));
    if (!baseline.applicable) continue;
    const double time = simulate(topology, baseline.schedule).time_us;
    CHECK(time == Approx(pin.time_us).epsilon(1e-9).margin(0.0));
  }
}
