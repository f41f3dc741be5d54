// SPDX-License-Identifier: MIT
// MSCCL++ plans written from schedules: the SPEC's worked example byte for byte, and plans of
// synthesized and baseline schedules on the small shipped topologies, each verified by executing
// the written text.

#include "../support/catch.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "../support/collectives.hpp"
#include "../support/sanitizers.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/mscclpp/mscclpp_plan.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;
using tenet::testing::kAllKinds;
using tenet::testing::make_collective;
using tenet::testing::shipped;

namespace {

/// Three NPUs on a bidirectional ring.
Topology ring3() {
  Topology topology(3, {});
  for (NodeId r = 0; r < 3; ++r) topology.add_duplex(r, (r + 1) % 3, 0.5, 50.0);
  topology.name = "ring-3";
  return topology;
}

/// The SPEC's section 13 algorithm: each rank sends its chunk to the next, then forwards the
/// chunk it received.
Schedule ring_allgather_3() {
  Schedule schedule(CollectiveKind::kAllGather, 3 * 48, {0, 1, 2}, 1, "ring");
  std::vector<TransferId> first(3);
  for (NodeId r = 0; r < 3; ++r) {
    const ChunkId chunk = r;
    first[r] = schedule.add(r, (r + 1) % 3, TransferKind::kCopy, {&chunk, 1}, {}, 0.0, 1.0);
  }
  for (NodeId r = 0; r < 3; ++r) {
    const ChunkId chunk = (r + 2) % 3;
    const TransferId dep = first[(r + 2) % 3];
    schedule.add(r, (r + 1) % 3, TransferKind::kCopy, {&chunk, 1}, {&dep, 1}, 1.0, 2.0);
  }
  return schedule;
}

}  // namespace

TEST_CASE("The SPEC's 3-GPU ring all-gather plan is written byte for byte", "[mscclpp]") {
  const Topology topology = ring3();
  const Schedule schedule = ring_allgather_3();
  REQUIRE(verify_schedule(topology, schedule).ok);
  MscclppOptions options;
  options.name = "ring_allgather_3";
  const std::string expected =
      read_file(std::string(TENET_SOURCE_DIR) + "/tests/mscclpp/data/ring_allgather_3.plan.json");
  CHECK(schedule_to_mscclpp_plan(schedule, topology, options) == expected);
  const MscclppVerifyResult verdict = verify_mscclpp_plan(expected, "ring_allgather_3.plan.json", &topology);
  INFO(verdict.error);
  CHECK(verdict.ok);
  CHECK(verdict.races_checked);
}

namespace {

/// Writes the schedule as a plan in every mode that applies and verifies each by execution.
int refused = 0;

int checked_schedules = 0;

void check_plans(const Schedule& schedule, const Topology& topology, const std::string& what) {
  // Each schedule is written in both protocols, in place or not in turn; under the sanitizers in
  // one of the four modes, in turn. The modes share all but a few ops per transfer.
  const int turn = checked_schedules++;
  int mode = -1;
  for (const MscclppProtocol protocol : {MscclppProtocol::kSimple, MscclppProtocol::kLL}) {
    for (const bool in_place : {false, true}) {
      ++mode;
      if (kSanitized ? mode != turn % 4 : in_place != ((turn + mode / 2) % 2 == 1)) continue;
      if (in_place && schedule.collective() == CollectiveKind::kReduceScatter) continue;
      // 64 ranks: one mode keeps the test fast (the modes share all but a few ops per transfer).
      const bool large = schedule.members().size() > 32;
      if (large && (in_place || protocol == MscclppProtocol::kLL)) continue;
      MscclppOptions options;
      options.protocol = protocol;
      options.in_place = in_place;
      INFO(what << (protocol == MscclppProtocol::kLL ? " LL" : " Simple")
                << (in_place ? " in-place" : " out-of-place"));
      std::string reason;
      const std::optional<std::string> text = schedule_to_mscclpp_plan(schedule, topology, options, reason);
      INFO(reason);
      if (!text) {
        // Blocks of scattered chunks (Swing on 64 ranks) need one op per contiguous run: more
        // threadblocks than a GPU runs at once. Refused by name, never written wrong.
        CHECK(reason.rfind("--max-threadblocks: ", 0) == 0);
        ++refused;
        continue;
      }
      const MscclppVerifyResult verdict = verify_mscclpp_plan(*text, "plan", &topology);
      INFO(verdict.error);
      CHECK(verdict.ok);
    }
  }
}

const char* const kPlanTopologies[] = {"mesh-3x3",
                                       "torus-4x4",
                                       "mesh-4x4-failed-7-9",
                                       "switch-8",
                                       "two-level-switch-8x4",
                                       "ring-fc-switch-2x4x2",
                                       "pod-2x4-handwritten",
                                       "a100-2x8-ib",
                                       "dgx1-2x8-bridge",
                                       "tree-2x2x4",
                                       "hypercube-6",
                                       "ring-64"};

}  // namespace

TEST_CASE("Plans of synthesized schedules on the small shipped topologies verify", "[mscclpp][synth]") {
  for (const char* name : kPlanTopologies) {
    const Topology topology = shipped(name);
    if (!swept(topology.npu_count(), topology.name)) continue;
    for (CollectiveKind kind : kAllKinds) {
      const SynthResult synth =
          synthesize(topology, make_collective(kind, 1 << 20, topology.npu_count() > 32 ? 1 : 2), SynthOptions{});
      check_plans(synth.schedule, topology, std::string(name) + " synth " + collective_name(kind));
    }
  }
  CHECK(refused == 0);
}

TEST_CASE("Plans of baseline schedules on the small shipped topologies verify", "[mscclpp][baseline]") {
  std::size_t pick = 0;
  for (const char* name : kPlanTopologies) {
    const Topology topology = shipped(name);
    if (!swept(topology.npu_count(), topology.name)) continue;
    // 64 ranks x 7 baselines x 3 collectives would take a minute: those run in the synth case.
    if (topology.npu_count() > 32) continue;
    for (const std::string& algorithm : baseline_names()) {
      for (CollectiveKind kind : kAllKinds) {
        // Under the sanitizers one collective in three, rotating over algorithms and topologies.
        if (kSanitized && pick++ % 3 != 0) continue;
        const BaselineResult baseline = generate_baseline(algorithm, topology, make_collective(kind, 1 << 20));
        if (!baseline.applicable) continue;
        check_plans(baseline.schedule, topology, std::string(name) + " " + algorithm + " " + collective_name(kind));
      }
    }
  }
  WARN(refused << " baseline plans refused for the threadblock limit");
  CHECK(refused == 0);
}

TEST_CASE("The plan checks for ranking agree with the writer at every threadblock limit", "[mscclpp][synth]") {
  // A switched cluster's all-reduce with many chunks: its plan takes dozens of threadblocks a
  // rank, and past 64 ops a threadblock is cut into segments, which takes more.
  const Topology topology = shipped("a100-2x8-ib");
  const Schedule schedule =
      synthesize(topology, make_collective(CollectiveKind::kAllReduce, std::uint64_t{4} << 20, 8), {}).schedule;
  int fitting = 0;
  int screened_out = 0;
  for (std::uint32_t limit : {4u, 32u, 64u, 128u}) {
    INFO(limit << " threadblocks");
    MscclppOptions plan;
    plan.max_threadblocks = limit;
    bool written = true;
    try {
      schedule_to_mscclpp_plan(schedule, topology, plan);
    } catch (const InputError&) {
      written = false;
    }
    CHECK(mscclpp_plan_fits(schedule, topology, plan) == written);
    // The screen only ever rules out plans the writer cannot write.
    const bool suffice = mscclpp_threadblocks_suffice(schedule, topology, plan);
    if (!suffice) CHECK_FALSE(written);
    fitting += written ? 1 : 0;
    screened_out += suffice ? 0 : 1;
  }
  CHECK(fitting > 0);
  CHECK(fitting < 4);
  CHECK(screened_out > 0);
}

TEST_CASE("A plan whose ranks need more ops than their threadblocks hold is refused by the op count",
          "[mscclpp][synth]") {
  // Every send is at least one op and every receive two: counted before any layout, so a deep
  // pipeline no GPU could run is turned away at once, by name.
  const Topology topology = shipped("a100-2x8-ib");
  const Schedule schedule =
      synthesize(topology, make_collective(CollectiveKind::kAllReduce, std::uint64_t{4} << 20, 8), {}).schedule;
  std::vector<std::uint64_t> least(topology.npu_count(), 0);
  for (const Transfer& transfer : schedule.transfers()) {
    least[transfer.src] += 1;
    least[transfer.dst] += 2;
  }
  const std::uint64_t most = *std::max_element(least.begin(), least.end());
  MscclppOptions plan;
  plan.max_threadblocks = static_cast<std::uint32_t>((most - 1) / 64);  // 64 ops each: one short
  REQUIRE(plan.max_threadblocks >= 1);
  CHECK_FALSE(mscclpp_threadblocks_suffice(schedule, topology, plan));
  std::string reason;
  CHECK_FALSE(schedule_to_mscclpp_plan(schedule, topology, plan, reason));
  INFO(reason);
  CHECK(reason.rfind("--max-threadblocks: ", 0) == 0);
  CHECK(reason.find("needs at least " + std::to_string(most) + " ops") != std::string::npos);
  // Room for that many ops: the count lets it through to the layouts.
  plan.max_threadblocks = static_cast<std::uint32_t>((most + 63) / 64);
  reason.clear();
  schedule_to_mscclpp_plan(schedule, topology, plan, reason);
  CHECK(reason.find("needs at least") == std::string::npos);
  // The room the synthesizer cuts its trees to: about seven ops a transfer end.
  CHECK(mscclpp_transfer_room(MscclppOptions{}) == 108 * 64 / 7);
}

TEST_CASE("A plan's time from memory is the time of its written text", "[mscclpp][synth]") {
  // Candidates are ranked by mscclpp_plan_time_us, which skips printing and re-reading the plan:
  // it must be the time `tenet simulate` gives the file.
  for (const char* name : {"mesh-3x3", "a100-2x8-ib", "two-level-switch-8x4"}) {
    const Topology topology = shipped(name);
    if (!swept(topology.npu_count(), topology.name)) continue;
    for (CollectiveKind kind : kAllKinds) {
      const std::uint64_t size = std::uint64_t{16} << 20;
      const Schedule synthesized = synthesize(topology, make_collective(kind, size, 2), {}).schedule;
      const BaselineResult ring = generate_baseline("ring", topology, make_collective(kind, size));
      for (const Schedule* schedule : {&synthesized, &ring.schedule}) {
        INFO(name << " " << collective_name(kind) << " " << schedule->algorithm());
        const std::string text = schedule_to_mscclpp_plan(*schedule, topology, {});
        const double from_file =
            simulate(topology, mscclpp_plan_to_schedule(text, "plan", topology, schedule->size_bytes())).time_us;
        CHECK(mscclpp_plan_time_us(*schedule, topology, {}) == from_file);
        // And the text with its time, read back and executed once for both.
        const TimedMscclppPlan timed = schedule_to_timed_mscclpp_plan(*schedule, topology, {});
        CHECK(timed.text == text);
        CHECK(timed.time_us == from_file);
      }
    }
  }
}
