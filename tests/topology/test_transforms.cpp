// SPDX-License-Identifier: MIT
// Failures, switch unwinding, member lists and the connectivity check, on topologies built by
// hand so the expected ids, bandwidths and latencies can be checked on paper.

#include "../support/catch.hpp"

#include <string>
#include <vector>

#include "tenet/common/error.hpp"
#include "tenet/topology/transforms.hpp"

using namespace tenet;

namespace {

/// n NPUs on a duplex ring, cable i joining i and i+1. Link ids: 2i is i -> i+1, 2i+1 the reverse.
Topology timed_ring(std::uint32_t n, double latency_us = 0.5, double bandwidth_GBps = 50.0) {
  Topology topology(n, {});
  for (NodeId i = 0; i < n; ++i) topology.add_duplex(i, (i + 1) % n, latency_us, bandwidth_GBps);
  topology.layout.dims = {static_cast<int>(n)};
  topology.layout.wraps = true;
  topology.name = "ring";
  topology.description = "hand-built ring";
  return topology;
}

/// n NPUs on one switch "sw" (node n). Link ids: 2i is i -> sw, 2i+1 is sw -> i.
Topology switch_star(std::uint32_t n, double latency_us = 0.5, double bandwidth_GBps = 120.0) {
  Topology topology(n, {"sw"});
  for (NodeId i = 0; i < n; ++i) topology.add_duplex(i, n, latency_us, bandwidth_GBps);
  return topology;
}

/// The single problem an InputError carries, as "WHERE: MESSAGE".
template <typename F>
std::string only_problem(F&& call) {
  try {
    call();
  } catch (const InputError& error) {
    REQUIRE(error.problems().size() == 1);
    return error.problems()[0].where + ": " + error.problems()[0].message;
  }
  FAIL("no InputError was thrown");
  return "";
}

const Link& link_between(const Topology& topology, NodeId src, NodeId dst) {
  const LinkId id = topology.find_link(src, dst);
  REQUIRE(id != kNoLink);
  return topology.link(id);
}

}  // namespace

TEST_CASE("failed NPUs are removed and the survivors renumbered in order", "[transforms]") {
  const Topology input = timed_ring(4);
  const Topology result = apply_failures(input, {{1}, {}}, "t.json", "/failed");
  REQUIRE(result.npu_count() == 3);
  CHECK(result.original_npu_ids == std::vector<NodeId>{0, 2, 3});
  CHECK(result.original_npu_id(1) == 2);
  // Surviving links in input order: 2->3, 3->2, 3->0, 0->3.
  REQUIRE(result.link_count() == 4);
  CHECK(result.link(0).src == 1);
  CHECK(result.link(0).dst == 2);
  CHECK(result.link(2).src == 2);
  CHECK(result.link(2).dst == 0);
  CHECK(result.link(3).src == 0);
  CHECK(result.link(3).dst == 2);
  CHECK_FALSE(result.layout.is_grid());
  CHECK(result.name == "ring");
  CHECK(result.description == "hand-built ring");
  CHECK(input.npu_count() == 4);  // the input is untouched
}

TEST_CASE("failures compose with an earlier renumbering", "[transforms]") {
  const Topology first = apply_failures(timed_ring(6), {{1}, {}}, "t.json", "/failed");
  CHECK(first.original_npu_ids == std::vector<NodeId>{0, 2, 3, 4, 5});
  const Topology second = apply_failures(first, {{0}, {}}, "t.json", "/failed");
  CHECK(second.original_npu_ids == std::vector<NodeId>{2, 3, 4, 5});
  const Topology third = apply_failures(second, {{3}, {}}, "t.json", "/failed");
  CHECK(third.original_npu_ids == std::vector<NodeId>{2, 3, 4});
  CHECK(third.link_count() == 4);
}

TEST_CASE("failed links are removed and the rest keep their attributes", "[transforms]") {
  Topology input(4, {});
  for (NodeId i = 0; i < 4; ++i) input.add_duplex(i, (i + 1) % 4, 0.1 * (i + 1), 10.0 * (i + 1));
  input.layout.dims = {4};
  input.layout.wraps = true;
  const Topology result = apply_failures(input, {{}, {{0, 1}}}, "t.json", "/failed");
  CHECK(result.npu_count() == 4);
  CHECK(result.original_npu_ids.empty());
  CHECK(result.link_count() == 7);
  CHECK_FALSE(result.has_link(0, 1));
  CHECK(result.has_link(1, 0));
  CHECK(link_between(result, 2, 3).latency_us == Approx(0.3));
  CHECK(link_between(result, 2, 3).bandwidth_GBps == Approx(30.0));
  CHECK_FALSE(result.layout.is_grid());
}

TEST_CASE("no failures leave the topology as it was", "[transforms]") {
  const Topology result = apply_failures(timed_ring(4), {}, "t.json", "/failed");
  CHECK(result.link_count() == 8);
  CHECK(result.layout.is_grid());
}

TEST_CASE("a switch left without links is dropped, the others keep their names", "[transforms]") {
  Topology input(3, {"a", "b"});
  for (NodeId i = 0; i < 3; ++i) input.add_duplex(i, 3, 0.5, 50.0);
  input.add_duplex(2, 4, 0.5, 50.0);
  const Topology result = apply_failures(input, {{2}, {}}, "t.json", "/failed");
  CHECK(result.npu_count() == 2);
  CHECK(result.switch_names() == std::vector<std::string>{"a"});
  CHECK(result.find_switch("a") == 2);
  CHECK(result.link_count() == 4);
  CHECK(result.has_link(0, 2));
  CHECK(result.has_link(2, 1));
}

TEST_CASE("failure errors name the entry and what is wrong", "[transforms]") {
  const Topology input = timed_ring(4);
  CHECK(only_problem([&] {
          apply_failures(input, {{}, {{3, 9}}}, "t.json", "/failed");
        }) == "/failed/links/0: there is no link 3 -> 9");
  CHECK(only_problem([&] {
          apply_failures(input, {{}, {{0, 2}}}, "t.json", "/failed");
        }) == "/failed/links/0: there is no link 0 -> 2");
  CHECK(only_problem([&] {
          apply_failures(input, {{}, {{0, 1}, {0, 1}}}, "t.json", "/failed");
        }) == "/failed/links/1: link 0 -> 1 is listed twice");
  CHECK(only_problem([&] {
          apply_failures(input, {{4}, {}}, "t.json", "/failed");
        }) == "/failed/npus/0: there is no NPU 4 (the topology has 4 NPUs, ids 0..3)");
  CHECK(only_problem([&] {
          apply_failures(input, {{2, 2}, {}}, "t.json", "/failed");
        }) == "/failed/npus/1: NPU 2 is listed twice");
  CHECK(only_problem([&] {
          apply_failures(input, {{0, 1, 2, 3}, {}}, "t.json", "/failed");
        }) == "/failed/npus: every NPU failed; nothing is left to run a collective on");

  Topology switched(2, {"a", "b"});
  switched.add_duplex(0, 2, 0.5, 50.0);
  switched.add_duplex(1, 2, 0.5, 50.0);
  CHECK(only_problem([&] {
          apply_failures(switched, {{}, {{0, 3}}}, "t.json", "/failed");
        }) == "/failed/links/0: there is no link 0 -> switch 'b'");
}

TEST_CASE("every bad failure entry is reported at once", "[transforms]") {
  try {
    apply_failures(timed_ring(4), {{9, 1, 1}, {{3, 9}}}, "t.json", "/failed");
    FAIL("no InputError was thrown");
  } catch (const InputError& error) {
    CHECK(error.problems().size() == 3);
    CHECK(error.source() == "t.json");
    CHECK(std::string(error.what()).find("error: t.json: /failed/links/0: there is no link 3 -> 9") !=
          std::string::npos);
  }
}

TEST_CASE("a cut topology is reported by original NPU ids", "[transforms]") {
  // After the first failure the survivors are, by original id, the path 2-3-4-5-0.
  const Topology first = apply_failures(timed_ring(6), {{1}, {}}, "t.json", "/failed");
  // Current NPU 2 is original 3: cutting it leaves {2} apart from {4, 5, 0}.
  CHECK(only_problem([&] {
          apply_failures(first, {{2}, {}}, "t.json", "/failed");
        }) == "/failed: after the failures NPU 0 cannot reach NPU 2");
  // One direction of one cable of a path is enough: original 3 -> 4 gone, 2 cannot get back.
  CHECK(only_problem([&] {
          apply_failures(first, {{}, {{2, 3}}}, "t.json", "/failed");
        }) == "/failed: after the failures NPU 2 cannot reach NPU 0");
}

TEST_CASE("strong connectivity names a pair that is cut", "[transforms]") {
  Topology chain(3, {});
  chain.add_link({0, 1, 0.5, 50.0});
  chain.add_link({1, 2, 0.5, 50.0});
  chain.add_link({2, 1, 0.5, 50.0});
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  CHECK_FALSE(npus_strongly_connected(chain, &from, &to));
  CHECK(from == 1);
  CHECK(to == 0);
  CHECK(npus_strongly_connected(timed_ring(5), &from, &to));
  CHECK(npus_strongly_connected(switch_star(3), nullptr, nullptr));
}

TEST_CASE("one switch unwound at degree 1 is a unidirectional ring at full bandwidth", "[transforms]") {
  const Topology result = unwind_switches(switch_star(4), 1, false);
  CHECK(result.switch_count() == 0);
  REQUIRE(result.link_count() == 4);
  for (NodeId i = 0; i < 4; ++i) {
    CHECK(result.link(i).src == i);
    CHECK(result.link(i).dst == (i + 1) % 4);
    CHECK(result.link(i).bandwidth_GBps == Approx(120.0));
    CHECK(result.link(i).latency_us == Approx(1.0));
  }
}

TEST_CASE("a bidirectional degree-1 unwinding shares each port between both directions", "[transforms]") {
  const Topology result = unwind_switches(switch_star(4), 1, true);
  REQUIRE(result.link_count() == 8);
  for (NodeId i = 0; i < 4; ++i) {
    CHECK(link_between(result, i, (i + 1) % 4).bandwidth_GBps == Approx(60.0));
    CHECK(link_between(result, i, (i + 3) % 4).bandwidth_GBps == Approx(60.0));
  }
  // Two members: one pair of links, each with the whole port.
  const Topology pair = unwind_switches(switch_star(2), 1, true);
  REQUIRE(pair.link_count() == 2);
  CHECK(link_between(pair, 0, 1).bandwidth_GBps == Approx(120.0));
  CHECK(link_between(pair, 1, 0).bandwidth_GBps == Approx(120.0));
}

TEST_CASE("one switch unwound at degree 2 and 3 splits each port (TACOS Fig. 13)", "[transforms]") {
  const Topology two = unwind_switches(switch_star(4), 2, false);
  REQUIRE(two.link_count() == 8);
  for (NodeId i = 0; i < 4; ++i) {
    CHECK(two.out_degree(i) == 2);
    CHECK(link_between(two, i, (i + 1) % 4).bandwidth_GBps == Approx(60.0));
    CHECK(link_between(two, i, (i + 2) % 4).bandwidth_GBps == Approx(60.0));
    CHECK(link_between(two, i, (i + 2) % 4).latency_us == Approx(1.0));
  }
  const Topology three = unwind_switches(switch_star(4), 3, false);
  REQUIRE(three.link_count() == 12);
  for (NodeId i = 0; i < 4; ++i) {
    CHECK(three.out_degree(i) == 3);
    for (const LinkId id : three.out_links(i)) CHECK(three.link(id).bandwidth_GBps == Approx(40.0));
  }
  // The degree is capped at members - 1.
  CHECK(unwind_switches(switch_star(4), 9, false).link_count() == 12);
}

namespace {

/// spine (node 4) over leaf0 (5, NPUs 0 and 2) and leaf1 (6, NPUs 1 and 3). Uplinks 1 us at
/// 90 GB/s, NPU ports 0.5 us at 100 GB/s. `leaf1_first` cables leaf1 to the spine first.
Topology two_level(bool leaf1_first) {
  Topology topology(4, {"spine", "leaf0", "leaf1"});
  topology.add_duplex(4, leaf1_first ? 6 : 5, 1.0, 90.0);
  topology.add_duplex(4, leaf1_first ? 5 : 6, 1.0, 90.0);
  topology.add_duplex(0, 5, 0.5, 100.0);
  topology.add_duplex(2, 5, 0.5, 100.0);
  topology.add_duplex(1, 6, 0.5, 100.0);
  topology.add_duplex(3, 6, 0.5, 100.0);
  return topology;
}

}  // namespace

TEST_CASE("a tree of switches unwinds along the DFS ring", "[transforms]") {
  // DFS from the spine: leaf0 then leaf1, so the ring is 0, 2, 1, 3 and no cable is shared.
  const Topology ring1 = unwind_switches(two_level(false), 1, false);
  REQUIRE(ring1.link_count() == 4);
  CHECK(ring1.link(0).src == 0);
  CHECK(ring1.link(0).dst == 2);
  CHECK(link_between(ring1, 0, 2).latency_us == Approx(1.0));
  CHECK(link_between(ring1, 0, 2).bandwidth_GBps == Approx(100.0));
  CHECK(link_between(ring1, 2, 1).latency_us == Approx(3.0));
  CHECK(link_between(ring1, 2, 1).bandwidth_GBps == Approx(90.0));
  CHECK(link_between(ring1, 1, 3).bandwidth_GBps == Approx(100.0));
  CHECK(link_between(ring1, 3, 0).bandwidth_GBps == Approx(90.0));
  CHECK_FALSE(ring1.has_link(0, 1));

  // Children are visited in link-id order: cabling leaf1 first puts its NPUs first.
  const Topology swapped = unwind_switches(two_level(true), 1, false);
  REQUIRE(swapped.link_count() == 4);
  CHECK(swapped.link(0).src == 1);
  CHECK(swapped.link(0).dst == 3);
  CHECK(swapped.link(1).src == 3);
  CHECK(swapped.link(1).dst == 0);
}

TEST_CASE("unwound links share the tree's uplinks", "[transforms]") {
  // Ring 0, 2, 1, 3 at degree 2: 0->1, 2->1 and 2->3 all cross leaf0 -> spine -> leaf1.
  const Topology result = unwind_switches(two_level(false), 2, false);
  REQUIRE(result.link_count() == 8);
  CHECK(link_between(result, 0, 1).bandwidth_GBps == Approx(30.0));  // 90 / 3 on the uplink
  CHECK(link_between(result, 0, 1).latency_us == Approx(3.0));
  CHECK(link_between(result, 0, 2).bandwidth_GBps == Approx(50.0));  // 100 / 2 on NPU 0's port
  CHECK(link_between(result, 0, 2).latency_us == Approx(1.0));
  CHECK(link_between(result, 1, 0).bandwidth_GBps == Approx(30.0));
  CHECK(link_between(result, 1, 3).bandwidth_GBps == Approx(50.0));

  // The bidirectional ring crosses each uplink twice (2->1 and 0->3 go up from leaf0).
  const Topology both = unwind_switches(two_level(false), 1, true);
  REQUIRE(both.link_count() == 8);
  CHECK(link_between(both, 2, 1).bandwidth_GBps == Approx(45.0));
  CHECK(link_between(both, 0, 3).bandwidth_GBps == Approx(45.0));
  CHECK(link_between(both, 0, 2).bandwidth_GBps == Approx(50.0));
}

TEST_CASE("unwound links spread over parallel spines", "[transforms]") {
  // Leaves l0 (NPUs 0, 1) and l1 (NPUs 2, 3) under spines s0 and s1; ring 0, 1, 2, 3 at degree 2.
  // Three links cross from l0 to l1: 0->2 and 1->3 over s0, 1->2 over s1 (one spine alone would
  // carry all three at 50/3 GB/s each).
  Topology fat(4, {"s0", "s1", "l0", "l1"});
  fat.add_duplex(6, 4, 1.0, 50.0);
  fat.add_duplex(6, 5, 1.0, 50.0);
  fat.add_duplex(7, 4, 1.0, 50.0);
  fat.add_duplex(7, 5, 1.0, 50.0);
  for (NodeId i = 0; i < 4; ++i) fat.add_duplex(i, i < 2 ? 6 : 7, 0.5, 100.0);
  const Topology result = unwind_switches(fat, 2, false);
  REQUIRE(result.link_count() == 8);
  CHECK(link_between(result, 0, 2).bandwidth_GBps == Approx(25.0));
  CHECK(link_between(result, 1, 2).bandwidth_GBps == Approx(50.0));
  CHECK(link_between(result, 1, 3).bandwidth_GBps == Approx(25.0));
  CHECK(link_between(result, 3, 0).bandwidth_GBps == Approx(50.0));
  CHECK(link_between(result, 1, 3).latency_us == Approx(3.0));
  CHECK(link_between(result, 0, 1).bandwidth_GBps == Approx(50.0));
  CHECK(link_between(result, 0, 1).latency_us == Approx(1.0));
}

TEST_CASE("unwinding merges parallel links and handles separate switch groups", "[transforms]") {
  Topology input = switch_star(3);
  input.add_duplex(0, 1, 2.0, 10.0);
  input.original_npu_ids = {4, 5, 6};
  input.name = "star";
  const Topology merged = unwind_switches(input, 1, false);
  REQUIRE(merged.link_count() == 4);  // 0->1, 1->0 kept first; 1->2, 2->0 added
  CHECK(merged.link(0).src == 0);
  CHECK(merged.link(0).dst == 1);
  CHECK(merged.link(0).bandwidth_GBps == Approx(130.0));
  CHECK(merged.link(0).latency_us == Approx(2.0));
  CHECK(merged.link(1).bandwidth_GBps == Approx(10.0));
  CHECK(merged.original_npu_ids == std::vector<NodeId>{4, 5, 6});
  CHECK(merged.name == "star");

  Topology groups(4, {"a", "b"});
  for (NodeId i : {0u, 1u, 2u}) groups.add_duplex(i, 4, 0.5, 50.0);
  for (NodeId i : {1u, 3u}) groups.add_duplex(i, 5, 0.5, 50.0);
  const Topology rings = unwind_switches(groups, 1, false);
  CHECK(rings.switch_count() == 0);
  CHECK(rings.link_count() == 5);
  CHECK(rings.has_link(2, 0));
  CHECK(rings.has_link(1, 3));
  CHECK(rings.has_link(3, 1));
  CHECK(link_between(rings, 3, 1).bandwidth_GBps == Approx(50.0));
}

TEST_CASE("unwinding without switches changes nothing and degree 0 is refused", "[transforms]") {
  CHECK(unwind_switches(timed_ring(4), 2, false).link_count() == 8);
  CHECK(only_problem([] { unwind_switches(switch_star(4), 0, false); }) ==
        ": the switch unwinding degree must be at least 1, got 0");
}

TEST_CASE("a switch unwound in a radix links each NPU to the radix's digit offsets", "[transforms]") {
  // 20 members in radix 4: offsets 1, 2, 3, then 4, 8, 12, 16 (20 is past the group).
  std::uint32_t links_each = 0;
  const Topology result = unwind_switches_in_radix(switch_star(20), 4, &links_each);
  CHECK(links_each == 7);
  CHECK(result.switch_count() == 0);
  REQUIRE(result.link_count() == 20 * 7);
  for (NodeId i = 0; i < 20; ++i) {
    CHECK(result.out_degree(i) == 7);
    for (const NodeId offset : {1u, 2u, 3u, 4u, 8u, 12u, 16u}) {
      const Link& link = link_between(result, i, (i + offset) % 20);
      // Seven links leave through each port and seven arrive through each: 1/7 of 120 GB/s.
      CHECK(link.bandwidth_GBps == Approx(120.0 / 7.0));
      CHECK(link.latency_us == Approx(1.0));
    }
    CHECK_FALSE(result.has_link(i, (i + 5) % 20));
  }
  // A group no larger than the radix is a full mesh; without switches nothing changes.
  CHECK(unwind_switches_in_radix(switch_star(4), 16).link_count() == 12);
  CHECK(unwind_switches_in_radix(timed_ring(4), 16, &links_each).link_count() == 8);
  CHECK(links_each == 0);
  CHECK(only_problem([] { unwind_switches_in_radix(switch_star(4), 1); }) ==
        ": the switch unwinding radix must be at least 2, got 1");
}

TEST_CASE("member lists parse ids and ranges", "[transforms]") {
  const Topology topology(8, {"sw"});
  CHECK(parse_members("0,1,4-7", topology, "--members") == std::vector<NodeId>{0, 1, 4, 5, 6, 7});
  CHECK(parse_members(" 6 , 2 - 3 ,0 ", topology, "--members") == std::vector<NodeId>{0, 2, 3, 6});
  CHECK(parse_members("7,0", topology, "--members") == std::vector<NodeId>{0, 7});
}

TEST_CASE("member lists use original ids on a renumbered topology", "[transforms]") {
  Topology topology(5, {});
  topology.original_npu_ids = {0, 2, 3, 5, 9};
  CHECK(parse_members("2,9", topology, "--members") == std::vector<NodeId>{1, 4});
  CHECK(parse_members("2-3", topology, "--members") == std::vector<NodeId>{1, 2});
  CHECK(only_problem([&] { parse_members("0,7", topology, "--members"); }) ==
        "--members: NPU 7 failed and cannot be a member");
  CHECK(only_problem([&] { parse_members("5-6", topology, "--members"); }) ==
        "--members: NPU 6 failed and cannot be a member");
  CHECK(only_problem([&] { parse_members("0,12", topology, "--members"); }) ==
        "--members: there is no NPU 12 among the surviving NPUs (the largest is 9)");
}

TEST_CASE("member list errors", "[transforms]") {
  const Topology topology(8, {"sw"});
  auto problem = [&](const std::string& text) {
    return only_problem([&] { parse_members(text, topology, "--members"); });
  };
  CHECK(problem("0,sw") == "--members: switch 'sw' cannot be a member: only NPUs own data");
  CHECK(problem("7-4") == "--members: range 7-4 is backwards; write 4-7");
  CHECK(problem("1,1") == "--members: NPU 1 is listed twice");
  CHECK(problem("0-2,2") == "--members: NPU 2 is listed twice");
  CHECK(problem("0,x") == "--members: 'x' is not an NPU id or a range such as 4-7");
  CHECK(problem("0,1-") == "--members: '1-' is not an NPU id or a range such as 4-7");
  CHECK(problem("0,-1") == "--members: '-1' is not an NPU id or a range such as 4-7");
  CHECK(problem("0,99999999999999999999999") ==
        "--members: '99999999999999999999999' is not an NPU id or a range such as 4-7");
  CHECK(problem("0,8") == "--members: there is no NPU 8 (NPU ids are 0..7)");
  CHECK(problem("6-2000000000") == "--members: range 6-2000000000 goes past the largest NPU id 7");
  CHECK(problem("1,,2") == "--members: empty entry in the member list '1,,2'; expected NPU ids such as 0,1,4-7");
  CHECK(problem("3") == "--members: a collective needs at least 2 members, got 1");
  CHECK(problem("  ") == "--members: the member list is empty; expected NPU ids such as 0,1,4-7");
}
