// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include <stdexcept>

#include "../../src/msccl/writer.hpp"
#include "../support/collectives.hpp"

using namespace tenet;
using namespace tenet::msccl_detail;
using namespace tenet::testing;

TEST_CASE("a program's time is remembered until anything the runtime reads of it changes", "[msccl]") {
  // The memo is the process's: values no other test's program has (12345 chunks a loop).
  MscclProgram program;
  program.coll = "allgather";
  program.ngpus = 2;
  program.nchunksperloop = 12345;
  program.nchannels = 1;
  MscclGpu gpu;
  MscclThreadblock tb;
  tb.send = 1;
  MscclStep step;
  step.type = MscclStepType::kSend;
  step.srcoff = 0;
  step.dstoff = 0;
  step.cnt = 1;
  tb.steps.push_back(step);
  gpu.threadblocks.push_back(tb);
  program.gpus.push_back(gpu);
  const Topology ring = generated({{"kind", "ring"}, {"npus", 4}});
  const std::vector<NodeId> members = {0, 1};
  int computed = 0;
  const auto time_of = [&](const MscclProgram& p, std::uint64_t size, const std::vector<NodeId>& on,
                           const Topology& t) {
    return remembered_runtime_time_us(p, size, on, t, [&] { return 100.0 + ++computed; });
  };
  CHECK(time_of(program, 1024, members, ring) == 101.0);
  CHECK(time_of(program, 1024, members, ring) == 101.0);
  CHECK(computed == 1);
  // Names and lines are not what the runtime runs.
  MscclProgram renamed = program;
  renamed.name = "other";
  renamed.gpus[0].threadblocks[0].steps[0].line = 77;
  CHECK(time_of(renamed, 1024, members, ring) == 101.0);
  CHECK(computed == 1);
  // A step's count, the size, the ranks' NPUs, the topology: each is another time.
  MscclProgram more = program;
  more.gpus[0].threadblocks[0].steps[0].cnt = 2;
  CHECK(time_of(more, 1024, members, ring) == 102.0);
  CHECK(time_of(program, 2048, members, ring) == 103.0);
  CHECK(time_of(program, 1024, {2, 3}, ring) == 104.0);
  const Topology faster = generated({{"kind", "ring"}, {"npus", 4}, {"bandwidth_GBps", 200.0}});
  CHECK(time_of(program, 1024, members, faster) == 105.0);
  CHECK(computed == 5);
  // A program that fails is not remembered.
  MscclProgram failing = program;
  failing.nchannels = 3;
  const auto fail = [&] {
    return remembered_runtime_time_us(failing, 1024, members, ring,
                                      []() -> double { throw std::runtime_error("deadlock"); });
  };
  CHECK_THROWS(fail());
  CHECK(time_of(failing, 1024, members, ring) == 106.0);
}
