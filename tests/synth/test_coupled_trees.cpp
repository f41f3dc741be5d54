// SPDX-License-Identifier: MIT
// All-reduce trees used both ways (src/synth/coupled_trees.hpp): what the packing promises. The
// all-reduce they give on a mesh is tested in test_tree_packing.cpp.

#include "../support/catch.hpp"

#include <cstdint>
#include <vector>

#include "../../src/synth/coupled_trees.hpp"
#include "../../src/synth/tree_packing.hpp"
#include "../support/collectives.hpp"

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

/// Checks one packing direction: every member roots one tree per unit, each spanning every node
/// from its root (parents before children, depths counted from the root), each edge's route the
/// one link from `parent` to `child` when `downwards`, else the one back.
void check_spanning(const Topology& topology, const std::vector<NodeId>& members, const synth::TreePacking& packing,
                    bool downwards) {
  std::vector<std::uint32_t> rooted(members.size(), 0);
  for (const synth::PackedTree& tree : packing.trees) {
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
  for (std::uint32_t units : rooted) CHECK(units == packing.units.per_member);
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
    std::vector<double> carried(topology.link_count(), 0.0);
    for (const synth::TreePacking* packing : {&coupled->gather, &coupled->reduce}) {
      for (const synth::PackedTree& tree : packing->trees) {
        for (const synth::TreeEdge& edge : tree.edges)
          carried[packing->routes[edge.route].front()] += tree.units * unit;
      }
    }
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
