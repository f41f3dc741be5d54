// SPDX-License-Identifier: MIT
// The simulator's symmetric quotient (translation_symmetry.hpp) against its general path: on
// tori where every translation maps the schedule onto itself, one transfer per orbit must give
// every transfer's start and end and every link's load as simulating them all does; wherever the
// symmetry does not hold (a failed link, one slower link, a sub-collective, a shift in rank order
// that is no translation), the quotient must not run.

#include "../support/catch.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/collectives.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/topology/transforms.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

constexpr CollectiveKind kKinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                     CollectiveKind::kReduceScatter};

SimResult run(const Topology& topology, const Schedule& schedule, bool use_symmetry, double gamma = 0.0) {
  SimOptions options;
  options.record_times = true;
  options.use_symmetry = use_symmetry;
  options.gamma_us_per_byte = gamma;
  return simulate(topology, schedule, options);
}

/// Both paths agree on every number the simulator reports; returns whether the quotient ran.
bool paths_agree(const Topology& topology, const Schedule& schedule, double gamma = 0.0) {
  const SimResult fast = run(topology, schedule, true, gamma);
  const SimResult general = run(topology, schedule, false, gamma);
  REQUIRE(general.symmetry_order == 1);
  CHECK(fast.time_us == exactly(general.time_us));
  CHECK(fast.transfers == general.transfers);
  CHECK(fast.max_link_bytes == exactly(general.max_link_bytes));
  REQUIRE(fast.start_us.size() == general.start_us.size());
  // Times are compared against the collective's time: a transfer starting at 0 has no scale.
  const double scale = general.time_us;
  std::size_t differing = 0;
  for (std::size_t id = 0; id < general.start_us.size(); ++id) {
    if (std::abs(fast.start_us[id] - general.start_us[id]) > 1e-9 * scale ||
        std::abs(fast.end_us[id] - general.end_us[id]) > 1e-9 * scale) {
      ++differing;
    }
  }
  CHECK(differing == 0);
  REQUIRE(fast.links.size() == general.links.size());
  for (std::size_t link = 0; link < general.links.size(); ++link) {
    CHECK(fast.links[link].bytes == exactly(general.links[link].bytes));
    CHECK(std::abs(fast.links[link].busy_us - general.links[link].busy_us) <= 1e-9 * scale);
  }
  return fast.symmetry_order > 1;
}

Schedule baseline(const std::string& algorithm, const Topology& topology, CollectiveKind kind,
                  std::vector<NodeId> members = {}) {
  BaselineResult result = generate_baseline(algorithm, topology, make_collective(kind, 3u << 20, 1, members));
  if (!result.applicable) return Schedule{};
  return std::move(result.schedule);
}

/// A 4x4 torus built link by link, with its layout declared, and link 0 -> 1 at `slow_GBps`.
Topology torus_4x4_with_slow_link(double slow_GBps) {
  Topology topology(16, {});
  for (NodeId id = 0; id < 16; ++id) {
    const NodeId x = id % 4;
    const NodeId y = id / 4;
    const NodeId right = (x + 1) % 4 + 4 * y;
    const NodeId down = x + 4 * ((y + 1) % 4);
    topology.add_link({id, right, 0.5, id == 0 ? slow_GBps : 50.0});
    topology.add_link({right, id, 0.5, 50.0});
    topology.add_link({id, down, 0.5, 50.0});
    topology.add_link({down, id, 0.5, 50.0});
  }
  topology.layout.dims = {4, 4};
  topology.layout.wraps = true;
  return topology;
}

}  // namespace

TEST_CASE("the symmetric quotient gives the general path's times on tori", "[simulator][symmetry]") {
  const std::vector<Topology> tori = {
      shipped("torus-4x4"),
      shipped("torus-8x4"),
      shipped("torus-4x4x4"),
      generated({{"kind", "torus"}, {"dims", {8, 8}}, {"bandwidth_GBps", {50, 25}}}),
      generated({{"kind", "torus"}, {"dims", {2, 6}}}),
      generated({{"kind", "ring"}, {"npus", 12}}),
  };
  for (const Topology& topology : tori) {
    for (const std::string& algorithm : baseline_names()) {
      for (const CollectiveKind kind : kKinds) {
        const Schedule schedule = baseline(algorithm, topology, kind);
        if (schedule.size() == 0) continue;
        INFO(topology.name << " " << algorithm << " " << collective_name(kind));
        const bool symmetric = paths_agree(topology, schedule);
        // Every NPU does the same in a direct collective: the quotient must recognize it.
        if (algorithm == "direct") CHECK(symmetric);
      }
    }
  }
}

TEST_CASE("the symmetric quotient charges gamma per reduce as the general path does", "[simulator][symmetry]") {
  const Topology topology = shipped("torus-4x4");
  const Schedule schedule = baseline("direct", topology, CollectiveKind::kAllReduce);
  CHECK(paths_agree(topology, schedule, 1e-5));
}

TEST_CASE("the symmetric quotient stays off where the symmetry does not hold", "[simulator][symmetry]") {
  SECTION("a torus with one failed link") {
    const Topology intact = shipped("torus-4x4");
    FailureSet failures;
    failures.links = {{0, 1}, {1, 0}};
    const Topology topology = apply_failures(intact, failures, "t", "/failed");
    for (const std::string algorithm : {"direct", "ring", "swing"}) {
      const Schedule schedule = baseline(algorithm, topology, CollectiveKind::kAllReduce);
      INFO(algorithm);
      REQUIRE(schedule.size() > 0);
      CHECK_FALSE(paths_agree(topology, schedule));
    }
  }
  SECTION("a torus whose layout holds but one link is slower") {
    // At full speed the hand-built torus is the symmetric one, so only the slower link can stop it.
    const Topology even = torus_4x4_with_slow_link(50.0);
    REQUIRE(paths_agree(even, baseline("direct", even, CollectiveKind::kAllReduce)));
    const Topology uneven = torus_4x4_with_slow_link(20.0);
    CHECK_FALSE(paths_agree(uneven, baseline("direct", uneven, CollectiveKind::kAllReduce)));
  }
  SECTION("a sub-collective") {
    const Topology topology = shipped("torus-4x4");
    for (const CollectiveKind kind : kKinds) {
      CHECK_FALSE(paths_agree(topology, baseline("direct", topology, kind, {0, 1, 2, 3, 5, 6, 7, 8})));
    }
  }
  SECTION("every NPU sends to the NPU five ranks on, which is no translation of a 4x4 torus") {
    const Topology topology = shipped("torus-4x4");
    Schedule schedule(
        CollectiveKind::kAllGather, 16 << 10,
        [] {
          std::vector<NodeId> members(16);
          for (NodeId i = 0; i < 16; ++i) members[i] = i;
          return members;
        }(),
        1, "hand");
    for (NodeId i = 0; i < 16; ++i) {
      const ChunkId chunk[] = {i};
      schedule.add(i, (i + 5) % 16, TransferKind::kCopy, chunk, {}, 0.0, 1.0, kNoLink);
    }
    CHECK_FALSE(paths_agree(topology, schedule));
  }
}
