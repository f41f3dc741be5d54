// SPDX-License-Identifier: MIT
// The MSCCL writer and checker: the SPEC's example byte for byte, every shipped small topology's
// synthesized collectives written and executed, hand-broken files rejected with their messages, and
// limits reported with a change that works.

#include "../support/catch.hpp"

#include <limits>
#include <string>
#include <vector>

#include "../support/collectives.hpp"
#include "../support/sanitizers.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

/// SPEC section 10, verbatim: msccl-tools' allgather_ring(size=3, channels=1, instances=1, 'Simple').
const char* const kSpecRing =
    R"(<algo name="allgather_ring_1channelsperring" proto="Simple" nchannels="1" nchunksperloop="3" ngpus="3" coll="allgather" inplace="1">
  <gpu id="0" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="1" recv="2" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rcs" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="2" recv="0" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rcs" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="r" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="0" recv="1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rcs" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

/// n NPUs on a one-way ring i -> i+1, 0.5 us and 1 GB/s per link.
Topology one_way_ring(std::uint32_t n) {
  Topology topology(n, {});
  for (NodeId i = 0; i < n; ++i) topology.add_link({i, (i + 1) % n, 0.5, 1.0});
  topology.name = "ring-" + std::to_string(n);
  return topology;
}

/// The ring all-gather of SPEC section 10: each rank sends its chunk on, then forwards what it got.
Schedule spec_ring_schedule(const Topology& ring, std::uint64_t size = 3000) {
  Schedule schedule(CollectiveKind::kAllGather, size, {0, 1, 2}, 1, "ring");
  for (NodeId i = 0; i < 3; ++i) {
    const std::vector<ChunkId> chunks = {i};
    schedule.add(i, (i + 1) % 3, TransferKind::kCopy, chunks, {}, 0.0, 1.5, ring.find_link(i, (i + 1) % 3));
  }
  for (NodeId i = 0; i < 3; ++i) {
    const std::vector<ChunkId> chunks = {(i + 2) % 3};
    const std::vector<TransferId> deps = {(i + 2) % 3};
    schedule.add(i, (i + 1) % 3, TransferKind::kCopy, chunks, deps, 1.5, 3.0, ring.find_link(i, (i + 1) % 3));
  }
  return schedule;
}

}  // namespace

TEST_CASE("The writer reproduces the SPEC's 3-GPU ring all-gather byte for byte", "[msccl]") {
  const Topology ring = one_way_ring(3);
  const Schedule schedule = spec_ring_schedule(ring);
  REQUIRE(verify_schedule(ring, schedule).ok);
  MscclWriteOptions options;
  options.name = "allgather_ring_1channelsperring";
  options.provenance = false;
  CHECK(schedule_to_msccl_xml(schedule, ring, options) == kSpecRing);
  const MscclVerifyResult result = verify_msccl_xml(kSpecRing, &ring);
  INFO(result.error);
  CHECK(result.ok);
}

TEST_CASE("The provenance comment comes before an otherwise identical file", "[msccl]") {
  const Topology ring = one_way_ring(3);
  MscclWriteOptions options;
  options.name = "allgather_ring_1channelsperring";
  options.seed = 7;
  const std::string xml = schedule_to_msccl_xml(spec_ring_schedule(ring), ring, options);
  CHECK(xml.substr(xml.find("<algo")) == kSpecRing);
  CHECK(xml.rfind("<!-- tenet " TENET_VERSION
                  ": ring allgather on topology ring-3, 3 ranks, 1 chunk(s) per NPU, made for "
                  "2.93 KiB (3000 bytes), seed 7 -->\n",
                  0) == 0);
  CHECK(xml.find("<!-- rank_to_npu: 0 1 2 -->\n") != std::string::npos);
  CHECK(verify_msccl_xml(xml, &ring).ok);
}

TEST_CASE("A schedule made for more than the runtime's default 128 MiB gets maxBytes to cover its size", "[msccl]") {
  const Topology ring = one_way_ring(3);
  const std::string xml = schedule_to_msccl_xml(spec_ring_schedule(ring, std::uint64_t{3} << 30), ring, {});
  CHECK(xml.find("inplace=\"1\" minBytes=\"0\" maxBytes=\"6442450944\">") != std::string::npos);
  CHECK(xml.find("of 0 <= bytes < 6442450944 -->") != std::string::npos);
  const MscclProgram program = parse_msccl_xml(xml, "big.xml");
  CHECK(program.max_bytes == std::int64_t{6442450944});
  CHECK(verify_msccl_xml(xml, &ring).ok);
}

namespace {

Collective collective_of(CollectiveKind kind, std::uint32_t chunks, std::vector<NodeId> members = {}) {
  Collective collective;
  collective.kind = kind;
  collective.size_bytes = 1 << 20;
  collective.chunks_per_npu = chunks;
  collective.members = std::move(members);
  return collective;
}

/// Three NPUs, every ordered pair linked directly.
Topology full_triangle(double latency_us, double bandwidth_GBps) {
  Topology triangle(3, {});
  for (NodeId a = 0; a < 3; ++a) {
    for (NodeId b = 0; b < 3; ++b) {
      if (a != b) triangle.add_link({a, b, latency_us, bandwidth_GBps});
    }
  }
  return triangle;
}

constexpr CollectiveKind kKinds[] = {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                     CollectiveKind::kAllReduce};

const char* const kXmlTopologies[] = {
    "torus-4x4",     "mesh-3x3",   "mesh-4x4-failed-7-9", "ring-fc-switch-2x4x2", "switch-8", "two-level-switch-8x4",
    "dragonfly-4x5", "tree-2x2x4", "hypercube-6"};

/// Writes and verifies; "ok" or what went wrong.
std::string write_and_verify(const Schedule& schedule, const Topology& topology, const MscclWriteOptions& options,
                             bool check_races = true) {
  std::string xml;
  try {
    xml = schedule_to_msccl_xml(schedule, topology, options);
  } catch (const std::exception& error) {
    return std::string("writer: ") + error.what();
  }
  const MscclVerifyResult result = verify_msccl_xml(xml, &topology, check_races);
  if (!result.ok) return result.error;
  if (check_races && !result.races_checked) return "races were not checked";
  return "ok";
}

}  // namespace

TEST_CASE("Synthesized collectives on the small shipped topologies run as MSCCL XML", "[msccl]") {
  for (const char* name : kXmlTopologies) {
    const Topology topology = shipped(name);
    if (!swept(topology.npu_count(), topology.name)) continue;
    for (CollectiveKind kind : kKinds) {
      for (std::uint32_t chunks : {1u, 3u}) {
        // A switch-native plan sends to any NPU of a switch group; with more chunks its
        // connections can outgrow MSCCL's threadblocks on 32 ranks, so 2 chunks there.
        if (chunks == 3 && topology.switch_count() > 0) chunks = 2;
        const SynthResult synthesized = synthesize(topology, collective_of(kind, chunks), {});
        REQUIRE(verify_schedule(topology, synthesized.schedule).ok);
        // In place and out of place; LL's deeper FIFOs for the 3-chunk case.
        for (bool in_place : {true, false}) {
          MscclWriteOptions options;
          options.in_place = in_place;
          options.protocol = chunks == 3 && !in_place ? MscclProtocol::kLL : MscclProtocol::kSimple;
          options.channels = in_place ? 0 : 1;  // automatic channels once per case: correctness is the point here
          options.seed = synthesized.seed;
          INFO(name << " " << collective_name(kind) << ", " << chunks << " chunk(s), " << (in_place ? "in" : "out of")
                    << " place");
          CHECK(write_and_verify(synthesized.schedule, topology, options) == "ok");
        }
      }
    }
  }
}

TEST_CASE("Switch-native schedules of aggregated transfers run as MSCCL XML", "[msccl]") {
  // Several chunks per routed transfer, each through the switches to any NPU of the group.
  for (const char* name : {"tree-2x2x4", "fat-tree-8x4"}) {
    const Topology topology = shipped(name);
    if (!swept(topology.npu_count(), topology.name)) continue;
    for (CollectiveKind kind : kKinds) {
      SynthOptions options;
      options.switches = SwitchPlanning::kNative;
      const SynthResult synthesized = synthesize(topology, collective_of(kind, 1), options);
      INFO(name << " " << collective_name(kind));
      REQUIRE(synthesized.switch_native);
      REQUIRE(synthesized.aggregated());
      MscclWriteOptions write;
      write.seed = synthesized.seed;
      CHECK(write_and_verify(synthesized.schedule, topology, write) == "ok");
    }
  }
}

TEST_CASE("Ranks of a topology with failed NPUs are renumbered, with the mapping in the file", "[msccl]") {
  const Topology topology = shipped("mesh-4x4-failed-7-9");
  const SynthResult synthesized = synthesize(topology, collective_of(CollectiveKind::kAllGather, 1), {});
  const std::string xml = schedule_to_msccl_xml(synthesized.schedule, topology, {});
  CHECK(xml.find("<!-- rank_to_npu: 0 1 2 3 4 5 6 8 10 11 12 13 14 15 -->") != std::string::npos);
  CHECK(xml.find("ngpus=\"14\"") != std::string::npos);
  CHECK(verify_msccl_xml(xml, &topology).ok);
  // A mapping to an NPU the topology has lost is refused.
  std::string broken = xml;
  broken.replace(broken.find(" 6 8 10"), 7, " 6 7 10");
  CHECK(verify_msccl_xml(broken, &topology).error ==
        "rank_to_npu maps rank 7 to NPU 7, which topology 'mesh-4x4-failed-7-9' does not have (or has failed)");
  // Without a mapping the ranks must be all of the topology's NPUs.
  const Topology torus = shipped("torus-4x4");
  CHECK(
      verify_msccl_xml(kSpecRing, &torus).error ==
      "ngpus=\"3\" but topology 'torus-4x4' has 16 NPUs: the runtime runs a file only on a communicator of exactly its "
      "ranks; to check it on some of the NPUs, give them with --members");
}

TEST_CASE("parse_msccl_xml reads the program back for other tools", "[msccl]") {
  const MscclProgram program = parse_msccl_xml(kSpecRing, "ring.xml");
  CHECK(program.coll == "allgather");
  CHECK(program.ngpus == 3);
  CHECK(program.nchunksperloop == 3);
  REQUIRE(program.gpus.size() == 3);
  REQUIRE(program.gpus[1].threadblocks.size() == 1);
  const MscclThreadblock& tb = program.gpus[1].threadblocks[0];
  CHECK(tb.send == 2);
  CHECK(tb.recv == 0);
  REQUIRE(tb.steps.size() == 3);
  CHECK(tb.steps[1].type == MscclStepType::kRecvCopySend);
  CHECK(tb.steps[1].dstoff == 0);
  CHECK(tb.steps[1].line == 12);
  REQUIRE_THROWS_WITH(
      parse_msccl_xml("<algo\tname=\"x\"/>", "x.xml"),
      "error: x.xml: line 1: tab character: the runtime's reader skips only spaces and newlines (' ', '\\n', '\\r')");
}

namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string problem(const std::string& xml) {
  const MscclVerifyResult result = verify_msccl_xml(xml);
  return result.ok ? "ok" : result.error;
}

/// All-reduce on 2 ranks: each reduces the other's half into its own, then sends it back.
const char* const kAllReduce2 =
    R"(<algo name="ar2" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

/// All-gather on 2 ranks of 3 chunks each: both send all three in one step, then receive. With
/// Simple and large buffers a step of cnt 3 is 3 calls, one more than a connection holds.
const char* const kExchange3 =
    R"(<algo name="ag2" proto="Simple" nchannels="1" nchunksperloop="6" ngpus="2" coll="allgather" inplace="1">
  <gpu id="0" i_chunks="0" o_chunks="6" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="3" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="o" srcoff="3" dstbuf="o" dstoff="3" cnt="3" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="6" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="3" dstbuf="o" dstoff="3" cnt="3" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="3" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

/// Direct all-gather on 3 ranks where rank 2 also forwards rank 1's chunk to rank 0, which then
/// receives it twice, in two threadblocks that nothing orders.
const char* const kRacingCopies =
    R"(<algo name="race" proto="Simple" nchannels="1" nchunksperloop="3" ngpus="3" coll="allgather" inplace="1">
  <gpu id="0" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="2" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="2" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="3" send="-1" recv="2" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="0" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="2" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="2" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="3" send="-1" recv="2" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="0" o_chunks="3" s_chunks="0">
    <tb id="0" send="0" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="2" deps="0" hasdep="0"/>
    </tb>
    <tb id="1" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="2" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="3" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

}  // namespace

TEST_CASE("Hand-broken files are rejected with specific messages", "[msccl]") {
  REQUIRE(problem(kSpecRing) == "ok");
  REQUIRE(problem(kAllReduce2) == "ok");

  SECTION("lexical rules of the runtime's reader") {
    CHECK(problem(replaced(kSpecRing, "  <gpu id=\"1\"", "\t<gpu id=\"1\"")) ==
          "line 9: tab character: the runtime's reader skips only spaces and newlines (' ', '\\n', '\\r')");
    CHECK(problem(std::string("<?xml version=\"1.0\"?>\n") + kSpecRing) ==
          "line 1: XML declaration or processing instruction '<?': the runtime's reader fails on it "
          "(\"expected >, got '?'\"); leave it out");
    CHECK(problem(replaced(kSpecRing, " cnt=\"1\" depid", "\n cnt=\"1\" depid")) ==
          "line 4: tag <step> continues on the next line: the runtime's reader needs each tag on one line");
    CHECK(problem(replaced(kSpecRing, "cnt=\"1\" depid", "cnt=\"1\"  depid")) ==
          "line 4: in <step>: two spaces in a row (the runtime's reader makes an empty attribute of them)");
    CHECK(problem(replaced(kSpecRing, "hasdep=\"0\"/>", "hasdep='0'/>")) ==
          "line 4: in <step>: attribute 'hasdep' in single quotes: the runtime's reader reads values up to the next "
          "'\"'; "
          "use double quotes");
    CHECK(problem(replaced(kSpecRing, "srcoff=\"2\"", "srcoff=\"02\"")) ==
          "line 5: <step> (rank 0 tb 0 position 1) srcoff=\"02\" is not a plain decimal integer (the runtime reads "
          "numbers "
          "with strtol base 0: \"010\" is 8, \"0x10\" 16)");
    CHECK(problem(replaced(kSpecRing, " hasdep=\"0\"/>", "/>")) ==
          "line 4: <step> (rank 0 tb 0 position 0) lacks attribute 'hasdep': the runtime does not load it without");
  }
  SECTION("load rules") {
    CHECK(problem(replaced(kSpecRing, "coll=\"allgather\"", "coll=\"reducescatter\"")) ==
          "line 1: <algo> coll=\"reducescatter\" is not a collective the runtime knows (allreduce, allgather, reduce, "
          "broadcast, alltoall, reduce_scatter, custom): it fails to load; did you mean \"reduce_scatter\"?");
    CHECK(problem(replaced(kSpecRing, "<step s=\"2\" type=\"r\" srcbuf=\"o\" srcoff=\"2\"",
                           "<step s=\"3\" type=\"r\" srcbuf=\"o\" srcoff=\"2\"")) ==
          "line 13: rank 1 tb 0 step 2 (r): s=\"3\" at position 2: steps must be numbered 0, 1, 2, ... in order "
          "(dependencies and the runtime's step counter count positions)");
    CHECK(problem(replaced(kSpecRing, "srcoff=\"2\" dstbuf=\"o\" dstoff=\"2\" cnt=\"1\"",
                           "srcoff=\"2\" dstbuf=\"o\" dstoff=\"2\" cnt=\"2\"")) ==
          "line 5: rank 0 tb 0 step 1 (rcs): dst o[2..4) is outside o_chunks=3 (out of bounds)");
    CHECK(problem(replaced(kSpecRing, "type=\"r\"", "type=\"ra\"")) ==
          "line 6: rank 0 tb 0 step 2 (ra): type ra loads but the interpreter has no case for it and stops the "
          "threadblock");
    CHECK(problem(replaced(kSpecRing, "<tb id=\"0\" send=\"1\" recv=\"2\"", "<tb id=\"0\" send=\"2\" recv=\"1\"")) ==
          "rank 0 tb 0 sends to rank 2 on channel 0, but rank 2 has no tb receiving from rank 0 on that channel "
          "(connections are set up in pairs)");
    CHECK(problem(replaced(kSpecRing, "srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\"",
                           "srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"2\"")) ==
          "connection rank 0 -> rank 1 channel 0: send #0 (line 4, cnt 2) meets receive #0 (line 12, cnt 1): matched "
          "steps "
          "need the same cnt");
    CHECK(
        problem(replaced(kSpecRing, "recv=\"2\" chan=\"0\"", "recv=\"2\" chan=\"1\"")) ==
        "line 3: rank 0 <tb id=\"0\">: chan=\"1\" is not below nchannels=\"1\" (only those channels get connections)");
    const std::string race = problem(kRacingCopies);
    CHECK(race.rfind("race on rank 0 o[1]: tb ", 0) == 0);
    CHECK(race.find(", and no dependency or message orders the two") != std::string::npos);
    CHECK(problem(replaced(kRacingCopies, "dstoff=\"1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"",
                           "dstoff=\"1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"")) ==
          "line 34: rank 2 tb 0 step 1 (s): waits for tb 2 step 0, which has hasdep=\"0\" and so does not publish its "
          "progress (the wait could hang)");
    CHECK(
        problem(replaced(
            kRacingCopies,
            "<step s=\"1\" type=\"s\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" depid=\"2\"",
            "<step s=\"1\" type=\"nop\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" depid=\"2\"")) ==
        "line 34: rank 2 tb 0 step 1 (nop): a nop at the end of a threadblock is dropped by the loader, with its "
        "dependency");
  }
  SECTION("execution: deadlocks at large buffers") {
    CHECK(problem(kExchange3) ==
          "deadlock: 2 threadblock(s) wait forever (FIFOs of 2 calls; each step of cnt c is c calls, as with large "
          "buffers): "
          "line 4: rank 0 tb 0 step 0 (s) waits for room to send to rank 1 on channel 0 (2 calls unreceived); line 10: "
          "rank 1 tb 0 step 0 (s) waits for room to send to rank 0 on channel 0 (2 calls unreceived)");
    // LL's 8-call FIFOs take it at every buffer size: cnt 3 is 3, 2 or 1 calls.
    const MscclVerifyResult ll = verify_msccl_xml(replaced(kExchange3, "proto=\"Simple\"", "proto=\"LL\""));
    CHECK(ll.ok);
    CHECK(ll.splits_executed == 3);
  }
  SECTION("execution: wrong results") {
    CHECK(problem(replaced(kAllReduce2, "<step s=\"1\" type=\"rrc\" srcbuf=\"i\" srcoff=\"1\"",
                           "<step s=\"1\" type=\"r\" srcbuf=\"i\" srcoff=\"1\"")) ==
          "rank 0 i[1] (output chunk 1, in place) should hold the sum of chunk 1 over all 2 ranks but is missing rank "
          "1's "
          "chunk 1 (1 contribution(s) where 2 belong) (numerically element 0 is 3 instead of 10)");
    CHECK(problem(replaced(kAllReduce2, "<step s=\"3\" type=\"r\" srcbuf=\"i\" srcoff=\"1\"",
                           "<step s=\"3\" type=\"rrc\" srcbuf=\"i\" srcoff=\"1\"")) ==
          "rank 0 i[1] (output chunk 1, in place) should hold the sum of chunk 1 over all 2 ranks but counts rank 0's "
          "chunk 1 twice (3 contribution(s) where 2 belong) (numerically element 0 is 13 instead of 10)");
    CHECK(problem(replaced(kSpecRing, "<step s=\"2\" type=\"r\" srcbuf=\"o\" srcoff=\"2\" dstbuf=\"o\" dstoff=\"2\"",
                           "<step s=\"2\" type=\"r\" srcbuf=\"o\" srcoff=\"2\" dstbuf=\"o\" dstoff=\"0\"")) ==
          "rank 1 o[0] should hold rank 0's chunk 0 but holds rank 2's chunk 2 (numerically element 0 is 17 instead of "
          "1)");
    // Out of place, o starts uninitialised: sending o[r] instead of i[0] spreads garbage.
    std::string out_of_place = replaced(kSpecRing, "inplace=\"1\"", "inplace=\"0\"");
    for (int r = 0; r < 3; ++r) out_of_place = replaced(out_of_place, "i_chunks=\"0\"", "i_chunks=\"1\"");
    CHECK(problem(out_of_place) ==
          "rank 0 o[0] should hold rank 0's chunk 0 but holds uninitialised data (a scratch or output slot was read "
          "before "
          "anything wrote it) (numerically element 0 is NaN instead of 1)");
  }
}

TEST_CASE("The writer falls back to shorter steps where long ones would hang", "[msccl]") {
  // Both ranks send their whole vector and reduce what arrives into it (swing-latency's step): a
  // receive may overwrite a chunk only after its own send read it, so with one step of cnt 6 (6
  // calls at large buffers) each send waits for room its peer's blocked receive would make.
  Topology pair(2, {});
  pair.add_duplex(0, 1, 0.5, 1.0);
  pair.name = "pair";
  Schedule schedule(CollectiveKind::kAllReduce, 6000, {0, 1}, 3, "exchange");
  const std::vector<ChunkId> all = {0, 1, 2, 3, 4, 5};
  schedule.add(0, 1, TransferKind::kReduce, all, {}, 0.0, 6.5, pair.find_link(0, 1));
  schedule.add(1, 0, TransferKind::kReduce, all, {}, 0.0, 6.5, pair.find_link(1, 0));
  REQUIRE(verify_schedule(pair, schedule).ok);

  const std::string simple = schedule_to_msccl_xml(schedule, pair, {});
  CHECK(simple.find("cnt=\"6\"") == std::string::npos);  // pieces of at most 2 chunks, a Simple FIFO's worth
  CHECK(simple.find("<step s=\"2\" type=\"rrc\" srcbuf=\"i\" srcoff=\"4\" dstbuf=\"i\" dstoff=\"4\" cnt=\"2\" "
                    "depid=\"0\" deps=\"2\" hasdep=\"0\"/>") != std::string::npos);
  CHECK(verify_msccl_xml(simple, &pair).ok);
  MscclWriteOptions ll;
  ll.protocol = MscclProtocol::kLL;
  const std::string deep = schedule_to_msccl_xml(schedule, pair, ll);
  CHECK(deep.find("<step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"6\"") !=
        std::string::npos);
  CHECK(verify_msccl_xml(deep, &pair).ok);
}

namespace {

/// The number after `option ` in a message, or 0.
std::uint32_t suggested(const std::string& message, const std::string& option) {
  const std::size_t at = message.find(option + " ");
  return at == std::string::npos ? 0 : static_cast<std::uint32_t>(std::stoul(message.substr(at + option.size() + 1)));
}

std::string writer_error(const Schedule& schedule, const Topology& topology, const MscclWriteOptions& options) {
  try {
    schedule_to_msccl_xml(schedule, topology, options);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Schedules past the runtime's limits get the limit and a change that works", "[msccl]") {
  SECTION("256 steps per threadblock: more channels") {
    const Topology mesh = shipped("mesh-3x3");
    const Schedule schedule =
        synthesize(mesh, collective_of(CollectiveKind::kAllReduce, 40), chunk_by_chunk()).schedule;
    MscclWriteOptions one_channel;
    one_channel.channels = 1;
    const std::string error = writer_error(schedule, mesh, one_channel);
    INFO(error);
    CHECK(error.find("error: MSCCL XML: rank ") == 0);
    CHECK(error.find(
              "the runtime runs at most 256 per threadblock: spread each connection over 3 channels (--channels 3)") !=
          std::string::npos);
    MscclWriteOptions options;
    options.channels = suggested(error, "--channels");
    CHECK(write_and_verify(schedule, mesh, options) == "ok");
    // Automatic channels find the count that fits by themselves.
    const MscclWritten automatic = write_msccl_xml(schedule, mesh, {});
    CHECK(automatic.channels >= 2);
    CHECK(verify_msccl_xml(automatic.text, &mesh).ok);
  }
  SECTION("4095 XML nodes per rank: fewer chunks per NPU") {
    const Topology torus = shipped("torus-4x4");
    const Schedule schedule =
        synthesize(torus, collective_of(CollectiveKind::kAllReduce, 70), chunk_by_chunk()).schedule;
    const std::string error = writer_error(schedule, torus, {});
    INFO(error);
    CHECK(error.find("the runtime's reader loads at most 4095 per rank: use fewer chunks per NPU") !=
          std::string::npos);
    const std::uint32_t chunks = suggested(error, "--chunks-per-npu");
    REQUIRE(chunks > 0);
    REQUIRE(chunks < 70);
    MscclWriteOptions options;
    options.channels = std::max(1u, suggested(error, "--channels"));
    CHECK(write_and_verify(
              synthesize(torus, collective_of(CollectiveKind::kAllReduce, chunks), chunk_by_chunk()).schedule, torus,
              options) == "ok");
  }
  SECTION("16-bit chunk offsets") {
    const Topology ring = one_way_ring(3);
    const Schedule schedule(CollectiveKind::kAllGather, 1 << 20, {0, 1, 2}, 11000, "hand");
    CHECK(writer_error(schedule, ring, {}) ==
          "error: MSCCL XML: nchunksperloop would be 33000 but the runtime stores chunk offsets in 16 bits (at most "
          "32767): use at most 10922 chunks per NPU (--chunks-per-npu)");
  }
}

TEST_CASE("The quick step check agrees with the writer on either side of the node limit", "[msccl]") {
  const Topology torus = shipped("torus-4x4");
  // 16 ranks: each receives 15 x chunks and sends about as many, a step each.
  for (std::uint32_t chunks : {8u, 70u}) {
    INFO(chunks << " chunks per NPU");
    const Schedule schedule =
        synthesize(torus, collective_of(CollectiveKind::kAllReduce, chunks), chunk_by_chunk()).schedule;
    const bool fits = msccl_steps_fit(schedule);
    CHECK(fits == (chunks == 8));
    CHECK(writer_error(schedule, torus, {}).empty() == fits);
  }
  CHECK(msccl_step_room(16) == 4095 - 1 - 3 * 16);
  CHECK(msccl_step_room(2000) == 0);
}

TEST_CASE("A schedule's expected file time counts the serialization where lanes run out", "[msccl]") {
  // Unwound into a full mesh per switch and routed, 16 chunks per NPU: dozens of transfers in
  // flight between a pair of ranks, more than MSCCL's channels and threadblocks hold.
  const Topology topology = shipped("fat-tree-8x4");
  if (!swept(topology.npu_count(), topology.name)) return;
  SynthOptions options = chunk_by_chunk();
  options.switches = SwitchPlanning::kUnwind;
  options.unwind_degree = 8;
  const Schedule schedule = synthesize(topology, collective_of(CollectiveKind::kAllReduce, 16), options).schedule;
  const MscclWritten written = write_msccl_xml(schedule, topology, {});
  REQUIRE(written.serialized_lanes > 0);
  // The estimate serializes onto the most lanes the runtime could hold; the writer, which then
  // hit another limit here, onto fewer.
  const double expected = msccl_expected_time_us(schedule, topology);
  CHECK(expected > schedule.planned_time_us() * 2);
  CHECK(expected <= written.serialized_schedule_us * (1 + 1e-9));
  // Automatic channels keep the fastest file of any channel count, each on the most lanes it
  // fits; the fewest channels at the first lane count that fits ran slower (218.4 us against 132.1).
  MscclWriteOptions first_fit;
  first_fit.search_channels_when_serialized = false;
  const MscclWritten quick = write_msccl_xml(schedule, topology, first_fit);
  CHECK(written.time_us < quick.time_us);
  // Where the lanes suffice, the schedule's own time.
  const Topology torus = shipped("torus-4x4");
  const SynthResult small = synthesize(torus, collective_of(CollectiveKind::kAllGather, 1), {});
  CHECK(msccl_expected_time_us(small.schedule, torus) == small.schedule.planned_time_us());
}

TEST_CASE("Files of chunks larger than a slice run as a pipeline the estimate bounds from below", "[msccl]") {
  const Topology topology = shipped("a100-2x8-ib");
  if (!swept(topology.npu_count(), topology.name)) return;
  Collective collective = make_collective(CollectiveKind::kReduceScatter, std::uint64_t{1} << 30, 1);
  const SynthResult synthesized = synthesize(topology, collective, {});
  const Schedule& schedule = synthesized.schedule;
  REQUIRE(msccl_runtime_slices(schedule, MscclProtocol::kSimple));
  const double whole = msccl_expected_time_us(schedule, topology);
  const double pipelined = msccl_pipelined_time_us(schedule, topology, MscclProtocol::kSimple, whole);
  // 64 MiB chunks run in 32 slices of 2 MiB, pipelined through the whole program: the file takes
  // 3258.9 us where the schedule takes 4255.6; the estimate's pipeline at best 3166.9.
  const MscclWritten written = write_msccl_xml(schedule, topology, {});
  CHECK(whole == Approx(synthesized.time_us).epsilon(1e-9));
  CHECK(written.time_us < 0.9 * whole);
  CHECK(pipelined < written.time_us);
  CHECK(pipelined > 0.5 * written.time_us);
  // Chunks of a slice or less run once: nothing pipelines them.
  collective.size_bytes = std::uint64_t{32} << 20;
  const Schedule small = synthesize(topology, collective, {}).schedule;
  CHECK_FALSE(msccl_runtime_slices(small, MscclProtocol::kSimple));
  CHECK(msccl_pipelined_time_us(small, topology, MscclProtocol::kSimple, msccl_expected_time_us(small, topology)) ==
        std::numeric_limits<double>::infinity());
  // LL slices at 32 KiB.
  CHECK(msccl_runtime_slices(small, MscclProtocol::kLL));
}

TEST_CASE("Chunks the runtime slices are cut into pieces where the file then runs faster", "[msccl]") {
  // The ring's reduce-scatter of 256 MiB on one switch: 16 MiB chunks run as 8 slices, each
  // paying the 7 steps' alphas again. Cut into pieces, each piece's program has fewer slices.
  const Topology topology = shipped("switch-8");
  Collective collective = make_collective(CollectiveKind::kReduceScatter, std::uint64_t{256} << 20, 1);
  const BaselineResult ring = generate_baseline("ring", topology, collective);
  REQUIRE(ring.applicable);
  REQUIRE(msccl_runtime_slices(ring.schedule, MscclProtocol::kSimple));
  MscclWriteOptions as_planned;
  as_planned.max_chunk_split = 1;
  const MscclWritten whole = write_msccl_xml(ring.schedule, topology, as_planned);
  const MscclWritten written = write_msccl_xml(ring.schedule, topology, {});
  CHECK(whole.chunk_split == 1);
  CHECK(written.chunk_split > 1);
  CHECK(written.time_us < whole.time_us);
  // Never faster than the schedule on the same links: the pieces share them.
  CHECK(written.time_us >= ring.schedule.planned_time_us() * (1.0 - 1e-9));
  const MscclVerifyResult check = verify_msccl_xml(written.text, &topology, true);
  INFO(check.error);
  REQUIRE(check.ok);
  CHECK(check.nchunksperloop == static_cast<int>(ring.schedule.chunk_count() * written.chunk_split));
  // Fixed channels, or chunks that fit a slice: as planned.
  MscclWriteOptions two_channels;
  two_channels.channels = 2;
  CHECK(write_msccl_xml(ring.schedule, topology, two_channels).chunk_split == 1);
  collective.size_bytes = std::uint64_t{16} << 20;
  CHECK(write_msccl_xml(generate_baseline("ring", topology, collective).schedule, topology, {}).chunk_split == 1);
}

TEST_CASE("A transfer whose chunks are not consecutive runs as one step through scratch", "[msccl]") {
  // Three NPUs, every pair linked at 10 GB/s and 1 us; all-gather of 4 chunks per member, 1 MB
  // each, two chunks a transfer (a runtime call moves two).
  const Topology triangle = full_triangle(1.0, 10.0);
  Schedule schedule(CollectiveKind::kAllGather, 12'000'000, {0, 1, 2}, 4, "hand");
  const auto add = [&](NodeId src, NodeId dst, std::vector<ChunkId> chunks, double start) {
    schedule.add(src, dst, TransferKind::kCopy, chunks, {}, start, start + 201.0, triangle.find_link(src, dst));
  };
  // Member 0's chunks go in pairs 0 2 and 1 3 to NPU 1, 0 1 and 2 3 to NPU 2: a cycle, so no
  // numbering of them puts every pair side by side. As a step per run, a pair apart is two steps
  // of one chunk, 1 + 100 us each, one after the other: one alpha more.
  add(0, 1, {0, 2}, 0.0);
  add(0, 1, {1, 3}, 201.0);
  add(0, 2, {0, 1}, 0.0);
  add(0, 2, {2, 3}, 201.0);
  for (NodeId member : {1U, 2U}) {
    for (NodeId to = 0; to < 3; ++to) {
      if (to == member) continue;
      add(member, to, {4 * member, 4 * member + 1}, 0.0);
      add(member, to, {4 * member + 2, 4 * member + 3}, 201.0);
    }
  }
  REQUIRE(verify_schedule(triangle, schedule).ok);
  REQUIRE(simulate(triangle, schedule).time_us == exactly(402.0));
  // Staged, the sender copies the pair into scratch and sends it as one step; the receiver
  // receives it into scratch and copies each chunk to its place.
  CHECK(msccl_expected_time_us(schedule, triangle) == exactly(402.0));
  // (On two channels a link's two transfers overlap their alphas: 401 us.)
  const MscclWritten written = write_msccl_xml(schedule, triangle, {});
  CHECK(written.time_us <= 402.0 + 1e-9);
  CHECK(written.text.find("type=\"cpy\" srcbuf=\"o\"") != std::string::npos);
  CHECK(written.text.find("dstbuf=\"s\"") != std::string::npos);
  CHECK(written.text.find("s_chunks=\"0\"") != std::string::npos);  // ranks 1 and 2 stage nothing
  CHECK(verify_msccl_xml(written.text, nullptr, false).ok);
}

TEST_CASE("A staged reduction receives into scratch and adds each run into place after", "[msccl]") {
  // Three NPUs, every pair linked at 1 GB/s and 100 us: alphas are nearly all. Reduce-scatter of 4
  // chunks of 1 kB per member, each transfer a reduction of two. Member 0's chunks reach NPU 0
  // from NPU 2 as 0 1 and 2 3, then from NPU 1 as 0 2 and 1 3: no numbering keeps both pairs side
  // by side, and a step per chunk would pay an alpha per chunk.
  const Topology triangle = full_triangle(100.0, 1.0);
  Schedule schedule(CollectiveKind::kReduceScatter, 12'000, {0, 1, 2}, 4, "hand");
  const auto add = [&](NodeId src, NodeId dst, std::vector<ChunkId> chunks, std::vector<TransferId> after,
                       double start) {
    const double end = start + 100.0 + static_cast<double>(chunks.size());
    return schedule.add(src, dst, TransferKind::kReduce, chunks, after, start, end, triangle.find_link(src, dst));
  };
  const TransferId low = add(2, 0, {0, 1}, {}, 0.0);
  const TransferId high = add(2, 0, {2, 3}, {}, 102.0);
  add(1, 0, {0, 2}, {low, high}, 204.0);
  add(1, 0, {1, 3}, {low, high}, 306.0);
  add(0, 1, {4, 5, 6, 7}, {add(2, 1, {4, 5, 6, 7}, {}, 0.0)}, 104.0);
  add(1, 2, {8, 9, 10, 11}, {add(0, 2, {8, 9, 10, 11}, {}, 0.0)}, 104.0);
  REQUIRE(verify_schedule(triangle, schedule).ok);
  REQUIRE(simulate(triangle, schedule).time_us == exactly(408.0));
  // On one channel (on more, steps per chunk overlap their alphas), NPU 0 takes 0 2 as one step
  // into scratch (`r`) and adds each chunk into its own (`re`): the receive waits for nothing of
  // NPU 0's, where gathering its operands into scratch first would.
  MscclWriteOptions one_channel;
  one_channel.channels = 1;
  const MscclWritten written = write_msccl_xml(schedule, triangle, one_channel);
  // NPU 1's pairs are its own data: they cross while NPU 2's do, and the last sum is made as
  // NPU 2's second pair arrives (204 us; the schedule had them wait for it: 408).
  CHECK(written.time_us == exactly(204.0));
  CHECK(written.text.find("type=\"re\" srcbuf=\"s\"") != std::string::npos);
  const MscclVerifyResult check = verify_msccl_xml(written.text, &triangle, true);
  INFO(check.error);
  CHECK(check.ok);
}

TEST_CASE("Aggregated transfers of chunks apart, larger than a call, run as planned", "[msccl]") {
  // Three NPUs, every pair linked at 10 GB/s and 1 us; all-gather of 6 chunks of 1 MiB per member.
  // Member v sends its even chunks one way round and its odd ones the other (as the synthesizer
  // deals a member's chunks over links round robin), and each neighbour forwards them one hop on:
  // 3 chunks apart per transfer, where the runtime moves at most 2 chunks of 1 MiB per primitive
  // call, each call paying the alpha.
  const Topology triangle = full_triangle(1.0, 10.0);
  constexpr std::uint32_t kPerMember = 6;
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
  Schedule schedule(CollectiveKind::kAllGather, 3 * kPerMember * kChunk, {0, 1, 2}, kPerMember, "hand");
  const double hop_us = 1.0 + 3.0 * static_cast<double>(kChunk) / bytes_per_us(10.0);
  const auto chunks_of = [&](NodeId member, ChunkId parity) {
    const ChunkId first = member * kPerMember + parity;
    return std::vector<ChunkId>{first, first + 2, first + 4};
  };
  std::vector<TransferId> first_hop(6);
  for (NodeId v = 0; v < 3; ++v) {
    for (NodeId parity = 0; parity < 2; ++parity) {
      const NodeId next = parity == 0 ? (v + 1) % 3 : (v + 2) % 3;
      first_hop[2 * v + parity] = schedule.add(v, next, TransferKind::kCopy, chunks_of(v, parity), {}, 0.0, hop_us,
                                               triangle.find_link(v, next));
    }
  }
  for (NodeId v = 0; v < 3; ++v) {
    for (NodeId parity = 0; parity < 2; ++parity) {
      const NodeId via = parity == 0 ? (v + 1) % 3 : (v + 2) % 3;
      const NodeId next = parity == 0 ? (via + 1) % 3 : (via + 2) % 3;
      const std::vector<TransferId> after{first_hop[2 * v + parity]};
      schedule.add(via, next, TransferKind::kCopy, chunks_of(v, parity), after, hop_us, 2.0 * hop_us,
                   triangle.find_link(via, next));
    }
  }
  REQUIRE(verify_schedule(triangle, schedule).ok);
  REQUIRE(simulate(triangle, schedule).time_us == Approx(2.0 * hop_us).epsilon(1e-12));
  REQUIRE(msccl_runtime_model(MscclProtocol::kSimple, 3 * kPerMember, schedule.size_bytes()).max_allowed_count == 2);
  // Written with each member's chunks renumbered so that a transfer's lie side by side (no staging
  // copies), and each transfer cut into two side by side on channels of their own: one alpha each.
  const MscclWritten written = write_msccl_xml(schedule, triangle, {});
  CHECK(written.time_us == Approx(2.0 * hop_us).epsilon(1e-12));
  CHECK(written.channels == 2);
  CHECK(written.text.find("type=\"cpy\"") == std::string::npos);
  const MscclVerifyResult check = verify_msccl_xml(written.text, &triangle, true);
  INFO(check.error);
  CHECK(check.ok);
  // On the one channel a user asks for, each step is two calls, one after the other: an alpha more
  // per hop. Still renumbered: no copies.
  MscclWriteOptions one_channel;
  one_channel.channels = 1;
  const MscclWritten on_one = write_msccl_xml(schedule, triangle, one_channel);
  CHECK(on_one.channels == 1);
  CHECK(on_one.time_us == Approx(2.0 * hop_us + 2.0).epsilon(1e-12));
  CHECK(on_one.text.find("type=\"cpy\"") == std::string::npos);
}

TEST_CASE("Transfers of more chunks than a step carries go as a step per run of consecutive chunks", "[msccl]") {
  // Two NPUs, 160 chunks per member; NPU 0 sends its 80 even chunks, then its 80 odd ones (a step
  // carries at most 71).
  Topology pair(2, {});
  pair.add_duplex(0, 1, 1.0, 10.0);
  const std::uint32_t per_member = 160;
  Schedule schedule(CollectiveKind::kAllGather, std::uint64_t{2} * per_member * 1000, {0, 1}, per_member, "hand");
  std::vector<ChunkId> even;
  std::vector<ChunkId> odd;
  for (ChunkId c = 0; c < per_member; ++c) (c % 2 == 0 ? even : odd).push_back(c);
  std::vector<ChunkId> theirs(per_member);
  for (ChunkId c = 0; c < per_member; ++c) theirs[c] = per_member + c;
  const double bytes_us = 100.0 * static_cast<double>(even.size()) / 1000.0;
  const TransferId first = schedule.add(0, 1, TransferKind::kCopy, even, {}, 0.0, 1.0 + bytes_us, pair.find_link(0, 1));
  const std::vector<TransferId> after_first{first};
  schedule.add(0, 1, TransferKind::kCopy, odd, after_first, 1.0 + bytes_us, 2.0 * (1.0 + bytes_us),
               pair.find_link(0, 1));
  schedule.add(1, 0, TransferKind::kCopy, theirs, {}, 0.0, 1.0 + 2.0 * bytes_us, pair.find_link(1, 0));
  REQUIRE(verify_schedule(pair, schedule).ok);
  // Each half of NPU 0's block is 80 runs of one chunk: 80 alphas each instead of one.
  CHECK(msccl_expected_time_us(schedule, pair) > simulate(pair, schedule).time_us + 70.0);
}

TEST_CASE("Schedules MSCCL cannot express are refused with the reason", "[msccl]") {
  // Corners of a 3x3 mesh reach each other only through non-members, which are not ranks: hop by
  // hop they relay (routed transfers go straight from member to member, and can be written).
  const Topology mesh = shipped("mesh-3x3");
  const Schedule schedule =
      synthesize(mesh, collective_of(CollectiveKind::kAllGather, 1, {0, 2, 6, 8}), chunk_by_chunk()).schedule;
  const std::string error = writer_error(schedule, mesh, {});
  CHECK(error.find("error: MSCCL XML: transfer ") == 0);
  CHECK(error.find(", which is not a member: MSCCL moves data only between the communicator's ranks") !=
        std::string::npos);
  MscclWriteOptions bad_name;
  bad_name.name = "two words";
  CHECK(writer_error(spec_ring_schedule(one_way_ring(3)), one_way_ring(3), bad_name) ==
        "error: MSCCL XML: algorithm name 'two words': at most 63 printable characters without spaces, quotes, '<', "
        "'>' or '&'");
  REQUIRE_THROWS_WITH(parse_msccl_protocol("simple", "--proto"),
                      "error: --proto: unknown protocol 'simple' (did you mean 'Simple'?); the MSCCL runtime knows "
                      "Simple, LL and LL128");
}

TEST_CASE("Chunk counts past what steps can reach are refused before the interpreter allocates", "[msccl]") {
  // nchunksperloop="2147483647" took 16.8 GB: every rank's buffers hold that many chunks.
  const MscclVerifyResult huge =
      verify_msccl_xml(replaced(kSpecRing, "nchunksperloop=\"3\"", "nchunksperloop=\"2147483647\""));
  CHECK_FALSE(huge.ok);
  CHECK(huge.beyond_limits);
  CHECK(huge.error ==
        "line 1: <algo> nchunksperloop=\"2147483647\": tenet verifies at most 32838 chunks per loop (steps reach chunk "
        "32837 at most: int16 offsets, cnt up to 71)");
  CHECK_THROWS_WITH(
      msccl_to_schedule(
          parse_msccl_xml(replaced(kSpecRing, "nchunksperloop=\"3\"", "nchunksperloop=\"2147483647\""), "x.xml"),
          one_way_ring(3), 3000, "x.xml"),
      "error: x.xml: " + huge.error);
  // Scratch no step can reach costs nothing: the file is loaded and verified as written.
  const std::string scratch = replaced(kSpecRing, "s_chunks=\"0\"", "s_chunks=\"2147483647\"");
  CHECK(problem(scratch) == "ok");
  CHECK_FALSE(verify_msccl_xml(replaced(kSpecRing, "srcoff=\"0\"", "srcoff=\"4\"")).beyond_limits);
}

TEST_CASE("An offset near INT_MAX is out of bounds, not an overflow", "[msccl]") {
  // Found by fuzzing: offset + cnt overflowed int while the message was built (UBSan).
  CHECK(problem(replaced(kSpecRing, "type=\"s\" srcbuf=\"o\" srcoff=\"2\"",
                         "type=\"s\" srcbuf=\"o\" srcoff=\"2147483647\"")) ==
        "line 18: rank 2 tb 0 step 0 (s): src o[2147483647..2147483648) is outside o_chunks=3 (out of bounds)");
}

TEST_CASE("The time the writer gives is that of the text it wrote as the runtime runs it", "[msccl]") {
  // The writer times each layout from its program and prints only the one it writes: the text,
  // parsed back, must run exactly as timed. Staged and step-per-run layouts, fused and unfused,
  // in and out of place, both protocols, a few members, and no comments (no rank_to_npu).
  struct Case {
    const char* topology;
    CollectiveKind kind;
    std::uint64_t size;
    std::vector<NodeId> members;
    MscclWriteOptions options;
  };
  MscclWriteOptions out_of_place;
  out_of_place.in_place = false;
  MscclWriteOptions ll;
  ll.protocol = MscclProtocol::kLL;
  MscclWriteOptions bare;
  bare.provenance = false;
  bare.channels = 2;
  const std::vector<Case> cases = {
      {"torus-4x4", CollectiveKind::kAllReduce, 1 << 20, {}, {}},
      {"torus-4x4", CollectiveKind::kReduceScatter, 64 << 10, {}, out_of_place},
      {"fat-tree-8x4", CollectiveKind::kReduceScatter, 1 << 20, {}, ll},
      {"mesh-4x4-failed-7-9", CollectiveKind::kAllGather, 1 << 20, {0, 3, 10, 13}, bare},
      {"dgx1-8", CollectiveKind::kAllReduce, 4 << 20, {}, out_of_place},
  };
  for (const Case& c : cases) {
    const Topology topology = shipped(c.topology);
    const Collective collective = make_collective(c.kind, c.size, 1, c.members);
    for (const char* algorithm : {"synth", "swing"}) {
      INFO(c.topology << " " << collective_name(c.kind) << " " << algorithm);
      Schedule schedule;
      if (std::string(algorithm) == "synth") {
        schedule = synthesize(topology, collective, {}).schedule;
      } else {
        BaselineResult baseline = generate_baseline(algorithm, topology, collective);
        if (!baseline.applicable) continue;
        schedule = std::move(baseline.schedule);
      }
      const MscclWritten written = write_msccl_xml(schedule, topology, c.options);
      const Schedule from_text = msccl_to_schedule(parse_msccl_xml(written.text, "x.xml"), topology,
                                                   schedule.size_bytes(), "x.xml", schedule.members());
      CHECK(simulate(topology, from_text).time_us == written.time_us);
    }
  }
}
