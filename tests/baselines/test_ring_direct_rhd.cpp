// SPDX-License-Identifier: MIT
// ring, direct and rhd: every schedule verifies on a spread of topologies, the planned times match
// the alpha-beta closed forms of the papers, and the ring embeddings keep their promises.

#include "../support/catch.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <nlohmann/json.hpp>

#include "../support/collectives.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/baselines/ring.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/topology/routing.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

const std::vector<std::string> kMine = {"ring", "direct", "rhd"};

/// Generates and verifies; returns the schedule.
Schedule verified(const std::string& name, const Topology& topology, const Collective& collective) {
  INFO(name << " " << collective_name(collective.kind) << " on " << topology.name << " ("
            << collective.participants(topology).size() << " members)");
  BaselineResult result = generate_baseline(name, topology, collective);
  INFO(result.reason);
  REQUIRE(result.applicable);
  CHECK(result.schedule.algorithm() == name);
  const VerifyResult verdict = verify_schedule(topology, result.schedule);
  INFO(verdict.error);
  REQUIRE(verdict.ok);
  CHECK(verdict.redundant_copies == 0);
  return std::move(result.schedule);
}

void verify_all(const Topology& topology, std::vector<NodeId> members = {}) {
  for (const std::string& name : kMine) {
    for (CollectiveKind kind : kAllKinds) verified(name, topology, make_collective(kind, 1 << 20, 1, members));
  }
}

/// Directed-link use of the ring's hops (forward direction) under the router's routes.
std::map<LinkId, int> hop_link_use(const Topology& topology, const std::vector<NodeId>& order) {
  const Router router(topology);
  std::map<LinkId, int> use;
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (LinkId id : router.route(order[i], order[(i + 1) % order.size()])) ++use[id];
  }
  return use;
}

/// Hops of the ring that are not single links.
int non_link_hops(const Topology& topology, const std::vector<NodeId>& order) {
  int count = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!topology.has_link(order[i], order[(i + 1) % order.size()])) ++count;
  }
  return count;
}

bool is_permutation_of_all(const Topology& topology, std::vector<NodeId> order) {
  std::sort(order.begin(), order.end());
  if (order.size() != topology.npu_count()) return false;
  for (NodeId i = 0; i < order.size(); ++i) {
    if (order[i] != i) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("baselines: the registry lists ring, direct, rhd first and refuses unknown names", "[baselines]") {
  const auto& names = baseline_names();
  REQUIRE(names.size() >= 3);
  CHECK(names[0] == "ring");
  CHECK(names[1] == "direct");
  CHECK(names[2] == "rhd");
  const Topology ring = generated({{"kind", "ring"}, {"npus", 4}});
  try {
    generate_baseline("rign", ring, make_collective(CollectiveKind::kAllReduce, 1024), "--algorithm");
    FAIL("no error");
  } catch (const InputError& error) {
    CHECK_THAT(error.what(), Catch::Contains("--algorithm") && Catch::Contains("did you mean 'ring'"));
  }
}

TEST_CASE("baselines: one member is not applicable, with a reason", "[baselines]") {
  const Topology ring = generated({{"kind", "ring"}, {"npus", 4}});
  for (const std::string& name : kMine) {
    const BaselineResult result =
        generate_baseline(name, ring, make_collective(CollectiveKind::kAllReduce, 1024, 1, {2}));
    CHECK_FALSE(result.applicable);
    CHECK_THAT(result.reason, Catch::Contains("at least 2"));
  }
}

TEST_CASE("baselines: ring, direct and rhd verify on every test topology", "[baselines]") {
  SECTION("ring-8") { verify_all(generated({{"kind", "ring"}, {"npus", 8}})); }
  SECTION("one-way ring-8") { verify_all(generated({{"kind", "ring"}, {"npus", 8}, {"bidirectional", false}})); }
  SECTION("fully connected 8") { verify_all(generated({{"kind", "fully_connected"}, {"npus", 8}})); }
  SECTION("torus 4x4") { verify_all(generated({{"kind", "torus"}, {"dims", {4, 4}}})); }
  SECTION("torus 3x5") { verify_all(generated({{"kind", "torus"}, {"dims", {3, 5}}})); }
  SECTION("mesh 3x4") { verify_all(generated({{"kind", "mesh"}, {"dims", {3, 4}}})); }
  SECTION("mesh 3x3") { verify_all(generated({{"kind", "mesh"}, {"dims", {3, 3}}})); }
  SECTION("switch-8") { verify_all(generated({{"kind", "switch"}, {"npus", 8}})); }
  SECTION("two-level switch 4x3") { verify_all(generated({{"kind", "two_level_switch"}, {"dims", {4, 3}}})); }
  SECTION("tree-2x2x4 file") { verify_all(shipped("tree-2x2x4")); }
  SECTION("failed mesh file") { verify_all(shipped("mesh-4x4-failed-7-9")); }
  SECTION("ring-fc-switch file") { verify_all(shipped("ring-fc-switch-2x4x2")); }
  SECTION("sub-collective on a torus") {
    verify_all(generated({{"kind", "torus"}, {"dims", {4, 4}}}), {0, 3, 5, 10, 15});
  }
  SECTION("sub-collective on a tree") { verify_all(shipped("tree-2x2x4"), {1, 2, 7, 8, 12, 13, 14}); }
  SECTION("two members") { verify_all(generated({{"kind", "mesh"}, {"dims", {3, 3}}}), {0, 8}); }
  SECTION("random graphs, seeds 1..5") {
    for (int seed = 1; seed <= 5; ++seed) {
      nlohmann::json generator = {{"kind", "random"}, {"npus", 7 + seed}, {"degree", 3}, {"seed", seed}};
      if (seed % 2 == 0) generator["switches"] = 2;
      if (seed % 2 == 1) generator["heterogeneous"] = true;
      verify_all(generated(generator));
    }
  }
}

TEST_CASE("baselines: rhd verifies for every member count 2..13", "[baselines]") {
  // Counts that are not powers of two (3, 5, 6, 7, 12, ...) fold r = p - p' pairs.
  const Topology fc = generated({{"kind", "fully_connected"}, {"npus", 13}});
  const Topology torus = generated({{"kind", "torus"}, {"dims", {4, 4}}});
  for (std::uint32_t p = 2; p <= 13; ++p) {
    std::vector<NodeId> members(p);
    for (NodeId i = 0; i < p; ++i) members[i] = i;
    std::vector<NodeId> spread(p);
    for (NodeId i = 0; i < p; ++i) spread[i] = (i * 5) % 16;
    std::sort(spread.begin(), spread.end());
    for (CollectiveKind kind : kAllKinds) {
      for (std::uint64_t size : {std::uint64_t{1} << 20, std::uint64_t{1000003}}) {
        const Schedule schedule = verified("rhd", fc, make_collective(kind, size, 1, members));
        verified("rhd", torus, make_collective(kind, size, 1, spread));
        // Steps: log2 p' a phase, plus the fold and unfold when p is not a power of two.
        const int phases = kind == CollectiveKind::kAllReduce ? 2 : 1;
        const bool folded = !std::has_single_bit(p);
        const int steps = phases * std::bit_width(std::bit_floor(p)) - phases + (folded ? 2 : 0);
        CHECK(schedule.planned_time_us() >= steps * kAlpha);
      }
    }
  }
}

TEST_CASE("baselines: ring closed forms (Swing Sec. 2.3.1)", "[baselines]") {
  const std::uint64_t n = 8 << 20;
  SECTION("bidirectional ring on a ring and on a fully connected network") {
    for (const Topology& topology :
         {generated({{"kind", "ring"}, {"npus", 8}}), generated({{"kind", "fully_connected"}, {"npus", 8}})}) {
      const double p = 8;
      const double phase = (p - 1) * (kAlpha + n / (2 * p * kBandwidth));
      CHECK(verified("ring", topology, make_collective(CollectiveKind::kReduceScatter, n)).planned_time_us() ==
            Approx(phase).epsilon(1e-9));
      CHECK(verified("ring", topology, make_collective(CollectiveKind::kAllGather, n)).planned_time_us() ==
            Approx(phase).epsilon(1e-9));
      const Schedule all_reduce = verified("ring", topology, make_collective(CollectiveKind::kAllReduce, n));
      CHECK(all_reduce.planned_time_us() == Approx(2 * phase).epsilon(1e-9));
      CHECK(all_reduce.chunks_per_member() == 2);
      CHECK(all_reduce.size() == 2 * 2 * 7 * 8);
    }
  }
  SECTION("unidirectional on a one-way ring") {
    const Topology one_way = generated({{"kind", "ring"}, {"npus", 8}, {"bidirectional", false}});
    const double p = 8;
    const double phase = (p - 1) * (kAlpha + n / (p * kBandwidth));
    const Schedule rs = verified("ring", one_way, make_collective(CollectiveKind::kReduceScatter, n));
    CHECK(rs.chunks_per_member() == 1);
    CHECK(rs.planned_time_us() == Approx(phase).epsilon(1e-9));
    CHECK(verified("ring", one_way, make_collective(CollectiveKind::kAllGather, n)).planned_time_us() ==
          Approx(phase).epsilon(1e-9));
    CHECK(verified("ring", one_way, make_collective(CollectiveKind::kAllReduce, n)).planned_time_us() ==
          Approx(2 * phase).epsilon(1e-9));
  }
  SECTION("two members form one unidirectional ring") {
    const Topology fc = generated({{"kind", "fully_connected"}, {"npus", 4}});
    const Schedule rs = verified("ring", fc, make_collective(CollectiveKind::kReduceScatter, n, 1, {1, 3}));
    CHECK(rs.chunks_per_member() == 1);
    CHECK(rs.planned_time_us() == Approx(kAlpha + n / (2 * kBandwidth)).epsilon(1e-9));
  }
  SECTION("Hamiltonian snake on a torus: one link per hop") {
    const Topology torus = generated({{"kind", "torus"}, {"dims", {4, 4}}});
    const double p = 16;
    CHECK(verified("ring", torus, make_collective(CollectiveKind::kAllReduce, n)).planned_time_us() ==
          Approx(2 * (p - 1) * (kAlpha + n / (2 * p * kBandwidth))).epsilon(1e-9));
  }
}

TEST_CASE("baselines: rhd closed form on power-of-two fully connected networks (Swing Sec. 2.3.3)", "[baselines]") {
  const std::uint64_t n = 8 << 20;
  for (int p : {2, 4, 8, 16}) {
    const Topology fc = generated({{"kind", "fully_connected"}, {"npus", p}});
    double phase = 0.0;
    for (int k = 1; (1 << k) <= p; ++k) phase += kAlpha + (static_cast<double>(n) / (1 << k)) / kBandwidth;
    INFO("p = " << p);
    CHECK(verified("rhd", fc, make_collective(CollectiveKind::kReduceScatter, n)).planned_time_us() ==
          Approx(phase).epsilon(1e-9));
    CHECK(verified("rhd", fc, make_collective(CollectiveKind::kAllGather, n)).planned_time_us() ==
          Approx(phase).epsilon(1e-9));
    CHECK(verified("rhd", fc, make_collective(CollectiveKind::kAllReduce, n)).planned_time_us() ==
          Approx(2 * phase).epsilon(1e-9));
  }
}

TEST_CASE("baselines: rhd non-power-of-two fold on a fully connected network", "[baselines]") {
  // p = 6: p' = 4 active members (1, 3, 4, 5) standing for the block groups {0, 1}, {2, 3}, {4},
  // {5}; extras 0 and 2 fold into 1 and 3. Every transfer has its own link, so the planned time is
  // the critical path through member 1 (b = one block's time):
  const std::uint64_t n = 6 << 20;
  const double b = static_cast<double>(n) / 6 / kBandwidth;
  const Topology fc = generated({{"kind", "fully_connected"}, {"npus", 6}});
  // reduce-scatter: fold 5 blocks; halving at distance 1 (groups 1, 3: 3 blocks), at distance 2
  // (group 0 from member 4: 2 blocks); unfold block 0.
  CHECK(verified("rhd", fc, make_collective(CollectiveKind::kReduceScatter, n)).planned_time_us() ==
        Approx(4 * kAlpha + (5 + 3 + 2 + 1) * b).epsilon(1e-9));
  // all-gather: fold block 0; doubling at distance 2 (group 2: 1 block), at distance 1 (groups 1, 3:
  // 3 blocks); unfold 5 blocks.
  CHECK(verified("rhd", fc, make_collective(CollectiveKind::kAllGather, n)).planned_time_us() ==
        Approx(4 * kAlpha + (1 + 1 + 3 + 5) * b).epsilon(1e-9));
  // all-reduce: fold the whole vector, halving (3, then 2 blocks), doubling (1, then 3 blocks),
  // unfold the whole vector.
  CHECK(verified("rhd", fc, make_collective(CollectiveKind::kAllReduce, n)).planned_time_us() ==
        Approx(6 * kAlpha + (6 + 3 + 2 + 1 + 3 + 6) * b).epsilon(1e-9));
}

TEST_CASE("baselines: direct closed form on a fully connected network (TACOS Fig. 5)", "[baselines]") {
  const std::uint64_t n = 8 << 20;
  for (int p : {2, 5, 8}) {
    const Topology fc = generated({{"kind", "fully_connected"}, {"npus", p}});
    const double phase = kAlpha + static_cast<double>(n) / (p * kBandwidth);
    INFO("p = " << p);
    const Schedule rs = verified("direct", fc, make_collective(CollectiveKind::kReduceScatter, n));
    CHECK(rs.planned_time_us() == Approx(phase).epsilon(1e-9));
    CHECK(rs.size() == static_cast<std::size_t>(p * (p - 1)));
    CHECK(verified("direct", fc, make_collective(CollectiveKind::kAllGather, n)).planned_time_us() ==
          Approx(phase).epsilon(1e-9));
    CHECK(verified("direct", fc, make_collective(CollectiveKind::kAllReduce, n)).planned_time_us() ==
          Approx(2 * phase).epsilon(1e-9));
  }
}

TEST_CASE("baselines: direct all-reduce with shared dependency lists survives a schedule file", "[baselines]") {
  const Topology fc = generated({{"kind", "fully_connected"}, {"npus", 7}});
  const Schedule schedule = verified("direct", fc, make_collective(CollectiveKind::kAllReduce, 1 << 20));
  // Every all-gather send waits on the 6 reductions into its source.
  for (TransferId id = 7 * 6; id < schedule.size(); ++id) CHECK(schedule.deps_of(schedule.transfer(id)).size() == 6);
  const Schedule back = parse_schedule(schedule_to_text(schedule, fc), "direct.json", fc);
  const VerifyResult verdict = verify_schedule(fc, back);
  INFO(verdict.error);
  CHECK(verdict.ok);
  CHECK(back.planned_time_us() == Approx(schedule.planned_time_us()));
}

TEST_CASE("baselines: snake rings on grids", "[baselines]") {
  SECTION("every torus and every mesh with an even dimension gets a Hamiltonian cycle") {
    const std::vector<std::pair<std::string, std::vector<int>>> grids = {
        {"torus", {4, 4}},    {"torus", {3, 5}},   {"torus", {5, 5}},      {"torus", {3, 3, 3}}, {"torus", {2, 3}},
        {"torus", {8, 4, 2}}, {"torus", {7}},      {"mesh", {3, 4}},       {"mesh", {4, 3}},     {"mesh", {2, 3}},
        {"mesh", {6, 6}},     {"mesh", {3, 3, 2}}, {"mesh", {2, 2, 2, 2}}, {"mesh", {5, 2, 3}}};
    for (const auto& [kind, dims] : grids) {
      const Topology topology = generated({{"kind", kind}, {"dims", dims}});
      const RingEmbedding ring = ring_embedding(topology, Collective{}.participants(topology));
      INFO(topology.layout.describe());
      CHECK(ring.method == "snake");
      CHECK(ring.hamiltonian);
      CHECK(is_permutation_of_all(topology, ring.order));
      CHECK(non_link_hops(topology, ring.order) == 0);
    }
  }
  SECTION("a mesh with only odd dimensions has one longer hop, along the smallest dimension") {
    for (const std::vector<int>& dims : std::vector<std::vector<int>>{{3, 3}, {5, 3}, {3, 5, 7}}) {
      const Topology mesh = generated({{"kind", "mesh"}, {"dims", dims}});
      const RingEmbedding ring = ring_embedding(mesh, Collective{}.participants(mesh));
      CHECK_FALSE(ring.hamiltonian);
      CHECK(is_permutation_of_all(mesh, ring.order));
      CHECK(non_link_hops(mesh, ring.order) == 1);
      // The long hop spans (smallest dimension - 1) = 2 links; no link carries two hops one way.
      const auto use = hop_link_use(mesh, ring.order);
      int total = 0;
      for (const auto& [link, count] : use) {
        CHECK(count == 1);
        total += count;
      }
      CHECK(total == static_cast<int>(mesh.npu_count()) - 1 + 2);
    }
  }
  SECTION("sub-collective rings follow the snake") {
    const Topology torus = generated({{"kind", "torus"}, {"dims", {4, 4}}});
    const RingEmbedding whole = ring_embedding(torus, Collective{}.participants(torus));
    const std::vector<NodeId> members = {1, 6, 11, 12};
    const RingEmbedding sub = ring_embedding(torus, members);
    REQUIRE(sub.order.size() == members.size());
    std::vector<std::size_t> positions;
    for (NodeId npu : sub.order) {
      positions.push_back(
          static_cast<std::size_t>(std::find(whole.order.begin(), whole.order.end(), npu) - whole.order.begin()));
    }
    CHECK(std::is_sorted(positions.begin(), positions.end()));
  }
}

TEST_CASE("baselines: Patarasuk-Yuan DFS rings on switched trees are contention free", "[baselines]") {
  for (const Topology& tree : {shipped("tree-2x2x4"), shipped("tree-4x8"), generated({{"kind", "switch"}, {"npus", 8}}),
                               generated({{"kind", "fat_tree"}, {"dims", {4, 3}}})}) {
    INFO(tree.name);
    const RingEmbedding ring = ring_embedding(tree, Collective{}.participants(tree));
    CHECK(ring.method == "dfs");
    CHECK(is_permutation_of_all(tree, ring.order));
    // Every directed link carries at most one hop of the ring: contention free (Lemma 4), and so
    // is the counter-rotating ring, which uses the reverse links.
    for (const auto& [link, count] : hop_link_use(tree, ring.order)) CHECK(count == 1);
    // The all-reduce therefore runs at the single-hop-ring closed form with the route's alphas.
    const Schedule schedule = verified("ring", tree, make_collective(CollectiveKind::kAllGather, 1 << 20));
    CHECK(schedule.chunks_per_member() == 2);
  }
  // tree-2x2x4: NPUs hang off the leaves in order, so the DFS ring is 0, 1, ..., 15.
  const Topology tree = shipped("tree-2x2x4");
  const RingEmbedding ring = ring_embedding(tree, Collective{}.participants(tree));
  for (NodeId i = 0; i < ring.order.size(); ++i) CHECK(ring.order[i] == i);
}

TEST_CASE("baselines: a one-way ring runs the unidirectional ring along its links", "[baselines]") {
  const Topology one_way = generated({{"kind", "ring"}, {"npus", 6}, {"bidirectional", false}});
  const RingEmbedding ring = ring_embedding(one_way, Collective{}.participants(one_way));
  CHECK(non_link_hops(one_way, ring.order) == 0);
  const Schedule schedule = verified("ring", one_way, make_collective(CollectiveKind::kAllReduce, 6000));
  CHECK(schedule.chunks_per_member() == 1);
}
