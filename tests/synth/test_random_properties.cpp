// SPDX-License-Identifier: MIT
// Property tests over 200 seeded random networks of five families (uniform and mixed-speed
// point-to-point, switched, with failures, with members): the promises tenet makes about any
// synthesized schedule, checked where no hand-computed answer exists. A failure names the family,
// the seed and the topology file, which is all it takes to reproduce it with the CLI.

#include "../support/catch.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/collectives.hpp"
#include "../support/random_networks.hpp"
#include "../support/sanitizers.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;
using Catch::Contains;

namespace {

/// Networks per family; under the sanitizers (5-8x slower) a quarter of them, which keeps every
/// family and the sanitized runs within CI's time (the Release run takes all).
constexpr std::uint32_t kPerFamily = kSanitized ? 10 : 40;

struct RandomCase {
  std::string family;
  std::uint32_t seed = 0;
  std::string text;             ///< the topology file
  std::vector<NodeId> members;  ///< empty: every NPU
};

/// Family f draws seeds from 1000 f + 1 on: no two cases share a network, and none repeats
/// test_switch_native_random.cpp's seeds 1 to 24.
std::vector<RandomCase> random_cases() {
  std::vector<RandomCase> cases;
  for (std::uint32_t i = 1; i <= kPerFamily; ++i) {
    cases.push_back({"uniform", 1000 + i, random_point_to_point_network(1000 + i, false), {}});
    cases.push_back({"mixed", 2000 + i, random_point_to_point_network(2000 + i, true), {}});
    cases.push_back({"switched", 3000 + i, random_switched_network(3000 + i), {}});
    // Failures on point-to-point networks and, every other seed, NPUs failing off switches.
    const std::uint32_t failed = 4000 + i;
    cases.push_back(
        {"failed", failed, failed % 2 == 0 ? random_failed_network(failed) : random_switched_network(failed, 2), {}});
    const std::uint32_t members = 5000 + i;
    RandomCase with_members{
        "members",
        members,
        members % 2 == 0 ? random_point_to_point_network(members, true) : random_switched_network(members),
        {}};
    with_members.members = random_members(members, parse_topology(with_members.text, "random.json").npu_count());
    cases.push_back(with_members);
  }
  return cases;
}

/// 4 KiB (latency-bound) to 16 MiB (bandwidth-bound); rarely a multiple of members x chunks.
std::uint64_t size_for(std::uint32_t seed) {
  const std::uint64_t sizes[] = {4 << 10, 256 << 10, 16 << 20};
  return sizes[seed % 3];
}

/// The synthesizer's options: its defaults, with log blocks of 4096 transfers. The default
/// blocks (4 Mi transfers) cost nothing until written in a release build, but the sanitizers map
/// them for every candidate, which took most of the time; schedules do not depend on the size.
SynthOptions synth_options() {
  SynthOptions options;
  options.log_block_bits = 12;
  return options;
}

/// Every NPU a transfer touches is a member: only then can MSCCL express the schedule.
bool only_members(const Schedule& schedule) {
  std::vector<bool> member(schedule.members().back() + 1, false);
  for (NodeId npu : schedule.members()) member[npu] = true;
  for (const Transfer& transfer : schedule.transfers()) {
    for (NodeId npu : {transfer.src, transfer.dst})
      if (npu >= member.size() || !member[npu]) return false;
  }
  return true;
}

void check_properties(const RandomCase& random, const Topology& topology, const Collective& collective) {
  const SynthResult result = synthesize(topology, collective, synth_options());
  const Schedule& schedule = result.schedule;
  const std::vector<NodeId> participants = collective.participants(topology);
  CHECK(schedule.members() == participants);
  CHECK(schedule.chunks_per_member() == collective.chunks_per_npu);
  const VerifyResult verdict = verify_schedule(topology, schedule);
  INFO(verdict.error);
  REQUIRE(verdict.ok);

  // The reported time is the replay on the network, and the schedule carries that replay's times.
  SimOptions record;
  record.record_times = true;
  const SimResult replay = simulate(topology, schedule, record);
  CHECK(schedule.planned_time_us() == Approx(result.time_us).epsilon(1e-9));
  if (topology.switch_count() == 0 && !result.routed) {
    // A transfer holds its one link alone and starts once its data and its link are free, which
    // the plan never promised sooner: the schedule carries its replay's times, or the plan's
    // where they differ only by the plan's rounding up to ticks (1e-6 relative).
    CHECK(result.time_us <= result.plan_us * (1 + 1e-9));
    std::uint32_t late = 0;
    for (TransferId id = 0; id < schedule.size(); ++id)
      if (replay.end_us[id] > schedule.end_us(id) * (1 + 1e-9) + 1e-9) ++late;
    CHECK(late == 0);
    CHECK(replay.time_us == Approx(result.time_us).epsilon(1e-6));
  } else {
    // Through switches, or routed through NPUs: the plan was scored by this replay.
    CHECK(replay.time_us == Approx(result.time_us).epsilon(1e-9));
  }
  // What the schedule orders, the runtime can: no transfer waits for another NPU's unrelated work.
  CHECK(unenforceable_dependency(schedule) == "");

  const LowerBound bound = lower_bound(topology, collective, compute_diameter(topology, collective.members));
  INFO("lower bound " << bound.total_us << " us (" << bound.binding_name() << ")");
  CHECK(replay.time_us >= bound.total_us * (1 - 1e-9));
  // Point to point, a schedule of one chunk per transfer hop by hop lives in the model
  // chunked_lower_bound_us bounds.
  if (topology.switch_count() == 0 && !result.aggregated() && !result.routed)
    CHECK(replay.time_us >= chunked_lower_bound_us(topology, collective) * (1 - 1e-9));

  // The schedule file reads back as the same schedule.
  const std::string text = schedule_to_text(schedule, topology);
  const Schedule parsed = parse_schedule(text, "random.schedule.json", topology);
  const VerifyResult reread = verify_schedule(topology, parsed);
  INFO(reread.error);
  CHECK(reread.ok);
  CHECK(schedule_to_text(parsed, topology) == text);

  // MSCCL XML, when the schedule stays among the members; otherwise refused with the reason.
  MscclWriteOptions options;
  options.channels = 1 + random.seed % 2;
  if (only_members(schedule)) {
    const MscclWritten written = write_msccl_xml(schedule, topology, options);
    const MscclVerifyResult xml = verify_msccl_xml(written.text, &topology, true, collective.members);
    INFO(xml.error);
    CHECK(xml.ok);
    CHECK(written.time_us >= bound.total_us * (1 - 1e-9));
  } else {
    CHECK_THROWS_WITH(write_msccl_xml(schedule, topology, options), Contains("which is not a member"));
  }
}

}  // namespace

TEST_CASE("the random families are what they claim to be", "[property]") {
  std::uint32_t mixed_speeds = 0;
  std::uint32_t one_way = 0;
  for (const RandomCase& random : random_cases()) {
    INFO(random.family << " seed " << random.seed << ": " << random.text);
    const Topology topology = parse_topology(random.text, "random.json");
    CHECK(topology.npu_count() >= 2);  // failures leave 2 NPUs of 4 on switches
    CHECK(topology.npu_count() <= 12);
    std::set<std::pair<double, double>> speeds;
    for (const Link& link : topology.links()) {
      speeds.insert({link.bandwidth_GBps, link.latency_us});
      if (!topology.has_link(link.dst, link.src)) ++one_way;
    }
    if (random.family == "uniform") CHECK(speeds.size() == 1);
    if (random.family == "mixed" && speeds.size() > 1) ++mixed_speeds;
    if (random.family == "switched") CHECK(topology.switch_count() > 0);
    if (random.family == "uniform" || random.family == "mixed") CHECK(topology.switch_count() == 0);
    if (random.family == "failed") {
      // The same file without its failed section has more NPUs or more links.
      nlohmann::json whole = parse_json_text(random.text, "random.json");
      whole.erase("failed");
      const Topology intact = parse_topology(whole.dump(), "random.json");
      CHECK((intact.npu_count() > topology.npu_count() || intact.link_count() > topology.link_count()));
    }
    if (random.family == "members") {
      CHECK(random.members.size() >= 2);
      CHECK(random.members.size() < topology.npu_count());
      CHECK(std::is_sorted(random.members.begin(), random.members.end()));
    } else {
      CHECK(random.members.empty());
    }
  }
  // Nearly every mixed network mixes speeds, and some networks have one-way links.
  CHECK(mixed_speeds >= kPerFamily * 9 / 10);
  CHECK(one_way > 0);
}

TEST_CASE("random networks: synthesized schedules verify, replay as timed, beat no bound and round-trip",
          "[synth][property]") {
  const std::vector<RandomCase> cases = random_cases();
  REQUIRE(cases.size() == 5 * kPerFamily);
  for (const RandomCase& random : cases) {
    INFO(random.family << " seed " << random.seed << ": " << random.text);
    const Topology topology = parse_topology(random.text, "random.json");
    for (CollectiveKind kind : kAllKinds) {
      const std::uint32_t chunks = 1 + (random.seed + static_cast<std::uint32_t>(kind)) % 3;
      const Collective collective = make_collective(kind, size_for(random.seed), chunks, random.members);
      INFO(collective_name(kind) << ", " << collective.size_bytes << " bytes, " << chunks << " chunks per NPU");
      check_properties(random, topology, collective);
    }
  }
}

TEST_CASE("random networks: 1 and 2 threads synthesize byte-identical schedules", "[synth][property][threads]") {
  const std::vector<RandomCase> cases = random_cases();
  // One thread limit per sweep: under the sanitizers, starting TBB's workers anew for every
  // schedule took longer than synthesizing it.
  auto render_all = [&](std::size_t threads) {
    ThreadLimit limit(threads);
    std::vector<std::string> texts;
    for (const RandomCase& random : cases) {
      const Topology topology = parse_topology(random.text, "random.json");
      for (CollectiveKind kind : kAllKinds) {
        const Collective collective = make_collective(kind, size_for(random.seed), 2, random.members);
        const Schedule schedule = synthesize(topology, collective, synth_options()).schedule;
        texts.push_back(schedule_to_text(schedule, topology));
        // The MSCCL writer times its layouts and verifies the file's call splits in parallel.
        try {
          texts.push_back(write_msccl_xml(schedule, topology, {}).text);
        } catch (const InputError& error) {
          std::string text = "no file: ";
          text += error.what();
          texts.push_back(std::move(text));
        }
      }
    }
    return texts;
  };
  const std::vector<std::string> one = render_all(1);
  const std::vector<std::string> two = render_all(2);
  REQUIRE(one.size() == 2 * 3 * cases.size());
  REQUIRE(two.size() == one.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    const RandomCase& random = cases[i / 6];
    INFO(random.family << " seed " << random.seed << ", " << collective_name(kAllKinds[i / 2 % 3])
                       << (i % 2 == 0 ? " schedule" : " MSCCL XML") << ": " << random.text);
    CHECK(one[i] == two[i]);
  }
}

TEST_CASE("random failures that cut the network off are refused, naming who cannot reach whom",
          "[topology_json][property]") {
  // Failures that disconnect the network must be refused, not synthesized around: failing every
  // cable of a tree leaf (chords included) cuts it off for sure.
  for (std::uint32_t seed = 6001; seed <= 6000 + kPerFamily; ++seed) {
    std::mt19937 random(seed);
    const RandomGraph graph = random_graph(random, true, 5);
    const std::uint32_t leaf = graph.tree_leaves().back();
    std::string cables;
    for (const RandomGraph::Edge& edge : graph.edges) {
      if (edge.a == leaf || edge.b == leaf) append_item(cables, json_pair(edge.a, edge.b));
    }
    INFO("seed " << seed);
    std::string message;
    try {
      parse_topology(network_text("cut", graph, "{\"links\":[" + cables + "]}"), "cut.json");
    } catch (const InputError& error) {
      message = error.what();
    }
    INFO(message);
    // The rest stays connected, so the pair named is the leaf and another NPU, either way round.
    const std::string prefix = "error: cut.json: /failed: after the failures NPU ";
    const std::string tail = " cannot reach NPU " + std::to_string(leaf);
    const bool from_leaf = message.rfind(prefix + std::to_string(leaf) + " cannot reach NPU ", 0) == 0;
    const bool to_leaf = message.rfind(prefix, 0) == 0 && message.size() >= tail.size() &&
                         message.compare(message.size() - tail.size(), tail.size(), tail) == 0;
    CHECK((from_leaf || to_leaf));
  }
}
