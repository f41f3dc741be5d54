// SPDX-License-Identifier: MIT
// The plan reader: hand-broken variants of the SPEC's example refused with specific messages,
// and plans timed against the schedules they were written from.

#include "../support/catch.hpp"

#include <cstdlib>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "../support/collectives.hpp"
#include "../support/sanitizers.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/mscclpp/mscclpp_plan.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"

using namespace tenet;
using namespace tenet::testing;
using tenet::testing::kAllKinds;
using tenet::testing::make_collective;
using tenet::testing::shipped;

namespace {

nlohmann::json example() {
  return nlohmann::json::parse(
      read_file(std::string(TENET_SOURCE_DIR) + "/tests/mscclpp/data/ring_allgather_3.plan.json"));
}

nlohmann::json& ops_of(nlohmann::json& plan, int rank) { return plan["gpus"][rank]["threadblocks"][0]["ops"]; }

std::string verdict_of(const nlohmann::json& plan) {
  const MscclppVerifyResult verdict = verify_mscclpp_plan(plan.dump(), "x.plan.json", nullptr);
  return verdict.ok ? "ok" : verdict.error;
}

}  // namespace

TEST_CASE("The SPEC's example verifies and hand-broken variants are refused by name", "[mscclpp][reader]") {
  CHECK(verdict_of(example()) == "ok");

  SECTION("a signal nobody waits for") {
    nlohmann::json plan = example();
    ops_of(plan, 0).push_back({{"name", "signal"}, {"channel_ids", {0}}, {"channel_type", "memory"}});
    CHECK(verdict_of(plan) ==
          "unpaired signal: rank 1's memory channel 1 (to rank 0) receives 3 signal(s) per launch but waits 2 time(s); "
          "the surplus leaks into the next launch");
  }
  SECTION("a wait with no signal") {
    nlohmann::json plan = example();
    ops_of(plan, 0).push_back({{"name", "wait"}, {"channel_ids", {1}}, {"channel_type", "memory"}});
    CHECK(verdict_of(plan) ==
          "deadlock: rank 0 threadblock 0 op 14 (/gpus/0/threadblocks/0/ops/14) waits forever in 'wait' on memory "
          "channel 1 "
          "(to rank 2) for a signal that never comes");
  }
  SECTION("a chunk reference past the buffer") {
    nlohmann::json plan = example();
    ops_of(plan, 0)[4]["dst_buff"][0]["index"] = 3;
    CHECK(verdict_of(plan) ==
          "/gpus/0/threadblocks/0/ops/4/dst_buff/0: chunks [3, 4) are outside rank 1's output (3 chunks)");
  }
  SECTION("a missing nop between receiving and forwarding") {
    nlohmann::json plan = example();
    ops_of(plan, 1).erase(8);
    CHECK(verdict_of(plan) ==
          "race: rank 1 threadblock 0 op 8 (/gpus/1/threadblocks/0/ops/8) reads rank 1's output chunk 0 while rank 0 "
          "threadblock 0 op 4 may still write it; nothing orders the two (a nop, a signal and wait, a semaphore)");
  }
  SECTION("more ops than a threadblock holds") {
    nlohmann::json plan = example();
    while (ops_of(plan, 0).size() < 65) ops_of(plan, 0).push_back({{"name", "nop"}});
    CHECK(verdict_of(plan) == "/gpus/0/threadblocks/0/ops: 65 ops; the executor allows 64 per threadblock");
  }
  SECTION("a put into the wrong peer") {
    nlohmann::json plan = example();
    plan["gpus"][0]["remote_buffers"][0]["rank"] = 2;
    CHECK(
        verdict_of(plan) ==
        "rank 0 threadblock 0 op 4 (/gpus/0/threadblocks/0/ops/4) writes into rank 2 before it knows that rank started "
        "this launch; the previous launch may still be using the buffer (SPEC 9.4: signal and wait once before the "
        "first write)");
  }
  SECTION("unpaired channels") {
    nlohmann::json plan = example();
    plan["gpus"][0]["channels"][0]["connected_to"].push_back(1);
    CHECK(verdict_of(plan) ==
          "/gpus/0/channels: 2 memory channel(s) to rank 1 but rank 1 declares 1 to rank 0; the k-th channel of a pair "
          "connects to the k-th of the other side");
  }
  SECTION("a port put on a channel to another rank") {
    nlohmann::json plan = example();
    for (int r = 0; r < 3; ++r) {
      plan["gpus"][r]["channels"][0]["channel_type"] = "port";
      plan["gpus"][r]["threadblocks"][0]["channels"][0]["channel_type"] = "port";
      plan["gpus"][r]["remote_buffers"][0]["access_channel_types"][0] = "port";
      plan["gpus"][r]["threadblocks"][0]["remote_buffer_refs"][0]["access_channel_type"] = "port";
      for (auto& op : ops_of(plan, r)) {
        if (op.contains("channel_type")) op["channel_type"] = "port";
        if (op["name"] == "rlxsignal") op["name"] = "signal";
        if (op["name"] == "rlxwait") op["name"] = "wait";
        if (op["name"] == "put") op["channel_ids"] = {0};
      }
    }
    CHECK(verdict_of(plan) == "ok");
    ops_of(plan, 0)[4]["channel_ids"] = {1};
    CHECK(
        verdict_of(plan) ==
        "/gpus/0/threadblocks/0/ops/4/channel_ids/0: port channel 1 goes to rank 2 but dst_buff 0 is rank 1's buffer");
  }
  SECTION("a reduction of a contribution twice") {
    nlohmann::json plan = example();
    plan["collective"] = "allreduce";
    CHECK(verdict_of(plan) ==
          "/gpus/0: input_chunks 1 and output_chunks 3 do not fit allreduce on 3 ranks (allgather: output = ranks x "
          "input; "
          "reducescatter: input = ranks x output; allreduce: equal)");
  }
}

TEST_CASE("Malformed plans are input errors naming the field", "[mscclpp][reader]") {
  nlohmann::json plan = example();
  plan["gpus"][1]["threadblocks"][0]["ops"][2]["channel_ids"] = "zero";
  try {
    verify_mscclpp_plan(plan.dump(), "x.plan.json", nullptr);
    FAIL("no error");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()) ==
          "error: x.plan.json: /gpus/1/threadblocks/0/ops/2/channel_ids: must be an array (got a string)");
  }
  CHECK_THROWS_WITH(verify_mscclpp_plan("{\"name\": ", "x.plan.json", nullptr),
                    Catch::Contains("error: x.plan.json: "));
  const Topology topology = shipped("switch-8");
  CHECK_THROWS_WITH(
      verify_mscclpp_plan(example().dump(), "x.plan.json", &topology),
      "error: x.plan.json: /gpus: the plan has 3 ranks but topology 'switch-8' has 8 NPUs; rank r runs on NPU r "
      "(--members names the NPUs of a plan of fewer ranks)");
  // With the NPUs its ranks run on, a plan of fewer ranks verifies, on those NPUs.
  const std::vector<NodeId> three = {5, 6, 7};
  CHECK(verify_mscclpp_plan(example().dump(), "x.plan.json", &topology, three).ok);
  const Schedule on_three = mscclpp_plan_to_schedule(example().dump(), "x.plan.json", topology, 3 << 20, three);
  CHECK(on_three.members() == three);
  for (const Transfer& transfer : on_three.transfers()) {
    CHECK(transfer.src >= 5);
    CHECK(transfer.dst >= 5);
  }
  CHECK_THROWS_WITH(verify_mscclpp_plan(example().dump(), "x.plan.json", &topology, {5, 6}),
                    "error: x.plan.json: /gpus: the plan has 3 ranks but --members names 2 NPUs; rank r runs on the "
                    "r-th of them");
}

TEST_CASE("Plans take the time of their schedules on point-to-point topologies", "[mscclpp][time]") {
  // Point-to-point topologies: the plan's transfers follow the same links as the schedule's.
  const bool print = std::getenv("TENET_PRINT_PLAN_TIMES") != nullptr;
  for (const char* name :
       {"mesh-3x3", "torus-4x4", "mesh-4x4-failed-7-9", "dgx1-2x8-bridge", "torus-8x4", "hypercube-6"}) {
    const Topology topology = shipped(name);
    if (!swept(topology.npu_count(), topology.name)) continue;
    for (CollectiveKind kind : kAllKinds) {
      for (const char* source : {"synth", "ring"}) {
        const Collective collective = make_collective(kind, 64u << 20, 2);
        const Schedule schedule = std::string(source) == "synth"
                                      ? synthesize(topology, collective, SynthOptions{}).schedule
                                      : generate_baseline(source, topology, collective).schedule;
        const double schedule_us = simulate(topology, schedule).time_us;
        const std::string text = schedule_to_mscclpp_plan(schedule, topology, MscclppOptions{});
        const double plan_us =
            simulate(topology, mscclpp_plan_to_schedule(text, "plan", topology, schedule.size_bytes())).time_us;
        const double ratio = plan_us / schedule_us;
        if (print) {
          std::cout << name << " " << source << " " << collective_name(kind) << ": schedule " << schedule_us
                    << " us, plan " << plan_us << " us, ratio " << ratio << "\n";
        }
        INFO(name << " " << source << " " << collective_name(kind) << ": schedule " << schedule_us << " us, plan "
                  << plan_us << " us");
        CHECK(ratio <= 1.05);
        // A baseline's steps wait for transfers the sender never sees (step-wide order on meshes
        // without a Hamiltonian ring); the plan keeps only what its ranks can observe and may be
        // faster. Synthesized schedules have no such dependencies.
        if (std::string(source) == "synth") CHECK(ratio >= 0.95);
      }
    }
  }
}
