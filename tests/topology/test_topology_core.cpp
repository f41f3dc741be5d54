// SPDX-License-Identifier: MIT
// The Topology container itself: link lookup from either end, copies and moves.

#include "../support/catch.hpp"

#include <utility>

#include "tenet/topology/topology.hpp"

using namespace tenet;

namespace {

/// A star: `npus` NPUs on one switch (node id npus), duplex links.
Topology star(std::uint32_t npus) {
  Topology topology(npus, {"sw"});
  for (NodeId npu = 0; npu < npus; ++npu) topology.add_duplex(npu, npus, 0.5, 50.0);
  return topology;
}

}  // namespace

TEST_CASE("find_link answers from whichever end has fewer links", "[topology]") {
  const Topology topology = star(1000);
  for (NodeId npu : {0u, 1u, 500u, 999u}) {
    const LinkId up = topology.find_link(npu, 1000);
    const LinkId down = topology.find_link(1000, npu);
    REQUIRE(up != kNoLink);
    REQUIRE(down != kNoLink);
    CHECK(topology.link(up).src == npu);
    CHECK(topology.link(up).dst == 1000);
    CHECK(topology.link(down).src == 1000);
    CHECK(topology.link(down).dst == npu);
  }
  CHECK(topology.find_link(0, 1) == kNoLink);
  CHECK_FALSE(topology.has_link(1000, 1000));
}

TEST_CASE("a moved topology keeps its graph and leaves an empty one behind, and a copy is independent", "[topology]") {
  Topology original = star(8);
  original.name = "star";
  const std::string fingerprint = original.fingerprint();
  Topology copy = original;
  Topology moved = std::move(original);
  CHECK(moved.fingerprint() == fingerprint);
  CHECK(moved.out_degree(8) == 8);
  CHECK(moved.has_link(3, 8));
  CHECK(original.node_count() == 0);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  CHECK(original.link_count() == 0);
  original = star(2);  // a moved-from topology takes a new value
  CHECK(original.has_link(1, 2));
  copy.add_link({0, 1, 0.5, 50.0});
  CHECK(copy.has_link(0, 1));
  CHECK_FALSE(moved.has_link(0, 1));
  CHECK(copy.in_degree(1) == 2);
}
