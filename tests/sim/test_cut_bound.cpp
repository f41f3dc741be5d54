// SPDX-License-Identifier: MIT
// The cut bound against answers worked out by hand, against a brute force over every node set of
// small random networks, and against every schedule tenet makes on the small shipped topologies.

#include "../support/catch.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "../support/collectives.hpp"
#include "../support/sanitizers.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/common/random.hpp"
#include "tenet/common/units.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/cut_bound.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/topology_json.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

/// Shipped topologies up to this many NPUs are checked against every schedule (under the
/// sanitizers, those swept() names).
constexpr std::uint32_t kLargestChecked = 64;

/// The cut term's algorithm bandwidth, size / bandwidth term, GB/s: independent of the size.
double cut_algbw_GBps(const CutBound& cut) { return cut.cut_bandwidth_GBps / cut.crossing_share; }

CutBound cut_of(const Topology& topology, CollectiveKind kind, std::vector<NodeId> members = {}) {
  return collective_cut_bound(topology, make_collective(kind, 1 << 20, 1, std::move(members)));
}

/// A connected random network of `npus` NPUs and `switches` switches: a bidirectional ring through
/// every node in a random order (so every node reaches every other), plus random one-way and
/// duplex links; bandwidths between 1 and 100 GB/s, latencies between 0.1 and 2 us.
Topology random_network(std::uint32_t npus, std::uint32_t switches, std::uint32_t extra_links, Rng& rng) {
  std::vector<std::string> names;
  for (std::uint32_t s = 0; s < switches; ++s) names.push_back("sw" + std::to_string(s));
  Topology topology(npus, names);
  auto bandwidth = [&] { return 1.0 + 99.0 * rng.unit(); };
  auto latency = [&] { return 0.1 + 1.9 * rng.unit(); };
  std::vector<NodeId> order(topology.node_count());
  for (NodeId node = 0; node < order.size(); ++node) order[node] = node;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const NodeId a = order[i];
    const NodeId b = order[(i + 1) % order.size()];
    if (!topology.has_link(a, b) && !topology.has_link(b, a)) topology.add_duplex(a, b, latency(), bandwidth());
  }
  for (std::uint32_t k = 0; k < extra_links; ++k) {
    const NodeId a = static_cast<NodeId>(rng.below(topology.node_count()));
    const NodeId b = static_cast<NodeId>(rng.below(topology.node_count()));
    if (a == b || topology.has_link(a, b)) continue;
    if (rng.below(2) == 0 && !topology.has_link(b, a)) {
      topology.add_duplex(a, b, latency(), bandwidth());
    } else {
      topology.add_link({a, b, latency(), bandwidth()});
    }
  }
  return topology;
}

/// The brute force: every node set S, as a bit mask over the nodes.
struct BruteForce {
  double gather_rate = std::numeric_limits<double>::infinity();   ///< min B_in(S) / |M \ S|
  double scatter_rate = std::numeric_limits<double>::infinity();  ///< min B_out(S) / |M \ S|
  double separating = std::numeric_limits<double>::infinity();    ///< min over separating S of B_in, B_out
};

BruteForce brute_force(const Topology& topology, const std::vector<NodeId>& members) {
  BruteForce best;
  const std::uint32_t nodes = topology.node_count();
  for (std::uint32_t set = 1; set + 1 < (1u << nodes); ++set) {
    auto inside = [&](NodeId node) { return (set >> node & 1u) != 0; };
    std::uint32_t members_inside = 0;
    for (NodeId member : members) members_inside += inside(member) ? 1 : 0;
    const std::uint32_t members_outside = static_cast<std::uint32_t>(members.size()) - members_inside;
    if (members_inside == 0 || members_outside == 0) continue;
    double in = 0.0;
    double out = 0.0;
    for (const Link& link : topology.links()) {
      if (!inside(link.src) && inside(link.dst)) in += link.bandwidth_GBps;
      if (inside(link.src) && !inside(link.dst)) out += link.bandwidth_GBps;
    }
    best.gather_rate = std::min(best.gather_rate, in / members_outside);
    best.scatter_rate = std::min(best.scatter_rate, out / members_outside);
    best.separating = std::min({best.separating, in, out});
  }
  return best;
}

bool same_cut(const CutBound& a, const CutBound& b) {
  return a.cut_bandwidth_GBps == b.cut_bandwidth_GBps && a.crossing_share == b.crossing_share &&
         a.members_outside == b.members_outside && a.exact == b.exact && a.sinks == b.sinks &&
         a.max_flows == b.max_flows;
}

}  // namespace

TEST_CASE("2 x 8 A100: the binding cut is each GPU's own in-cut, 15/16 of the data over 325 GB/s", "[bounds][cut]") {
  const Topology topology = shipped("a100-2x8-ib");
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    INFO(collective_name(kind));
    const CutBound cut = cut_of(topology, kind);
    CHECK(cut.exact);
    CHECK(cut.cut_bandwidth_GBps == exactly(325.0));
    CHECK(cut.members_outside == 15);
    CHECK(cut_algbw_GBps(cut) == Approx(346.67).epsilon(1e-4));
    // The pure bandwidth term of the whole lower bound, at a size: size / it is the same 346.67 GB/s.
    const std::uint64_t size = std::uint64_t{1} << 30;
    const LowerBound bound = lower_bound(topology, make_collective(kind, size), compute_diameter(topology));
    CHECK(algbw_GBps(static_cast<double>(size), bound.cut_bandwidth_us) == Approx(346.67).epsilon(1e-4));
    CHECK(bound.cut_us == exactly(bound.cut_bandwidth_us + 0.7));  // the smallest link latency
  }
  // All-reduce: the smallest cut between members is a server's eight NICs, 200 GB/s.
  CHECK(cut_of(topology, CollectiveKind::kAllReduce).cut_bandwidth_GBps == exactly(200.0));
}

TEST_CASE("two DGX-1 joined by one 12.5 GB/s link: half the data crosses it", "[bounds][cut]") {
  const Topology topology = shipped("dgx1-2x8-bridge");
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const CutBound cut = cut_of(topology, kind);
    CHECK(cut.exact);
    CHECK(cut.cut_bandwidth_GBps == exactly(12.5));
    CHECK(cut.members_outside == 8);
    CHECK(cut_algbw_GBps(cut) == exactly(25.0));
  }
  // All-reduce: the whole vector must cross the bridge each way.
  const CutBound cut = cut_of(topology, CollectiveKind::kAllReduce);
  CHECK(cut_algbw_GBps(cut) == exactly(12.5));
  const std::uint64_t size = 64 << 20;
  const LowerBound bound =
      lower_bound(topology, make_collective(CollectiveKind::kAllReduce, size), compute_diameter(topology));
  CHECK(bound.binding == BoundTerm::kCut);
  CHECK(bound.total_us == exactly(0.7 + static_cast<double>(size) / 12.5e3));
}

TEST_CASE("an NPU's own links bound by hand: in for all-gather, out for reduce-scatter, both for all-reduce",
          "[bounds]") {
  // A line 0 - 1 - 2; NPU 0 sends at 25 GB/s and receives at 100, every other link 100 GB/s.
  const Topology line = parse_topology(R"({"npus": 3, "defaults": {"latency_us": 0.5, "bandwidth_GBps": 100},
      "links": [{"src": 0, "dst": 1, "bidirectional": false, "bandwidth_GBps": 25},
                {"src": 1, "dst": 0, "bidirectional": false}, {"src": 1, "dst": 2}]})",
                                       "line.json");
  const Diameter diameter = compute_diameter(line);
  const auto bound = [&](CollectiveKind kind) {
    return lower_bound(line, make_collective(kind, 3'000'000), diameter).ingress_us;
  };
  // 2/3 of 3 MB into NPU 0 (or 2) at 100 GB/s.
  CHECK(bound(CollectiveKind::kAllGather) == exactly(0.5 + 2e6 / 100e3));
  // 2/3 of 3 MB out of NPU 0 at 25 GB/s: what NPU 0 takes in can be one pre-reduced block.
  CHECK(bound(CollectiveKind::kReduceScatter) == exactly(0.5 + 2e6 / 25e3));
  // All 3 MB out of NPU 0; the 2 x 2 x 3 MB into all NPUs together (325 GB/s) is less.
  CHECK(bound(CollectiveKind::kAllReduce) == exactly(0.5 + 3e6 / 25e3));
  CHECK(chunked_lower_bound_us(line, make_collective(CollectiveKind::kReduceScatter, 3'000'000)) ==
        exactly(2 * (0.5 + 1e6 / 25e3)));
}

TEST_CASE("all-reduce: 2(m-1) n bytes into all NPUs together, where no single NPU binds", "[bounds]") {
  // Torus 4x4 at 50 GB/s per link, 4 links per NPU: every NPU's own n in or out takes n / 200 GB/s,
  // the whole network's in-links 2 x 15 n over 16 x 200 GB/s: 15/8 of that.
  const Topology torus = shipped("torus-4x4");
  const LowerBound bound =
      lower_bound(torus, make_collective(CollectiveKind::kAllReduce, 16'000'000), compute_diameter(torus));
  CHECK(bound.ingress_us == exactly(0.5 + 2.0 * 15 * 16e6 / (16 * 200e3)));
}

TEST_CASE("cut bounds worked out by hand", "[bounds][cut]") {
  SECTION("one-way ring of 4: every arc has one 50 GB/s link in; the single NPU lacks the most") {
    const Topology ring = parse_topology(R"({"npus": 4, "defaults": {"latency_us": 0.5, "bandwidth_GBps": 50},
        "links": [{"src": 0, "dst": 1, "bidirectional": false}, {"src": 1, "dst": 2, "bidirectional": false},
                  {"src": 2, "dst": 3, "bidirectional": false}, {"src": 3, "dst": 0, "bidirectional": false}]})",
                                         "ring.json");
    const CutBound gather = cut_of(ring, CollectiveKind::kAllGather);
    CHECK(gather.members_outside == 3);
    CHECK(cut_algbw_GBps(gather) == exactly(4 * 50.0 / 3));  // 3 blocks of n/4 over 50 GB/s
    CHECK(cut_algbw_GBps(cut_of(ring, CollectiveKind::kAllReduce)) == exactly(50.0));
  }
  SECTION("star of 4 NPUs on one switch: an NPU's port") {
    const Topology star = shipped("switch-8");
    const CutBound gather = cut_of(star, CollectiveKind::kAllGather, {0, 1, 2, 3});
    CHECK(cut_algbw_GBps(gather) == exactly(4 * 50.0 / 3));
    CHECK(cut_algbw_GBps(cut_of(star, CollectiveKind::kAllReduce, {0, 1, 2, 3})) == exactly(50.0));
  }
  SECTION("members in two pairs behind a thin bridge of non-members: the pair and its bridge end") {
    // 0 and 1 hang off NPU 4, 2 and 3 off NPU 5; 4 - 5 is the 10 GB/s bridge; 0-1 and 2-3 are
    // linked too. S = {2, 3, 5} lacks two blocks and takes in 10 GB/s: rate 5 GB/s per block,
    // algbw 4 x 5 = 20 GB/s, while each member's own in-cut gives 4 x 200 / 3.
    const Topology bridged = parse_topology(R"({"npus": 6, "defaults": {"latency_us": 0.5, "bandwidth_GBps": 100},
        "links": [{"src": 0, "dst": 4}, {"src": 1, "dst": 4}, {"src": 0, "dst": 1},
                  {"src": 2, "dst": 5}, {"src": 3, "dst": 5}, {"src": 2, "dst": 3},
                  {"src": 4, "dst": 5, "bandwidth_GBps": 10}]})",
                                            "bridged.json");
    const std::vector<NodeId> members = {0, 1, 2, 3};
    const CutBound gather = cut_of(bridged, CollectiveKind::kAllGather, members);
    CHECK(gather.members_outside == 2);
    CHECK(cut_algbw_GBps(gather) == exactly(20.0));
    CHECK(cut_algbw_GBps(cut_of(bridged, CollectiveKind::kReduceScatter, members)) == exactly(20.0));
    CHECK(cut_algbw_GBps(cut_of(bridged, CollectiveKind::kAllReduce, members)) == exactly(10.0));
    // Members 0 and 1 only: the bridge is irrelevant, their own links bind.
    CHECK(cut_algbw_GBps(cut_of(bridged, CollectiveKind::kAllGather, {0, 1})) == exactly(2 * 200.0));
  }
  SECTION("fewer than two members: no cut") {
    const CutBound cut = cut_of(shipped("torus-4x4"), CollectiveKind::kAllGather, {3});
    CHECK(cut.cut_bandwidth_GBps == 0.0);
    CHECK(cut.time_us(1 << 20) == 0.0);
  }
}

TEST_CASE("the max-flow search equals a brute force over every node set", "[bounds][cut]") {
  Rng rng(20240611);
  for (int trial = 0; trial < 400; ++trial) {
    const std::uint32_t npus = 2 + static_cast<std::uint32_t>(rng.below(7));
    const std::uint32_t switches = static_cast<std::uint32_t>(rng.below(11 - npus));
    const Topology topology = random_network(npus, switches, static_cast<std::uint32_t>(rng.below(12)), rng);
    std::vector<NodeId> members;
    for (NodeId npu = 0; npu < npus; ++npu) {
      if (trial % 2 == 0 || rng.below(3) != 0) members.push_back(npu);
    }
    if (members.size() < 2) members = {0, npus - 1};
    INFO("trial " << trial << ": " << npus << " NPUs, " << switches << " switches, " << members.size() << " members");
    const BruteForce best = brute_force(topology, members);
    const CutBound gather = cut_of(topology, CollectiveKind::kAllGather, members);
    const CutBound scatter = cut_of(topology, CollectiveKind::kReduceScatter, members);
    const CutBound reduce = cut_of(topology, CollectiveKind::kAllReduce, members);
    CHECK(gather.exact);
    CHECK(gather.cut_bandwidth_GBps / gather.members_outside == exactly(best.gather_rate));
    CHECK(scatter.cut_bandwidth_GBps / scatter.members_outside == exactly(best.scatter_rate));
    CHECK(reduce.cut_bandwidth_GBps == exactly(best.separating));
  }
}

TEST_CASE("past its budget the cut bound checks a subset of the members, says so, and stays below", "[bounds][cut]") {
  const Topology topology = shipped("ring-fc-switch-2x4x8");
  for (CollectiveKind kind : kAllKinds) {
    INFO(collective_name(kind));
    const CutBound exact = cut_of(topology, kind);
    CutBoundOptions small;
    small.work_budget = 20000;
    const CutBound partial = cut_bound(topology, kind, make_collective(kind, 1 << 20).participants(topology), small);
    CHECK(exact.exact);
    CHECK_FALSE(partial.exact);
    CHECK(partial.sinks < partial.members);
    CHECK(cut_coverage_note(partial) ==
          "cut bound over " + std::to_string(partial.sinks) + " of " + std::to_string(partial.members) + " members");
    CHECK(partial.bandwidth_time_us(1 << 30) <= exact.bandwidth_time_us(1 << 30));
  }
}

TEST_CASE("the cut bound is the same for 1 and 2 threads", "[bounds][cut]") {
  const Topology topology = shipped("ring-fc-switch-2x4x16");
  for (CollectiveKind kind : kAllKinds) {
    CutBound serial;
    {
      ThreadLimit one(1);
      serial = cut_of(topology, kind);
    }
    ThreadLimit two(2);
    CHECK(same_cut(serial, cut_of(topology, kind)));
    CHECK(same_cut(serial, cut_of(topology, kind)));
  }
}

TEST_CASE("no schedule beats the lower bound on the small shipped topologies", "[bounds][cut]") {
  const std::uint64_t size = 64 << 20;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TENET_SOURCE_DIR) + "/topologies")) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path& file : files) {
    const Topology topology = load_topology(file.string());
    const std::string name = file.stem().string();
    if (topology.npu_count() > kLargestChecked || !swept(topology.npu_count(), name)) continue;
    const Diameter diameter = compute_diameter(topology);
    for (CollectiveKind kind : kAllKinds) {
      const Collective collective = make_collective(kind, size);
      const LowerBound bound = lower_bound(topology, collective, diameter);
      for (const std::string& algorithm : baseline_names()) {
        const BaselineResult baseline = generate_baseline(algorithm, topology, collective);
        if (!baseline.applicable) continue;
        INFO(name << " " << algorithm << " " << collective_name(kind) << ", bound binds " << bound.binding_name());
        CHECK(simulate(topology, baseline.schedule).time_us >= bound.total_us * (1 - 1e-9));
      }
      SynthOptions options;
      options.unwind_degree = topology.switch_count() > 0 ? 2 : 0;
      SynthResult synthesized = synthesize(topology, collective, options);
      // Unwound links are not the network's: on it, the transfers are routed through the switches.
      if (synthesized.unwind_degree != 0) synthesized.schedule.forget_links();
      INFO(name << " synth " << collective_name(kind) << ", bound binds " << bound.binding_name());
      CHECK(simulate(topology, synthesized.schedule).time_us >= bound.total_us * (1 - 1e-9));
    }
  }
}
