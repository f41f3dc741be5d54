// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../support/catch.hpp"
#include <nlohmann/json.hpp>

#include "tenet/common/error.hpp"
#include "tenet/topology/generators.hpp"

using nlohmann::json;
using tenet::generate_topology;
using tenet::InputError;
using tenet::LinkDefaults;
using tenet::NodeId;
using tenet::Topology;

namespace {

Topology generate(const json& generator, const LinkDefaults& defaults = {}) {
  return generate_topology(generator, defaults, "t.json", "/generator");
}

/// what() of the InputError the generator throws, or a marker when it does not throw.
std::string error_of(const json& generator) {
  try {
    generate(generator);
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

struct Expected {
  std::uint64_t npus;
  std::uint64_t switches;
  std::uint64_t links;
  std::uint64_t min_npu_degree;
  std::uint64_t max_npu_degree;
};

/// Counts and NPU out-degrees against closed formulas; also no self loops, no duplicate links,
/// and every link has its reverse (all generators but the one-way ring build duplex cables).
void check_shape(const Topology& topology, const Expected& expected, bool duplex = true) {
  CHECK(topology.npu_count() == expected.npus);
  CHECK(topology.switch_count() == expected.switches);
  CHECK(topology.link_count() == expected.links);
  std::uint32_t min_degree = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t max_degree = 0;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    min_degree = std::min(min_degree, topology.out_degree(npu));
    max_degree = std::max(max_degree, topology.out_degree(npu));
  }
  CHECK(min_degree == expected.min_npu_degree);
  CHECK(max_degree == expected.max_npu_degree);
  std::set<std::pair<NodeId, NodeId>> seen;
  bool simple = true;
  for (const tenet::Link& link : topology.links()) {
    simple = simple && link.src != link.dst && link.src < topology.node_count() && link.dst < topology.node_count();
    simple = simple && seen.insert({link.src, link.dst}).second;
  }
  CHECK(simple);
  if (duplex) {
    bool reversed = true;
    for (const tenet::Link& link : topology.links()) reversed = reversed && seen.count({link.dst, link.src}) == 1;
    CHECK(reversed);
  }
  std::set<std::string> names(topology.switch_names().begin(), topology.switch_names().end());
  CHECK(names.size() == topology.switch_count());
}

std::pair<std::uint64_t, std::uint64_t> npu_degree_range(const Topology& topology) {
  std::uint64_t low = std::numeric_limits<std::uint64_t>::max(), high = 0;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    low = std::min<std::uint64_t>(low, topology.out_degree(npu));
    high = std::max<std::uint64_t>(high, topology.out_degree(npu));
  }
  return {low, high};
}

/// Every node reachable from NPU 0 over directed links.
bool connected(const Topology& topology) {
  std::vector<char> reached(topology.node_count(), 0);
  std::vector<NodeId> stack{0};
  reached[0] = 1;
  while (!stack.empty()) {
    const NodeId node = stack.back();
    stack.pop_back();
    for (tenet::LinkId id : topology.out_links(node)) {
      const NodeId next = topology.link(id).dst;
      if (!reached[next]) {
        reached[next] = 1;
        stack.push_back(next);
      }
    }
  }
  return std::all_of(reached.begin(), reached.end(), [](char r) { return r != 0; });
}

/// Grid layout round-trips and every NPU-NPU link joins coordinates one step apart in exactly one
/// dimension (wrapping on a torus). Returns that dimension for each link.
std::vector<int> check_grid(const Topology& topology, const std::vector<int>& dims, bool wraps) {
  REQUIRE(topology.layout.dims == dims);
  CHECK(topology.layout.wraps == wraps);
  bool round_trip = true;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    round_trip = round_trip && topology.layout.npu_at(topology.layout.coords(npu)) == npu;
  }
  CHECK(round_trip);
  std::vector<int> link_dims;
  bool neighbours = true;
  for (const tenet::Link& link : topology.links()) {
    const std::vector<int> a = topology.layout.coords(link.src);
    const std::vector<int> b = topology.layout.coords(link.dst);
    int differing = 0;
    int dim = -1;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (a[d] == b[d]) continue;
      ++differing;
      dim = static_cast<int>(d);
      const int step = std::abs(a[d] - b[d]);
      neighbours = neighbours && (step == 1 || (wraps && step == dims[d] - 1));
    }
    neighbours = neighbours && differing == 1;
    link_dims.push_back(dim);
  }
  CHECK(neighbours);
  return link_dims;
}

std::uint64_t product(const std::vector<std::uint64_t>& values) {
  std::uint64_t result = 1;
  for (std::uint64_t value : values) result *= value;
  return result;
}

std::vector<int> as_ints(const std::vector<std::uint64_t>& values) {
  return std::vector<int>(values.begin(), values.end());
}

const std::string kKnownKinds =
    "known kinds: ring, fully_connected, mesh, torus, hypercube, hypercube_3d, switch, two_level_switch, "
    "ring_fc_switch, dragonfly, hammingmesh, hyperx, fat_tree, tree, random";

}  // namespace

TEST_CASE("generator_kinds lists every kind", "[generators]") {
  CHECK(tenet::generator_kinds().size() == 15);
  for (const std::string& kind : tenet::generator_kinds()) {
    INFO(kind);
    CHECK(error_of({{"kind", kind}}).find("unknown generator") == std::string::npos);
  }
}

TEST_CASE("ring: 2N links bidirectional, N one-way", "[generators]") {
  for (std::uint64_t n : {3, 5, 8}) {
    const Topology ring = generate({{"kind", "ring"}, {"npus", n}});
    check_shape(ring, {n, 0, 2 * n, 2, 2});
    check_grid(ring, {static_cast<int>(n)}, true);
    CHECK(ring.name == "ring-" + std::to_string(n));
  }
  // Two NPUs: one duplex cable, not two parallel ones.
  check_shape(generate({{"kind", "ring"}, {"npus", 2}}), {2, 0, 2, 1, 1});

  const Topology one_way = generate({{"kind", "ring"}, {"npus", 5}, {"bidirectional", false}});
  check_shape(one_way, {5, 0, 5, 1, 1}, false);
  CHECK_FALSE(one_way.layout.is_grid());
  for (NodeId npu = 0; npu < 5; ++npu) CHECK(one_way.link(npu).dst == (npu + 1) % 5);
  CHECK(one_way.description == "ring 5: 5 NPUs, 5 links; one-way, 50 GB/s, 0.5 us");
}

TEST_CASE("fully_connected: N(N-1) links", "[generators]") {
  for (std::uint64_t n : {2, 5, 9}) {
    check_shape(generate({{"kind", "fully_connected"}, {"npus", n}}), {n, 0, n * (n - 1), n - 1, n - 1});
  }
}

TEST_CASE("mesh: 2(2ab - a - b) links in 2D, sum over dimensions in general", "[generators]") {
  using Dims = std::vector<std::uint64_t>;
  for (const Dims& dims : {Dims{3, 4}, Dims{5, 5}, Dims{2, 3, 4}, Dims{1, 6}}) {
    const std::uint64_t n = product(dims);
    std::uint64_t links = 0, corner = 0, inner = 0;
    for (std::uint64_t size : dims) {
      links += 2 * (n / size) * (size - 1);
      corner += size >= 2 ? 1 : 0;
      inner += size >= 3 ? 2 : (size == 2 ? 1 : 0);
    }
    const Topology mesh = generate({{"kind", "mesh"}, {"dims", dims}});
    check_shape(mesh, {n, 0, links, corner, inner});
    check_grid(mesh, as_ints(dims), false);
  }
  CHECK(generate({{"kind", "mesh"}, {"dims", {5, 5}}}).link_count() == 2 * (2 * 25 - 5 - 5));
}

TEST_CASE("torus: 2DN links when every dimension is at least 3, one cable for size 2, none for size 1",
          "[generators]") {
  using Dims = std::vector<std::uint64_t>;
  for (const Dims& dims : {Dims{4, 4}, Dims{3, 5, 6}, Dims{8}}) {
    const std::uint64_t n = product(dims);
    const Topology torus = generate({{"kind", "torus"}, {"dims", dims}});
    check_shape(torus, {n, 0, 2 * dims.size() * n, 2 * dims.size(), 2 * dims.size()});
    check_grid(torus, as_ints(dims), true);
  }
  check_shape(generate({{"kind", "torus"}, {"dims", {2, 4}}}), {8, 0, 8 + 16, 3, 3});
  check_shape(generate({{"kind", "torus"}, {"dims", {2, 2, 2}}}), {8, 0, 24, 3, 3});
  const Topology flat = generate({{"kind", "torus"}, {"dims", {1, 5}}});
  check_shape(flat, {5, 0, 10, 2, 2});
  check_grid(flat, {1, 5}, true);
}

TEST_CASE("torus: link order is NPU by NPU, dimension by dimension, + direction first", "[generators]") {
  const Topology torus = generate({{"kind", "torus"}, {"dims", {3, 3}}});
  const std::vector<std::pair<NodeId, NodeId>> first{{0, 1}, {1, 0}, {0, 3}, {3, 0}, {1, 2}, {2, 1},
                                                     {1, 4}, {4, 1}, {2, 0}, {0, 2}, {2, 5}, {5, 2}};
  for (std::size_t i = 0; i < first.size(); ++i) {
    INFO("link " << i);
    CHECK(torus.link(static_cast<tenet::LinkId>(i)).src == first[i].first);
    CHECK(torus.link(static_cast<tenet::LinkId>(i)).dst == first[i].second);
  }
  CHECK(torus.name == "torus-3x3");
  CHECK(torus.description == "torus 3x3: 9 NPUs, 36 links; 50 GB/s, 0.5 us");
}

TEST_CASE("per-dimension bandwidth and latency land on the links of their dimension", "[generators]") {
  const Topology torus =
      generate({{"kind", "torus"}, {"dims", {4, 3}}, {"bandwidth_GBps", {100, 25}}, {"latency_us", {1, 2.5}}});
  const std::vector<int> link_dims = check_grid(torus, {4, 3}, true);
  bool right = true;
  for (tenet::LinkId id = 0; id < torus.link_count(); ++id) {
    const tenet::Link& link = torus.link(id);
    right = right && link.bandwidth_GBps == (link_dims[id] == 0 ? 100.0 : 25.0);
    right = right && link.latency_us == (link_dims[id] == 0 ? 1.0 : 2.5);
  }
  CHECK(right);
  CHECK(torus.description == "torus 4x3: 12 NPUs, 48 links; [100, 25] GB/s, [1, 2.5] us");

  const Topology mesh = generate({{"kind", "mesh"}, {"dims", {3, 3}}}, LinkDefaults{2.0, 10.0});
  CHECK(mesh.link(0).bandwidth_GBps == 10.0);
  CHECK(mesh.link(0).latency_us == 2.0);
  const Topology scalar =
      generate({{"kind", "mesh"}, {"dims", {3, 3}}, {"bandwidth_GBps", 7}}, LinkDefaults{2.0, 10.0});
  CHECK(scalar.link(5).bandwidth_GBps == 7.0);
  CHECK(scalar.link(5).latency_us == 2.0);
}

TEST_CASE("hypercube: 2^D NPUs, D * 2^D links, a mesh 2x...x2", "[generators]") {
  for (std::uint64_t d : {1, 3, 6}) {
    const std::uint64_t n = std::uint64_t{1} << d;
    const Topology cube = generate({{"kind", "hypercube"}, {"dimension", d}});
    check_shape(cube, {n, 0, d * n, d, d});
    check_grid(cube, std::vector<int>(d, 2), false);
  }
  CHECK(generate({{"kind", "hypercube"}, {"dimension", 3}}).name == "hypercube-3d");
}

TEST_CASE("hypercube_3d: the TACOS 3D hypercube is a 3D mesh", "[generators]") {
  using Dims = std::vector<std::uint64_t>;
  for (const Dims& dims : {Dims{2, 2, 2}, Dims{4, 4, 4}, Dims{3, 4, 5}}) {
    const std::uint64_t n = product(dims);
    std::uint64_t links = 0, inner = 0;
    for (std::uint64_t size : dims) {
      links += 2 * (n / size) * (size - 1);
      inner += size >= 3 ? 2 : 1;
    }
    const Topology cube = generate({{"kind", "hypercube_3d"}, {"dims", dims}});
    check_shape(cube, {n, 0, links, 3, inner});
    check_grid(cube, as_ints(dims), false);
  }
  CHECK(generate({{"kind", "hypercube_3d"}, {"dims", {4, 4, 4}}}).link_count() == 288);
}

TEST_CASE("hyperx: N * sum(d_i - 1) links", "[generators]") {
  using Dims = std::vector<std::uint64_t>;
  for (const Dims& dims : {Dims{4, 4}, Dims{2, 3, 4}, Dims{5}}) {
    const std::uint64_t n = product(dims);
    std::uint64_t peers = 0;
    for (std::uint64_t size : dims) peers += size - 1;
    const Topology hyperx = generate({{"kind", "hyperx"}, {"dims", dims}});
    check_shape(hyperx, {n, 0, n * peers, peers, peers});
    CHECK_FALSE(hyperx.layout.is_grid());
  }
  // NPUs 0 and 3 share coordinate 1 in a 4x4 HyperX; 0 and 5 share none.
  const Topology hyperx = generate({{"kind", "hyperx"}, {"dims", {4, 4}}, {"bandwidth_GBps", {10, 20}}});
  CHECK(hyperx.link(hyperx.find_link(0, 3)).bandwidth_GBps == 10.0);
  CHECK(hyperx.link(hyperx.find_link(0, 12)).bandwidth_GBps == 20.0);
  CHECK_FALSE(hyperx.has_link(0, 5));
}

TEST_CASE("switch: one switch, 2N links", "[generators]") {
  for (std::uint64_t n : {2, 8, 13}) {
    const Topology sw = generate({{"kind", "switch"}, {"npus", n}});
    check_shape(sw, {n, 1, 2 * n, 1, 1});
    REQUIRE(sw.find_switch("sw") == n);
    CHECK(sw.out_degree(static_cast<NodeId>(n)) == n);
  }
}

TEST_CASE("two_level_switch: a + b switches, 4ab links", "[generators]") {
  using Dims = std::vector<std::uint64_t>;
  for (const Dims& dims : {Dims{8, 4}, Dims{2, 2}, Dims{3, 5}}) {
    const std::uint64_t n = dims[0] * dims[1];
    check_shape(generate({{"kind", "two_level_switch"}, {"dims", dims}}), {n, dims[0] + dims[1], 4 * n, 2, 2});
  }
  const Topology dgx = generate({{"kind", "two_level_switch"}, {"dims", {8, 4}}, {"bandwidth_GBps", {300, 25}}});
  // Group 2 is NPUs 16..23 under "l2"; position 3 of every group is under "g3".
  const NodeId l2 = dgx.find_switch("l2"), g3 = dgx.find_switch("g3");
  REQUIRE(l2 != tenet::kNoNode);
  REQUIRE(g3 != tenet::kNoNode);
  CHECK(dgx.link(dgx.find_link(16, l2)).bandwidth_GBps == 300.0);
  CHECK(dgx.link(dgx.find_link(23, l2)).bandwidth_GBps == 300.0);
  CHECK_FALSE(dgx.has_link(24, l2));
  for (NodeId npu : {3u, 11u, 19u, 27u}) CHECK(dgx.link(dgx.find_link(g3, npu)).bandwidth_GBps == 25.0);
  CHECK(dgx.out_degree(g3) == 4);
  CHECK(dgx.out_degree(l2) == 8);
  CHECK(dgx.description == "two level switch 8x4: 32 NPUs, 12 switches, 128 links; [300, 25] GB/s, 0.5 us");
}

TEST_CASE("ring_fc_switch: ring x fully connected x switch", "[generators]") {
  struct Case {
    std::uint64_t r, f, n;
  };
  for (const Case& c : {Case{2, 4, 8}, Case{3, 2, 2}, Case{4, 3, 1}, Case{1, 3, 5}}) {
    const std::uint64_t npus = c.r * c.f * c.n;
    const std::uint64_t ring_links = c.r >= 3 ? 2 * c.r : (c.r == 2 ? 2 : 0);
    const std::uint64_t ring_degree = c.r >= 3 ? 2 : (c.r == 2 ? 1 : 0);
    const std::uint64_t switches = c.n >= 2 ? c.r * c.f : 0;
    const std::uint64_t links = ring_links * c.f * c.n + c.f * (c.f - 1) * c.r * c.n + (c.n >= 2 ? 2 * npus : 0);
    const std::uint64_t degree = ring_degree + (c.f - 1) + (c.n >= 2 ? 1 : 0);
    check_shape(generate({{"kind", "ring_fc_switch"}, {"dims", {c.r, c.f, c.n}}}),
                {npus, switches, links, degree, degree});
  }
  const Topology rfs = generate({{"kind", "ring_fc_switch"}, {"dims", {2, 4, 8}}, {"bandwidth_GBps", {200, 100, 50}}});
  CHECK(rfs.link(rfs.find_link(0, 1)).bandwidth_GBps == 200.0);  // ring partner
  CHECK(rfs.link(rfs.find_link(0, 6)).bandwidth_GBps == 100.0);  // same x, fc dimension
  const NodeId p5 = rfs.find_switch("p5");
  REQUIRE(p5 != tenet::kNoNode);
  CHECK(rfs.out_degree(p5) == 8);
  CHECK(rfs.link(rfs.find_link(5 + 8 * 7, p5)).bandwidth_GBps == 50.0);
}

TEST_CASE("dragonfly: g a(a-1) local + g(g-1) global links, spread over the group", "[generators]") {
  struct Case {
    std::uint64_t a, g;
  };
  for (const Case& c : {Case{4, 5}, Case{7, 8}, Case{2, 6}, Case{3, 1}, Case{1, 4}}) {
    const std::uint64_t links = c.g * c.a * (c.a - 1) + c.g * (c.g - 1);
    const std::uint64_t min_degree = c.a - 1 + (c.g - 1) / c.a;
    const std::uint64_t max_degree = c.a - 1 + (c.g - 1 + c.a - 1) / c.a;
    const Topology df = generate({{"kind", "dragonfly"}, {"dims", {c.a, c.g}}});
    check_shape(df, {c.a * c.g, 0, links, min_degree, max_degree});
    // Every pair of groups is joined by exactly one cable.
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> global;
    for (const tenet::Link& link : df.links()) {
      const std::uint64_t from = link.src / c.a, to = link.dst / c.a;
      if (from < to) ++global[{from, to}];
    }
    CHECK(global.size() == c.g * (c.g - 1) / 2);
    CHECK(std::all_of(global.begin(), global.end(), [](const auto& entry) { return entry.second == 1; }));
  }
  const Topology df = generate({{"kind", "dragonfly"}, {"dims", {4, 5}}, {"bandwidth_GBps", {400, 200}}});
  CHECK(df.link(df.find_link(0, 1)).bandwidth_GBps == 400.0);
  CHECK(df.link(df.find_link(0, 4)).bandwidth_GBps == 200.0);  // group 0's link 0 goes to group 1's NPU 0
}

TEST_CASE("hammingmesh: boards of a x b NPUs, a switch per global row and column", "[generators]") {
  struct Case {
    std::uint64_t a, b, x, y;
  };
  for (const Case& c : {Case{2, 2, 2, 2}, Case{3, 3, 2, 1}, Case{2, 2, 4, 4}, Case{1, 1, 3, 1}}) {
    const std::uint64_t width = c.a * c.x, height = c.b * c.y;
    const std::uint64_t row_members = c.x * (c.a == 1 ? 1 : 2), column_members = c.y * (c.b == 1 ? 1 : 2);
    std::uint64_t cables = height * c.x * (c.a - 1) + width * c.y * (c.b - 1);
    std::uint64_t switches = 0;
    if (row_members >= 2) {
      switches += height;
      cables += height * row_members;
    }
    if (column_members >= 2) {
      switches += width;
      cables += width * column_members;
    }
    const Topology hm = generate({{"kind", "hammingmesh"}, {"board", {c.a, c.b}}, {"dims", {c.x, c.y}}});
    const std::uint64_t degree = c.a >= 2 && c.b >= 2 ? 4 : 1;
    check_shape(hm, {width * height, switches, 2 * cables, degree, degree});
    CHECK(connected(hm));
  }
  const Topology hm = generate({{"kind", "hammingmesh"}, {"dims", {2, 2}}});  // default 2x2 boards
  CHECK(hm.npu_count() == 16);
  const NodeId row1 = hm.find_switch("row1"), col2 = hm.find_switch("col2");
  REQUIRE(row1 != tenet::kNoNode);
  REQUIRE(col2 != tenet::kNoNode);
  CHECK(hm.out_degree(row1) == 4);  // NPUs 4..7: the west and east edge of both boards in row 1
  for (NodeId npu : {4u, 5u, 6u, 7u}) CHECK(hm.has_link(npu, row1));
  CHECK(hm.name == "hammingmesh-2x2-2x2");
}

TEST_CASE("fat_tree: l leaves of k NPUs, every leaf to every spine", "[generators]") {
  check_shape(generate({{"kind", "fat_tree"}, {"dims", {4, 2}}}), {8, 3, 2 * 8 + 2 * 2, 1, 1});
  check_shape(generate({{"kind", "fat_tree"}, {"dims", {3, 4}}, {"spines", 2}}), {12, 6, 2 * 12 + 2 * 4 * 2, 1, 1});
  const Topology fat =
      generate({{"kind", "fat_tree"}, {"dims", {16, 8}}, {"spines", 4}, {"bandwidth_GBps", {100, 400}}});
  check_shape(fat, {128, 12, 2 * 128 + 2 * 8 * 4, 1, 1});
  const NodeId leaf3 = fat.find_switch("leaf3"), spine0 = fat.find_switch("spine0");
  REQUIRE(leaf3 != tenet::kNoNode);
  REQUIRE(spine0 != tenet::kNoNode);
  CHECK(fat.link(fat.find_link(48, leaf3)).bandwidth_GBps == 100.0);
  CHECK(fat.link(fat.find_link(leaf3, spine0)).bandwidth_GBps == 400.0);
  CHECK(fat.name == "fat-tree-16x8-4spines");
}

TEST_CASE("tree: switches 1 + f0 + f0 f1 + ..., links 2 (nodes - 1)", "[generators]") {
  using Fanout = std::vector<std::uint64_t>;
  for (const Fanout& fanout : {Fanout{2, 2, 2}, Fanout{4}, Fanout{3, 1, 2}}) {
    std::uint64_t switches = 0, level = 1;
    for (std::uint64_t f : fanout) {
      switches += level;
      level *= f;
    }
    const Topology tree = generate({{"kind", "tree"}, {"fanout", fanout}});
    check_shape(tree, {level, switches, 2 * (switches + level - 1), 1, 1});
    CHECK(connected(tree));
  }
  const Topology tree = generate({{"kind", "tree"}, {"fanout", {2, 3, 4}}, {"bandwidth_GBps", {400, 200, 100}}});
  for (const char* name : {"s", "s0", "s1", "s0.2", "s1.0"}) CHECK(tree.find_switch(name) != tenet::kNoNode);
  CHECK(tree.find_switch("s2") == tenet::kNoNode);
  CHECK(tree.link(tree.find_link(tree.find_switch("s"), tree.find_switch("s1"))).bandwidth_GBps == 400.0);
  CHECK(tree.link(tree.find_link(tree.find_switch("s1"), tree.find_switch("s1.2"))).bandwidth_GBps == 200.0);
  // Leaves in path order: s1.2 holds NPUs (1 * 3 + 2) * 4 .. + 3.
  CHECK(tree.link(tree.find_link(tree.find_switch("s1.2"), 20)).bandwidth_GBps == 100.0);
  CHECK(tree.has_link(23, tree.find_switch("s1.2")));
}

std::vector<std::pair<NodeId, NodeId>> link_pairs(const Topology& topology) {
  std::vector<std::pair<NodeId, NodeId>> pairs;
  for (const tenet::Link& link : topology.links()) pairs.emplace_back(link.src, link.dst);
  return pairs;
}

TEST_CASE("random: connected, round(N * degree / 2) cables, seeded", "[generators]") {
  const json spec{{"kind", "random"}, {"npus", 16}, {"degree", 3}, {"seed", 7}};
  const Topology a = generate(spec);
  const auto [low, high] = npu_degree_range(a);
  check_shape(a, {16, 0, 2 * 24, low, high});
  CHECK(low >= 1);
  CHECK(connected(a));
  json other = spec;
  other["seed"] = 8;
  const Topology c = generate(other);
  CHECK(link_pairs(a) == link_pairs(generate(spec)));
  CHECK(link_pairs(a) != link_pairs(c));
  CHECK(connected(c));
  CHECK(a.name == "random-16-seed7");

  // 5 NPUs at degree 4 is the complete graph (the dense path); 2.5 rounds 5 * 2.5 / 2 = 6.25 to 6.
  check_shape(generate({{"kind", "random"}, {"npus", 5}, {"degree", 4}}), {5, 0, 20, 4, 4});
  CHECK(generate({{"kind", "random"}, {"npus", 5}, {"degree", 2.5}}).link_count() == 12);
  // Degree below a tree's still gives a spanning tree; the default degree 3 is capped at npus - 1.
  CHECK(generate({{"kind", "random"}, {"npus", 40}, {"degree", 1}}).link_count() == 2 * 39);
  check_shape(generate({{"kind", "random"}, {"npus", 2}}), {2, 0, 2, 1, 1});
  const Topology big = generate({{"kind", "random"}, {"npus", 300}, {"degree", 6}, {"seed", 3}});
  CHECK(big.link_count() == 2 * 900);
  CHECK(connected(big));
}

TEST_CASE("random: the same seed gives the same topology on every platform", "[generators]") {
  // Pinned draws: a change here changes every seeded random topology users have generated.
  const Topology t = generate({{"kind", "random"}, {"npus", 6}, {"degree", 3}, {"seed", 1}});
  const std::vector<std::pair<NodeId, NodeId>> pairs = link_pairs(t);
  std::vector<std::pair<NodeId, NodeId>> forward;
  for (std::size_t i = 0; i < pairs.size(); i += 2) forward.push_back(pairs[i]);
  CHECK(forward ==
        std::vector<std::pair<NodeId, NodeId>>{{5, 2}, {5, 0}, {5, 4}, {4, 3}, {2, 1}, {1, 3}, {0, 1}, {0, 3}, {0, 2}});
  CHECK(t.description == "random seed 1: 6 NPUs, 18 links; 50 GB/s, 0.5 us");
}

TEST_CASE("random: switches hang off 2..4 NPUs and heterogeneous draws attributes only", "[generators]") {
  const json spec{{"kind", "random"}, {"npus", 10}, {"switches", 3}, {"seed", 5}};
  const Topology t = generate(spec);
  CHECK(t.switch_count() == 3);
  CHECK(connected(t));
  std::uint64_t switch_links = 0;
  for (NodeId s = t.npu_count(); s < t.node_count(); ++s) {
    CHECK(t.out_degree(s) >= 2);
    CHECK(t.out_degree(s) <= 4);
    switch_links += 2 * t.out_degree(s);
  }
  const auto [low, high] = npu_degree_range(t);
  check_shape(t, {10, 3, 2 * 15 + switch_links, low, high});
  CHECK(t.find_switch("sw2") != tenet::kNoNode);

  json mixed = spec;
  mixed["heterogeneous"] = true;
  const Topology h = generate(mixed);
  CHECK(link_pairs(h) == link_pairs(t));
  std::set<double> bandwidths;
  bool in_range = true;
  for (const tenet::Link& link : h.links()) {
    bandwidths.insert(link.bandwidth_GBps);
    in_range = in_range && link.bandwidth_GBps >= 25 && link.bandwidth_GBps <= 200;
    in_range = in_range && link.latency_us >= 0.5 && link.latency_us <= 2;
  }
  CHECK(in_range);
  CHECK(bandwidths.size() > 1);
  CHECK(h.link(0).bandwidth_GBps == h.link(1).bandwidth_GBps);
}

TEST_CASE("generator errors: kind", "[generators]") {
  CHECK(error_of({{"kind", "tors"}, {"dims", {4, 4}}}) ==
        "error: t.json: /generator/kind: unknown generator 'tors' (did you mean 'torus'?); " + kKnownKinds);
  CHECK(error_of({{"kind", "banana"}}) == "error: t.json: /generator/kind: unknown generator 'banana'; " + kKnownKinds);
  CHECK(error_of({{"dims", {4, 4}}}) ==
        "error: t.json: /generator/kind: must name a generator (missing); " + kKnownKinds);
  CHECK(error_of({{"kind", 3}}) == "error: t.json: /generator/kind: must name a generator (got 3); " + kKnownKinds);
  CHECK(error_of(json::array({1, 2})) ==
        "error: t.json: /generator: must be an object such as {\"kind\": \"torus\", \"dims\": [4, 4]} (got [1,2])");
}

TEST_CASE("generator errors: parameters", "[generators]") {
  CHECK(error_of({{"kind", "torus"}, {"dims", {4, 0}}}) ==
        "error: t.json: /generator/dims/1: must be an integer >= 1 (got 0)");
  CHECK(error_of({{"kind", "torus"}, {"dims", {4, "4"}}}) ==
        "error: t.json: /generator/dims/1: must be an integer >= 1 (got \"4\")");
  CHECK(error_of({{"kind", "mesh"}, {"dims", {2.5, 4}}}) ==
        "error: t.json: /generator/dims/0: must be an integer >= 1 (got 2.5)");
  CHECK(error_of({{"kind", "mesh"}, {"dims", 16}}) ==
        "error: t.json: /generator/dims: must be a non-empty array of integers >= 1, e.g. [4, 4] (got 16)");
  CHECK(error_of({{"kind", "mesh"}, {"dims", json::array()}}) ==
        "error: t.json: /generator/dims: must be a non-empty array of integers >= 1, e.g. [4, 4] (got [])");
  CHECK(error_of({{"kind", "torus"}}) ==
        "error: t.json: /generator/dims: missing: torus needs a non-empty array of integers >= 1, e.g. [4, 4]");
  CHECK(error_of({{"kind", "ring"}}) == "error: t.json: /generator/npus: missing: ring needs an integer >= 2");
  CHECK(error_of({{"kind", "ring"}, {"npus", 1}}) == "error: t.json: /generator/npus: must be an integer >= 2 (got 1)");
  CHECK(error_of({{"kind", "ring"}, {"npus", -4}}) ==
        "error: t.json: /generator/npus: must be an integer >= 2 (got -4)");
  CHECK(error_of({{"kind", "ring"}, {"npus", 8}, {"bidirectional", "yes"}}) ==
        "error: t.json: /generator/bidirectional: must be true or false (got \"yes\")");
  CHECK(error_of({{"kind", "two_level_switch"}, {"dims", {8}}}) ==
        "error: t.json: /generator/dims: must have 2 entries, e.g. [8, 4] (got 1)");
  CHECK(error_of({{"kind", "two_level_switch"}, {"dims", {8, 1}}}) ==
        "error: t.json: /generator/dims/1: must be an integer >= 2 (got 1)");
  CHECK(error_of({{"kind", "hypercube_3d"}, {"dims", {4, 4}}}) ==
        "error: t.json: /generator/dims: must have 3 entries, e.g. [4, 4, 4] (got 2)");
  CHECK(error_of({{"kind", "fat_tree"}, {"dims", {4, 2}}, {"spines", 0}}) ==
        "error: t.json: /generator/spines: must be an integer >= 1 (got 0)");
  CHECK(error_of({{"kind", "torus"}, {"dims", std::vector<int>(33, 1)}}) ==
        "error: t.json: /generator/dims: must have at most 32 entries (got 33)");
  // An integral number written as a float is a count like any other.
  CHECK(generate({{"kind", "ring"}, {"npus", 1e3}}).npu_count() == 1000);
}

TEST_CASE("generator errors: unknown parameters are rejected with a suggestion", "[generators]") {
  CHECK(error_of({{"kind", "torus"}, {"dims", {4, 4}}, {"dim", {4, 4}}}) ==
        "error: t.json: /generator/dim: unknown parameter for torus (did you mean 'dims'?); "
        "torus takes kind, dims, bandwidth_GBps, latency_us");
  CHECK(error_of({{"kind", "torus"}, {"dimz", {4, 4}}}) ==
        "error: t.json: /generator/dimz: unknown parameter for torus (did you mean 'dims'?); "
        "torus takes kind, dims, bandwidth_GBps, latency_us\n"
        "error: t.json: /generator/dims: missing: torus needs a non-empty array of integers >= 1, e.g. [4, 4]");
  CHECK(error_of({{"kind", "ring"}, {"npus", 4}, {"a/b", 1}}) ==
        "error: t.json: /generator/a~1b: unknown parameter for ring; ring takes kind, npus, bidirectional, "
        "bandwidth_GBps, latency_us");
  CHECK(error_of({{"kind", "mesh"}, {"dims", {4, 4}}, {"bandwidth_gbps", 10}}) ==
        "error: t.json: /generator/bandwidth_gbps: unknown parameter for mesh (did you mean 'bandwidth_GBps'?); "
        "mesh takes kind, dims, bandwidth_GBps, latency_us");
}

TEST_CASE("generator errors: bandwidth and latency", "[generators]") {
  const json torus{{"kind", "torus"}, {"dims", {4, 4}}};
  auto with = [&](const char* key, const json& value) {
    json spec = torus;
    spec[key] = value;
    return error_of(spec);
  };
  CHECK(with("bandwidth_GBps", 0) ==
        "error: t.json: /generator/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got 0)");
  CHECK(with("bandwidth_GBps", -5) ==
        "error: t.json: /generator/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got -5)");
  CHECK(with("bandwidth_GBps", std::nan("")) ==
        "error: t.json: /generator/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got NaN)");
  CHECK(with("bandwidth_GBps", "fast") ==
        "error: t.json: /generator/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s, or an array of them with "
        "one per "
        "dimension (got \"fast\")");
  CHECK(with("bandwidth_GBps", {100}) ==
        "error: t.json: /generator/bandwidth_GBps: must have 2 entries, one per dimension (got 1)");
  CHECK(with("bandwidth_GBps", {100, -1}) ==
        "error: t.json: /generator/bandwidth_GBps/1: must be a bandwidth from 1e-6 to 1e6 GB/s (got -1)");
  CHECK(with("latency_us", -1) ==
        "error: t.json: /generator/latency_us: must be a latency from 0 to 1e6 microseconds (got -1)");
  CHECK(with("latency_us", {0.5, 1, 2}) ==
        "error: t.json: /generator/latency_us: must have 2 entries, one per dimension (got 3)");
  CHECK(error_of({{"kind", "tree"}, {"fanout", {2, 2}}, {"latency_us", {1}}}) ==
        "error: t.json: /generator/latency_us: must have 2 entries, one per level (got 1)");
  CHECK(error_of({{"kind", "ring"}, {"npus", 4}, {"bandwidth_GBps", {1, 2}}}) ==
        "error: t.json: /generator/bandwidth_GBps: must have 1 entry, one per dimension (got 2)");
  CHECK(generate({{"kind", "ring"}, {"npus", 4}, {"bandwidth_GBps", {12}}}).link(0).bandwidth_GBps == 12.0);
}

TEST_CASE("generator errors: every problem is reported at once", "[generators]") {
  CHECK(error_of(
            {{"kind", "mesh"}, {"dims", {0, 4}}, {"bandwidth_GBps", {1, 2, -3}}, {"latency_us", -1}, {"colour", 1}}) ==
        "error: t.json: /generator/colour: unknown parameter for mesh; mesh takes kind, dims, bandwidth_GBps, "
        "latency_us\n"
        "error: t.json: /generator/dims/0: must be an integer >= 1 (got 0)\n"
        "error: t.json: /generator/bandwidth_GBps/2: must be a bandwidth from 1e-6 to 1e6 GB/s (got -3)\n"
        "error: t.json: /generator/latency_us: must be a latency from 0 to 1e6 microseconds (got -1)");
  CHECK(error_of({{"kind", "random"},
                  {"npus", 8},
                  {"degree", 20},
                  {"seed", -1},
                  {"heterogeneous", true},
                  {"bandwidth_GBps", 10}}) ==
        "error: t.json: /generator/seed: must be an integer >= 0 (got -1)\n"
        "error: t.json: /generator/bandwidth_GBps: not allowed with heterogeneous: true (links get random 25..200 "
        "GB/s, 0.5..2 us)\n"
        "error: t.json: /generator/degree: must be at most npus - 1 = 7 (got 20)");
  CHECK(error_of({{"kind", "random"}, {"npus", 8}, {"degree", 0.5}}) ==
        "error: t.json: /generator/degree: must be a number >= 1 (got 0.5)");
}

TEST_CASE("generator errors: sizes are refused before anything is allocated", "[generators]") {
  CHECK(error_of({{"kind", "fully_connected"}, {"npus", 100000}}) ==
        "error: t.json: /generator/npus: too large: 9,999,900,000 directed links (at most 67,108,864)");
  CHECK(error_of({{"kind", "torus"}, {"dims", {1000000000}}}) ==
        "error: t.json: /generator/dims: too large: 1,000,000,000 NPUs (at most 1,048,576)\n"
        "error: t.json: /generator/dims: too large: 2,000,000,000 directed links (at most 67,108,864)");
  CHECK(error_of({{"kind", "torus"}, {"dims", {100000, 100000, 100000, 100000}}}) ==
        "error: t.json: /generator/dims: too large: more than 10^18 NPUs (at most 1,048,576)\n"
        "error: t.json: /generator/dims: too large: more than 10^18 directed links (at most 67,108,864)");
  CHECK(error_of({{"kind", "hypercube"}, {"dimension", 1000}}) ==
        "error: t.json: /generator/dimension: too large: more than 10^18 NPUs (at most 1,048,576)\n"
        "error: t.json: /generator/dimension: too large: more than 10^18 directed links (at most 67,108,864)");
  CHECK(error_of({{"kind", "ring"}, {"npus", 1e300}}) ==
        "error: t.json: /generator/npus: too large: more than 10^18 NPUs (at most 1,048,576)\n"
        "error: t.json: /generator/npus: too large: more than 10^18 directed links (at most 67,108,864)");
  CHECK(error_of({{"kind", "tree"}, {"fanout", {1024, 1024, 2}}}) ==
        "error: t.json: /generator/fanout: too large: 2,097,152 NPUs (at most 1,048,576)\n"
        "error: t.json: /generator/fanout: too large: 1,049,601 switches (at most 1,048,576)");
  CHECK(error_of({{"kind", "random"}, {"npus", 16}, {"switches", 2000000}}) ==
        "error: t.json: /generator/switches: too large: 2,000,000 switches (at most 1,048,576)");
  CHECK(error_of({{"kind", "ring_fc_switch"}, {"dims", {std::numeric_limits<std::uint64_t>::max(), 1, 1}}}) ==
        "error: t.json: /generator/dims: too large: more than 10^18 NPUs (at most 1,048,576)\n"
        "error: t.json: /generator/dims: too large: more than 10^18 directed links (at most 67,108,864)");
  CHECK(error_of({{"kind", "dragonfly"}, {"dims", {1, 10000}}}) ==
        "error: t.json: /generator/dims: too large: 99,990,000 directed links (at most 67,108,864)");
  CHECK(error_of({{"kind", "torus"}, {"dims", {1}}}) ==
        "error: t.json: /generator/dims: too small: 1 NPU (at least 2)");
  CHECK(error_of({{"kind", "tree"}, {"fanout", {1, 1}}}) ==
        "error: t.json: /generator/fanout: too small: 1 NPU (at least 2)");
  // At the limit itself the generator builds.
  CHECK(generate({{"kind", "hypercube"}, {"dimension", 10}}).npu_count() == 1024);
}
