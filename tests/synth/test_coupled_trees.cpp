// SPDX-License-Identifier: MIT
// All-reduce trees used both ways (src/synth/coupled_trees.hpp): what the packing promises. The
// all-reduce they give on a mesh is tested in test_tree_packing.cpp.

#include "../support/catch.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "../../src/synth/coupled_trees.hpp"
#include "../../src/synth/tree_packing.hpp"
#include "../../src/synth/tree_schedule.hpp"
#include "../support/collectives.hpp"
#include "../support/sanitizers.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

/// A rows x columns mesh whose row links run at `row_GBps` and column links at `column_GBps`.
Topology two_speed_mesh(std::uint32_t rows, std::uint32_t columns, double row_GBps, double column_GBps) {
  Topology topology(rows * columns, {});
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (std::uint32_t c = 0; c < columns; ++c) {
      const NodeId at = r * columns + c;
      if (c + 1 < columns) topology.add_duplex(at, at + 1, 0.5, row_GBps);
      if (r + 1 < rows) topology.add_duplex(at, at + columns, 0.5, column_GBps);
    }
  }
  return topology;
}

/// Checks one packing direction: every tree spans every node from its root (parents before
/// children, depths counted from the root), each edge's route the one link from `parent` to
/// `child` when `downwards`, else the one back; every member roots one tree per unit, or, chained,
/// the trees carry every member's units between them.
void check_spanning(const Topology& topology, const std::vector<NodeId>& members, const synth::TreePacking& packing,
                    bool downwards) {
  std::vector<std::uint32_t> rooted(members.size(), 0);
  std::uint64_t carried = 0;
  for (const synth::PackedTree& tree : packing.trees) {
    carried += tree.units;
    REQUIRE(tree.root < members.size());
    rooted[tree.root] += tree.units;
    REQUIRE(tree.edges.size() == topology.node_count() - 1);
    REQUIRE(tree.depth.size() == tree.edges.size());
    std::vector<std::uint32_t> depth(topology.node_count(), ~std::uint32_t{0});
    depth[members[tree.root]] = 0;
    for (std::size_t e = 0; e < tree.edges.size(); ++e) {
      const synth::TreeEdge& edge = tree.edges[e];
      REQUIRE(depth[edge.parent] != ~std::uint32_t{0});
      REQUIRE(depth[edge.child] == ~std::uint32_t{0});
      depth[edge.child] = depth[edge.parent] + 1;
      CHECK(tree.depth[e] == depth[edge.child]);
      const std::vector<LinkId>& route = packing.routes.at(edge.route);
      REQUIRE(route.size() == 1);
      const Link& link = topology.link(route.front());
      CHECK(link.src == (downwards ? edge.parent : edge.child));
      CHECK(link.dst == (downwards ? edge.child : edge.parent));
    }
  }
  if (packing.chained) {
    CHECK(carried == std::uint64_t{packing.units.per_member} * members.size());
  } else {
    for (std::uint32_t units : rooted) CHECK(units == packing.units.per_member);
  }
}

/// What the links of `topology` carry in both directions of `coupled`, at its unit bandwidth.
std::vector<double> carried_per_link(const Topology& topology, const synth::CoupledTrees& coupled) {
  std::vector<double> carried(topology.link_count(), 0.0);
  for (const synth::TreePacking* packing : {&coupled.gather, &coupled.reduce}) {
    for (const synth::PackedTree& tree : packing->trees) {
      for (const synth::TreeEdge& edge : tree.edges)
        carried[packing->routes[edge.route].front()] += tree.units * packing->units.unit_GBps;
    }
  }
  return carried;
}

}  // namespace

TEST_CASE("trees used both ways span from every member and fit every link in both directions", "[synth][trees]") {
  for (const Topology& topology :
       {generated({{"kind", "mesh"}, {"dims", {6, 6}}}), two_speed_mesh(3, 5, 100.0, 40.0)}) {
    const std::vector<NodeId> members = all_npus(topology);
    const auto coupled = synth::pack_coupled_trees(topology, members, 1, 1.0);
    REQUIRE(coupled);
    check_spanning(topology, members, coupled->gather, true);
    check_spanning(topology, members, coupled->reduce, false);
    // Each tree uses an edge both ways: down in the broadcast, up in the reduction.
    const double unit = coupled->gather.units.unit_GBps;
    REQUIRE(unit > 0.0);
    CHECK(coupled->reduce.units.unit_GBps == unit);
    CHECK_FALSE(coupled->gather.chained);
    const std::vector<double> carried = carried_per_link(topology, *coupled);
    for (LinkId link = 0; link < topology.link_count(); ++link)
      CHECK(carried[link] <= topology.link(link).bandwidth_GBps * (1.0 + 1e-12));
  }
  // On a uniform mesh the trees come close to the most any packing of spanning trees can carry:
  // every tree takes 35 of the 60 link pairs, so 36 trees carry at most 60/35 of a pair's 50 GB/s.
  const Topology mesh = generated({{"kind", "mesh"}, {"dims", {6, 6}}});
  const auto coupled = synth::pack_coupled_trees(mesh, all_npus(mesh), 1, 1.0);
  REQUIRE(coupled);
  const double carried = 36 * coupled->gather.units.unit_GBps;
  INFO("the trees carry " << carried << " GB/s, spanning trees at most " << 60.0 / 35.0 * 50.0);
  CHECK(carried >= 0.9 * 60.0 / 35.0 * 50.0);
}

TEST_CASE("trees used both ways need every NPU a member and no switches", "[synth][trees]") {
  const Topology mesh = generated({{"kind", "mesh"}, {"dims", {3, 3}}});
  CHECK_FALSE(synth::pack_coupled_trees(mesh, {0, 1, 2, 3}, 1, 1.0));
  const Topology switched = shipped("switch-8");
  CHECK_FALSE(synth::pack_coupled_trees(switched, all_npus(switched), 1, 1.0));
  // Joined one way only, the two halves have no pair of links between them.
  Topology halves(4, {});
  halves.add_duplex(0, 1, 0.5, 50.0);
  halves.add_duplex(2, 3, 0.5, 50.0);
  halves.add_link({1, 2, 0.5, 50.0});
  CHECK_FALSE(synth::pack_coupled_trees(halves, all_npus(halves), 1, 1.0));
}

TEST_CASE("fewer trees used both ways each carry several members' data as one chain", "[synth][trees]") {
  const Topology mesh = generated({{"kind", "mesh"}, {"dims", {6, 6}}});
  const std::vector<NodeId> members = all_npus(mesh);
  const auto one_each = synth::pack_coupled_trees(mesh, members, 1, 1.0);
  REQUIRE(one_each);
  for (std::uint32_t trees : {18u, 9u}) {
    INFO(trees << " trees");
    const auto coupled = synth::pack_coupled_trees(mesh, members, 1, 1.0, trees);
    REQUIRE(coupled);
    REQUIRE(coupled->gather.trees.size() == trees);
    CHECK(coupled->gather.chained);
    CHECK(coupled->reduce.chained);
    check_spanning(mesh, members, coupled->gather, true);
    check_spanning(mesh, members, coupled->reduce, false);
    std::vector<std::uint32_t> roots;
    for (const synth::PackedTree& tree : coupled->gather.trees) {
      CHECK(tree.units == members.size() / trees);
      roots.push_back(tree.root);
    }
    std::sort(roots.begin(), roots.end());
    CHECK(std::adjacent_find(roots.begin(), roots.end()) == roots.end());
    const std::vector<double> carried = carried_per_link(mesh, *coupled);
    for (LinkId link = 0; link < mesh.link_count(); ++link)
      CHECK(carried[link] <= mesh.link(link).bandwidth_GBps * (1.0 + 1e-12));
    // Coarser than a tree per member, yet the loads stay even: 18 trees carry what 36 do (the
    // busiest pair 11 trees of 2 units, against 22 of 1); 9 trees take 315 pair-uses of 60 pairs,
    // 5.25 each, and the busiest carries 6 (of 4 units: 0.92 of what 36 trees carry).
    CHECK(coupled->gather.units.unit_GBps >= 0.9 * one_each->gather.units.unit_GBps);
  }
  // Trees must share the members out evenly.
  CHECK_FALSE(synth::pack_coupled_trees(mesh, members, 1, 1.0, 5));
  CHECK_FALSE(synth::pack_coupled_trees(mesh, members, 1, 1.0, 72));
}

TEST_CASE("an all-reduce on chained trees: each tree's chunks in one range, one chain per edge", "[synth][trees]") {
  const Topology mesh = generated({{"kind", "mesh"}, {"dims", {4, 4}}});
  const std::vector<NodeId> members = all_npus(mesh);
  constexpr std::uint32_t kTrees = 4;
  constexpr std::uint32_t kPieces = 3;
  const auto coupled = synth::pack_coupled_trees(mesh, members, 1, 1.0, kTrees);
  REQUIRE(coupled);
  const std::uint32_t per_tree = 16 / kTrees * kPieces;  // chunks a tree carries
  const Schedule planned = synth::tree_schedule(mesh, CollectiveKind::kAllReduce, 64 << 20, members, &coupled->gather,
                                                &coupled->reduce, kPieces);
  REQUIRE(planned.chunks_per_member() == kPieces);
  const Schedule schedule = timed_by_simulation(mesh, planned);
  const VerifyResult verdict = verify_schedule(mesh, schedule);
  INFO(verdict.error);
  REQUIRE(verdict.ok);
  CHECK(simulate(mesh, schedule).time_us == Approx(schedule.planned_time_us()).epsilon(1e-9));
  // Every transfer crosses an edge of the tree its chunk's range belongs to, and follows the one
  // before it on that edge and direction (a chain: the tree's units take turns).
  std::map<std::tuple<std::uint32_t, NodeId, NodeId>, TransferId> last_on;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    const std::span<const ChunkId> chunks = schedule.chunks_of(transfer);
    REQUIRE(chunks.size() == 1);
    const std::uint32_t tree = chunks.front() / per_tree;
    REQUIRE(tree < kTrees);
    const synth::PackedTree& shape = coupled->gather.trees[tree];
    CHECK(std::any_of(shape.edges.begin(), shape.edges.end(), [&](const synth::TreeEdge& edge) {
      return (edge.parent == transfer.src && edge.child == transfer.dst) ||
             (edge.child == transfer.src && edge.parent == transfer.dst);
    }));
    const auto key = std::make_tuple(tree, transfer.src, transfer.dst);
    if (const auto before = last_on.find(key); before != last_on.end()) {
      const std::span<const TransferId> deps = schedule.deps_of(id);
      CHECK(std::find(deps.begin(), deps.end(), before->second) != deps.end());
    }
    last_on[key] = id;
  }
}

TEST_CASE("chained trees' MSCCL XML keeps each chain on a lane of its own", "[synth][trees][msccl]") {
  // hypercube3d-4x4x4 all-reduce of 16 MiB on 32 trees of 2 units, 8 pieces a unit, senders kept
  // at pace: laid out with each transfer on the first free lane between a pair the file ran
  // 243.2 us against the schedule's 201.8 (1.21x); with each tree edge's chain on a lane of its
  // own, 231.8 (1.15x).
  const Topology cube = shipped("hypercube3d-4x4x4");
  if (!swept(cube.npu_count(), "hypercube3d-4x4x4")) return;
  const std::vector<NodeId> members = all_npus(cube);
  const auto coupled = synth::pack_coupled_trees(cube, members, 1, 1.0, 32);
  REQUIRE(coupled);
  const Schedule schedule = timed_by_simulation(
      cube, synth::tree_schedule(cube, CollectiveKind::kAllReduce, 16 << 20, members, &coupled->gather,
                                 &coupled->reduce, 8, {.senders_keep_pace = true}));
  const MscclWritten written = write_msccl_xml(schedule, cube, {});
  CHECK(verify_msccl_xml(written.text, &cube).ok);
  INFO("file " << written.time_us << " us, schedule " << schedule.planned_time_us() << " us");
  CHECK(written.time_us <= 1.17 * schedule.planned_time_us());
}
