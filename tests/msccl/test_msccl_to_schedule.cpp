// SPDX-License-Identifier: MIT
// MSCCL XML back to a Schedule for the simulator: the SPEC's ring and a hand-written 2-rank
// all-reduce checked transfer by transfer, baselines simulated from their XML against their own
// schedule, and files that cannot be converted rejected with their file and line.

#include "../support/catch.hpp"
#include "../support/collectives.hpp"

#include <string>
#include <vector>

#include "tenet/baselines/baseline.hpp"
#include "tenet/common/error.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;
using Catch::Contains;

namespace {

std::string step(int s, const char* type, const char* srcbuf, int srcoff, const char* dstbuf, int dstoff,
                 const char* extra = "depid=\"-1\" deps=\"-1\" hasdep=\"0\"") {
  return "      <step s=\"" + std::to_string(s) + "\" type=\"" + type + "\" srcbuf=\"" + srcbuf + "\" srcoff=\"" +
         std::to_string(srcoff) + "\" dstbuf=\"" + dstbuf + "\" dstoff=\"" + std::to_string(dstoff) + "\" cnt=\"1\" " +
         extra + "/>\n";
}

/// SPEC section 10: the 3-GPU ring all-gather msccl-tools writes (no tenet comment, so no size).
/// `receive_first` turns every rank's steps around, so that all wait for a message first.
std::string spec_ring(bool receive_first = false) {
  std::string text =
      "<algo name=\"allgather_ring_1channelsperring\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"3\" "
      "ngpus=\"3\" "
      "coll=\"allgather\" inplace=\"1\">\n";
  for (int r = 0; r < 3; ++r) {
    text += "  <gpu id=\"" + std::to_string(r) + "\" i_chunks=\"0\" o_chunks=\"3\" s_chunks=\"0\">\n";
    text += "    <tb id=\"0\" send=\"" + std::to_string((r + 1) % 3) + "\" recv=\"" + std::to_string((r + 2) % 3) +
            "\" chan=\"0\">\n";
    const std::string send = step(0, "s", "o", r, "o", r);
    const std::string forward = step(1, "rcs", "o", (r + 2) % 3, "o", (r + 2) % 3);
    const std::string receive = step(2, "r", "o", (r + 1) % 3, "o", (r + 1) % 3);
    text += receive_first ? step(0, "r", "o", (r + 1) % 3, "o", (r + 1) % 3) + forward + step(2, "s", "o", r, "o", r)
                          : send + forward + receive;
    text += "    </tb>\n  </gpu>\n";
  }
  return text + "</algo>\n";
}

/// 2 ranks, all-reduce in place: each sends the other's chunk, reduces its own from the other,
/// sends the result back and receives the other's result.
std::string pair_allreduce() {
  std::string text =
      "<algo name=\"pair_allreduce\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "
      "coll=\"allreduce\" "
      "inplace=\"1\">\n";
  for (int r = 0; r < 2; ++r) {
    const int other = 1 - r;
    text += "  <gpu id=\"" + std::to_string(r) + "\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"0\">\n";
    text +=
        "    <tb id=\"0\" send=\"" + std::to_string(other) + "\" recv=\"" + std::to_string(other) + "\" chan=\"0\">\n";
    text += step(0, "s", "i", other, "i", other);
    text += step(1, "rrc", "i", r, "i", r);
    text += step(2, "s", "i", r, "i", r);
    text += step(3, "r", "i", other, "i", other);
    text += "    </tb>\n  </gpu>\n";
  }
  return text + "</algo>\n";
}

Topology load(const std::string& name) {
  return load_topology(std::string(TENET_SOURCE_DIR) + "/topologies/" + name + ".json");
}

Topology one_way_ring_3() {
  Topology topology(3, {});
  for (NodeId i = 0; i < 3; ++i) topology.add_link({i, (i + 1) % 3, 0.5, 1.0});
  topology.name = "ring-3";
  return topology;
}

Topology pair() {
  Topology topology(2, {});
  topology.add_link({0, 1, 0.5, 1.0});
  topology.add_link({1, 0, 0.5, 1.0});
  topology.name = "pair";
  return topology;
}

bool has_dep(const Schedule& schedule, TransferId id, TransferId dep) {
  const Transfer transfer = schedule.transfer(id);
  for (TransferId d : schedule.deps_of(transfer)) {
    if (d == dep) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("The SPEC's ring all-gather becomes its six transfers, forwards after what they forward",
          "[msccl][convert]") {
  const Topology ring = one_way_ring_3();
  const MscclProgram program = parse_msccl_xml(spec_ring(), "spec-ring.xml");
  CHECK_FALSE(program.size_bytes);
  const Schedule schedule = msccl_to_schedule(program, ring, 3000, "spec-ring.xml");
  CHECK(schedule.collective() == CollectiveKind::kAllGather);
  CHECK(schedule.size_bytes() == 3000);
  CHECK(schedule.members() == std::vector<NodeId>{0, 1, 2});
  CHECK(schedule.chunks_per_member() == 1);
  REQUIRE(schedule.size() == 6);
  // Each rank first sends its own chunk, then forwards the chunk of the rank before it.
  std::vector<int> first_of_chunk(3, -1);
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    CHECK(transfer.dst == (transfer.src + 1) % 3);
    CHECK(transfer.kind == TransferKind::kCopy);
    CHECK(transfer.link == kNoLink);
    CHECK(transfer.start_us == 0.0);
    REQUIRE(schedule.chunks_of(transfer).size() == 1);
    const ChunkId chunk = schedule.chunks_of(transfer)[0];
    if (chunk == transfer.src) {
      CHECK(schedule.deps_of(transfer).empty());
      first_of_chunk[chunk] = static_cast<int>(id);
    } else {
      CHECK(chunk == (transfer.src + 2) % 3);
      REQUIRE(first_of_chunk[chunk] >= 0);
      CHECK(has_dep(schedule, id, static_cast<TransferId>(first_of_chunk[chunk])));
    }
  }
  // The conversion has no planned times; the simulator gives it the runtime's.
  CHECK(verify_schedule(ring, timed_by_simulation(ring, schedule)).ok);
}

TEST_CASE("Receives that reduce become reductions, and a result is sent after it was reduced", "[msccl][convert]") {
  const Topology topology = pair();
  const std::string text = pair_allreduce();
  REQUIRE(verify_msccl_xml(text, &topology).ok);
  const Schedule schedule = msccl_to_schedule(parse_msccl_xml(text, "pair.xml"), topology, 1000, "pair.xml");
  REQUIRE(schedule.size() == 4);
  int reductions = 0;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    const ChunkId chunk = schedule.chunks_of(transfer)[0];
    if (transfer.kind == TransferKind::kReduce) {
      ++reductions;
      CHECK(chunk == transfer.dst);  // the other rank's contribution to the receiver's own chunk
      CHECK(schedule.deps_of(transfer).empty());
    } else {
      CHECK(chunk == transfer.src);  // the sender's reduced chunk, after the reduction into it
      // ... and after the threadblock's earlier send (a send holds its threadblock until done).
      bool after_reduction = false;
      for (TransferId dep : schedule.deps_of(transfer)) {
        const Transfer before = schedule.transfer(dep);
        after_reduction = after_reduction || (before.kind == TransferKind::kReduce && before.dst == transfer.src);
      }
      CHECK(after_reduction);
    }
  }
  CHECK(reductions == 2);
  CHECK(verify_schedule(topology, timed_by_simulation(topology, schedule)).ok);
}

TEST_CASE("Ring and direct run from their MSCCL XML as fast as their own schedules", "[msccl][convert]") {
  // A torus (symmetric) and a 3x3 mesh (no Hamiltonian ring: one hop runs over two links).
  for (const char* name : {"torus-4x4", "mesh-3x3"}) {
    const Topology topology = load(name);
    for (const char* algorithm : {"ring", "direct"}) {
      for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter}) {
        Collective collective;
        collective.kind = kind;
        collective.size_bytes = 1 << 20;
        const BaselineResult baseline = generate_baseline(algorithm, topology, collective);
        REQUIRE(baseline.applicable);
        INFO(name << " " << algorithm << " " << collective_name(kind));
        const MscclProgram program = parse_msccl_xml(schedule_to_msccl_xml(baseline.schedule, topology, {}), "x.xml");
        REQUIRE(program.size_bytes == collective.size_bytes);
        const Schedule converted = msccl_to_schedule(program, topology, *program.size_bytes, "x.xml");
        CHECK(converted.collective() == kind);
        CHECK(converted.members() == baseline.schedule.members());
        CHECK(converted.chunks_per_member() == baseline.schedule.chunks_per_member());
        const VerifyResult verdict = verify_schedule(topology, timed_by_simulation(topology, converted));
        INFO(verdict.error);
        CHECK(verdict.ok);
        // The runtime waits only for data where the schedule's steps also wait for each other
        // (mesh-3x3's ring), so the file may be faster, but never slower by more than 5%.
        const double expected = simulate(topology, baseline.schedule).time_us;
        const double from_xml = simulate(topology, converted).time_us;
        CHECK(from_xml <= expected * 1.05);
        CHECK(from_xml >= expected * 0.85);
      }
    }
  }
}

TEST_CASE("Files that cannot be converted name the file and the line", "[msccl][convert]") {
  const Topology ring = one_way_ring_3();
  SECTION("a load rule") {
    std::string text = spec_ring();
    text.replace(text.find("s=\"2\" type=\"r\""), 5, "s=\"3\"");
    CHECK_THROWS_WITH(msccl_to_schedule(parse_msccl_xml(text, "bad.xml"), ring, 3000, "bad.xml"),
                      Contains("error: bad.xml: line 6: rank 0 tb 0 step 2 (r): s=\"3\" at position 2"));
  }
  SECTION("a deadlock even with unbounded FIFOs") {
    CHECK_THROWS_WITH(
        msccl_to_schedule(parse_msccl_xml(spec_ring(true), "stuck.xml"), ring, 3000, "stuck.xml"),
        Contains("error: stuck.xml: line 4: rank 0 tb 0 step 0 (r) waits forever for a message from rank 2 "
                 "on channel 0: the program deadlocks"));
  }
  SECTION("ranks that are not the topology's NPUs") {
    CHECK_THROWS_WITH(msccl_to_schedule(parse_msccl_xml(spec_ring(), "ring.xml"), pair(), 3000, "ring.xml"),
                      Contains("error: ring.xml: ngpus=\"3\" but topology 'pair' has 2 NPUs"));
  }
  SECTION("a send of scratch nothing wrote") {
    std::string text = spec_ring();
    text.replace(text.find("s_chunks=\"0\""), 12, "s_chunks=\"1\"");
    text.replace(text.find("type=\"s\" srcbuf=\"o\" srcoff=\"0\""), 30, "type=\"s\" srcbuf=\"s\" srcoff=\"0\"");
    CHECK_THROWS_WITH(
        msccl_to_schedule(parse_msccl_xml(text, "scratch.xml"), ring, 3000, "scratch.xml"),
        Contains("error: scratch.xml: line 4: rank 0 tb 0 step 0 (s): reads s[0], which no earlier step wrote"));
  }
}
