// SPDX-License-Identifier: MIT
// Routes on hand-checked graphs: the shorter way round a ring, dimension order on a torus, paths
// through a switch, and every step of the tie-break (hops, then latency, then link ids).

#include "../support/catch.hpp"

#include <stdexcept>
#include <vector>

#include "tenet/topology/routing.hpp"

using namespace tenet;

namespace {

using Path = std::vector<LinkId>;

/// n NPUs on a duplex ring. Link ids: 2i is i -> i+1, 2i+1 the reverse.
Topology laid_out_ring(std::uint32_t n, bool with_layout) {
  Topology topology(n, {});
  for (NodeId i = 0; i < n; ++i) topology.add_duplex(i, (i + 1) % n, 0.5, 50.0);
  if (with_layout) {
    topology.layout.dims = {static_cast<int>(n)};
    topology.layout.wraps = true;
  }
  return topology;
}

/// 3x3 torus, NPU x + 3y. With `one_way_01` the cable 0-1 only carries 1 -> 0.
Topology torus3x3(bool one_way_01 = false) {
  Topology topology(9, {});
  for (NodeId y = 0; y < 3; ++y) {
    for (NodeId x = 0; x < 3; ++x) {
      const NodeId node = x + 3 * y;
      const NodeId east = (x + 1) % 3 + 3 * y;
      if (one_way_01 && node == 0) {
        topology.add_link({1, 0, 0.5, 50.0});
      } else {
        topology.add_duplex(node, east, 0.5, 50.0);
      }
      topology.add_duplex(node, x + 3 * ((y + 1) % 3), 0.5, 50.0);
    }
  }
  topology.layout.dims = {3, 3};
  topology.layout.wraps = true;
  return topology;
}

Path links(const Topology& topology, const std::vector<NodeId>& nodes) {
  Path path;
  for (std::size_t i = 0; i + 1 < nodes.size(); ++i) {
    const LinkId id = topology.find_link(nodes[i], nodes[i + 1]);
    REQUIRE(id != kNoLink);
    path.push_back(id);
  }
  return path;
}

/// route() and the tree agree for every pair, and every route is a connected walk.
/// Unreachable pairs throw.
void check_consistent(const Topology& topology, const Router& router) {
  for (NodeId src = 0; src < topology.node_count(); ++src) {
    const RouteTree tree = router.tree_from(src);
    for (NodeId dst = 0; dst < topology.node_count(); ++dst) {
      if (tree.hops[dst] == ~std::uint32_t{0}) {
        CHECK_THROWS_AS(router.route(src, dst), std::invalid_argument);
        continue;
      }
      const Path path = router.route(src, dst);
      CHECK(path == router.path_in(tree, dst));
      NodeId at = src;
      double latency = 0.0;
      for (LinkId id : path) {
        CHECK(topology.link(id).src == at);
        at = topology.link(id).dst;
        latency += topology.link(id).latency_us;
      }
      CHECK(at == dst);
      CHECK(tree.hops[dst] == path.size());
      CHECK(tree.latency_us[dst] == Approx(latency));
    }
  }
}

}  // namespace

TEST_CASE("shortest paths go the shorter way round a ring", "[routing]") {
  const Topology topology = laid_out_ring(4, false);
  const Router router(topology);
  CHECK_FALSE(router.uses_dimension_order());
  CHECK(router.route(0, 0).empty());
  CHECK(router.route(0, 1) == Path{0});
  CHECK(router.route(0, 3) == Path{7});
  // Two 2-hop paths: 0->1 (link 0) beats 0->3 (link 7) on the first hop.
  CHECK(router.route(0, 2) == Path{0, 2});
  CHECK(router.route(3, 1) == Path{5, 3});
  check_consistent(topology, router);
}

TEST_CASE("dimension order on a ring breaks distance ties in the + direction", "[routing]") {
  const Topology topology = laid_out_ring(4, true);
  const Router router(topology);
  CHECK(router.uses_dimension_order());
  CHECK(router.route(0, 3) == Path{7});     // shorter the - way
  CHECK(router.route(3, 1) == Path{6, 0});  // a tie: + goes 3 -> 0 -> 1
  CHECK(router.route(1, 3) == Path{2, 4});
  check_consistent(topology, router);
  CHECK_FALSE(Router(topology, RoutingPolicy::kShortestPath).uses_dimension_order());
  CHECK(Router(topology, RoutingPolicy::kShortestPath).route(3, 1) == Path{5, 3});
}

TEST_CASE("dimension order on a 3x3 torus moves along x, then y", "[routing]") {
  const Topology topology = torus3x3();
  const Router router(topology, RoutingPolicy::kDimensionOrder);
  REQUIRE(router.uses_dimension_order());
  CHECK(router.route(0, 8) == links(topology, {0, 2, 8}));  // both dimensions the - way
  CHECK(router.route(0, 4) == links(topology, {0, 1, 4}));
  CHECK(router.route(4, 0) == links(topology, {4, 3, 0}));
  CHECK(router.route(0, 5) == links(topology, {0, 2, 5}));
  CHECK(router.route(7, 2) == links(topology, {7, 8, 2}));
  check_consistent(topology, router);

  const RouteTree tree = router.tree_from(4);
  CHECK(tree.source == 4);
  CHECK(tree.parent_link[4] == kNoLink);
  CHECK(tree.hops[0] == 2);
  CHECK(tree.latency_us[0] == Approx(1.0));
}

TEST_CASE("dimension order on a mesh goes straight", "[routing]") {
  // 3x2 mesh, NPU x + 3y.
  Topology topology(6, {});
  for (NodeId y = 0; y < 2; ++y) {
    for (NodeId x = 0; x + 1 < 3; ++x) topology.add_duplex(x + 3 * y, x + 1 + 3 * y, 0.5, 50.0);
  }
  for (NodeId x = 0; x < 3; ++x) topology.add_duplex(x, x + 3, 0.5, 50.0);
  topology.layout.dims = {3, 2};
  const Router router(topology);
  REQUIRE(router.uses_dimension_order());
  CHECK(router.route(0, 2) == links(topology, {0, 1, 2}));
  CHECK(router.route(2, 3) == links(topology, {2, 1, 0, 3}));
  CHECK(router.route(3, 2) == links(topology, {3, 4, 5, 2}));
  check_consistent(topology, router);
}

TEST_CASE("a grid with a missing link routes by shortest paths", "[routing]") {
  const Topology topology = torus3x3(true);
  const Router router(topology);
  CHECK_FALSE(router.uses_dimension_order());
  CHECK(router.route(0, 1) == links(topology, {0, 2, 1}));
  CHECK(router.route(0, 4) == links(topology, {0, 3, 4}));
  CHECK(router.route(1, 0) == links(topology, {1, 0}));
  check_consistent(topology, router);
}

TEST_CASE("routes pass through switches", "[routing]") {
  Topology topology(3, {"sw"});
  for (NodeId i = 0; i < 3; ++i) topology.add_duplex(i, 3, 0.5, 50.0);
  topology.add_duplex(0, 1, 0.5, 50.0);
  const Router router(topology);
  CHECK(router.route(0, 2) == links(topology, {0, 3, 2}));
  CHECK(router.route(2, 1) == links(topology, {2, 3, 1}));
  CHECK(router.route(0, 1) == links(topology, {0, 1}));
  check_consistent(topology, router);
}

TEST_CASE("equal paths are told apart by link ids hop by hop from the source", "[routing]") {
  // 0 -> 2 has the lower id than 0 -> 1, so it wins although node 1 has the lower id.
  Topology first(4, {});
  first.add_link({0, 2, 1.0, 50.0});  // 0
  first.add_link({0, 1, 1.0, 50.0});  // 1
  first.add_link({1, 3, 1.0, 50.0});  // 2
  first.add_link({2, 3, 1.0, 50.0});  // 3
  CHECK(Router(first).route(0, 3) == Path{0, 3});

  // Same first hop: the second hop decides, whatever the last link's id.
  Topology second(5, {});
  second.add_link({0, 1, 1.0, 50.0});  // 0
  second.add_link({1, 3, 1.0, 50.0});  // 1
  second.add_link({1, 2, 1.0, 50.0});  // 2
  second.add_link({2, 4, 1.0, 50.0});  // 3
  second.add_link({3, 4, 1.0, 50.0});  // 4
  CHECK(Router(second).route(0, 4) == Path{0, 1, 4});
}

TEST_CASE("the tie-break follows the chosen paths, not the order nodes were found", "[routing]") {
  // Node 3 is found first from 1 but its best (cheaper) path comes from 2; node 4's path starts
  // with link 0 and so sorts before node 3's, which starts with link 1.
  Topology topology(6, {});
  topology.add_link({0, 1, 1.0, 50.0});  // 0
  topology.add_link({0, 2, 1.0, 50.0});  // 1
  topology.add_link({1, 3, 5.0, 50.0});  // 2
  topology.add_link({1, 4, 1.0, 50.0});  // 3
  topology.add_link({2, 3, 1.0, 50.0});  // 4
  topology.add_link({3, 5, 1.0, 50.0});  // 5
  topology.add_link({4, 5, 1.0, 50.0});  // 6
  const Router router(topology);
  CHECK(router.route(0, 3) == Path{1, 4});
  CHECK(router.route(0, 5) == Path{0, 3, 6});
  check_consistent(topology, router);
}

TEST_CASE("among equal hop counts the lower latency wins, but hops come first", "[routing]") {
  Topology topology(6, {});
  topology.add_link({0, 1, 1.0, 50.0});   // 0
  topology.add_link({1, 3, 1.0, 50.0});   // 1
  topology.add_link({0, 2, 0.5, 50.0});   // 2
  topology.add_link({2, 3, 0.5, 50.0});   // 3
  topology.add_link({0, 4, 0.01, 50.0});  // 4
  topology.add_link({4, 5, 0.01, 50.0});  // 5
  topology.add_link({5, 3, 0.01, 50.0});  // 6
  const Router router(topology);
  CHECK(router.route(0, 3) == Path{2, 3});
  const RouteTree tree = router.tree_from(0);
  CHECK(tree.hops[3] == 2);
  CHECK(tree.latency_us[3] == Approx(1.0));
  check_consistent(topology, router);
}

TEST_CASE("latencies equal up to rounding count as a tie", "[routing]") {
  // (0.1 + 0.2) + 0.3 and (0.3 + 0.2) + 0.1 differ in the last bit; the link ids decide.
  Topology topology(6, {});
  topology.add_link({0, 1, 0.1, 50.0});  // 0
  topology.add_link({1, 2, 0.2, 50.0});  // 1
  topology.add_link({2, 5, 0.3, 50.0});  // 2
  topology.add_link({0, 3, 0.3, 50.0});  // 3
  topology.add_link({3, 4, 0.2, 50.0});  // 4
  topology.add_link({4, 5, 0.1, 50.0});  // 5
  CHECK(Router(topology).route(0, 5) == Path{0, 1, 2});
}

TEST_CASE("unreachable destinations and unknown nodes throw", "[routing]") {
  Topology topology(2, {});
  topology.add_link({0, 1, 0.5, 50.0});
  const Router router(topology);
  CHECK(router.route(0, 1) == Path{0});
  CHECK_THROWS_AS(router.route(1, 0), std::invalid_argument);
  CHECK_THROWS_AS(router.route(0, 2), std::invalid_argument);
  const RouteTree tree = router.tree_from(1);
  CHECK(tree.hops[0] == ~std::uint32_t{0});
  CHECK(tree.parent_link[0] == kNoLink);
  CHECK_THROWS_AS(router.path_in(tree, 0), std::invalid_argument);
}
