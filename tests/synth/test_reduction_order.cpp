// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include <algorithm>

#include "../../src/synth/switch_native.hpp"
#include "../support/collectives.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

bool depends_on(const Schedule& schedule, TransferId id, TransferId before) {
  const std::span<const TransferId> deps = schedule.deps_of(schedule.transfer(id));
  return std::find(deps.begin(), deps.end(), before) != deps.end();
}

}  // namespace

TEST_CASE("reductions planned on a virtual link keep its order; copies and links are left free", "[synth]") {
  // Two members' reductions on virtual link 5 (0 -> 1), planned one after the other with no data
  // between them, and a copy on the same link; one reduction on link 7.
  Schedule plan(CollectiveKind::kAllReduce, 4000, {0, 1, 2}, 1, "synth");
  const ChunkId zero = 0;
  const ChunkId two = 2;
  plan.add(0, 1, TransferKind::kReduce, {&two, 1}, {}, 0.0, 1.0, 5);
  plan.add(2, 1, TransferKind::kReduce, {&zero, 1}, {}, 0.0, 1.0, 7);
  plan.add(0, 1, TransferKind::kReduce, {&zero, 1}, {}, 1.0, 2.0, 5);
  plan.add(0, 1, TransferKind::kCopy, {&two, 1}, {}, 2.0, 3.0, 5);
  plan.add(0, 1, TransferKind::kCopy, {&zero, 1}, {}, 3.0, 4.0, 5);
  const Schedule ordered = synth::with_reduction_order(plan);
  REQUIRE(ordered.size() == plan.size());
  CHECK(depends_on(ordered, 2, 0));
  CHECK(ordered.deps_of(ordered.transfer(1)).empty());
  CHECK(ordered.deps_of(ordered.transfer(3)).empty());
  CHECK(ordered.deps_of(ordered.transfer(4)).empty());
  for (TransferId id = 0; id < ordered.size(); ++id) {
    CHECK(ordered.transfer(id).link == kNoLink);
    CHECK(ordered.transfer(id).kind == plan.transfer(id).kind);
    CHECK(ordered.start_us(id) == plan.start_us(id));
  }
}

TEST_CASE("a reduce-scatter on unwound switches runs as fast as its mirror all-gather", "[synth]") {
  // Left free, the reductions that start the reduce-scatter (each member's own pieces: nothing
  // feeds them) all start at once and take the ports from the critical path: 194.9 us against
  // the all-gather's 149.3. Keeping each unwound link's order of reductions gives 149.8.
  const Topology topology = shipped("ring-fc-switch-2x4x2");
  SynthOptions unwind;
  unwind.switches = SwitchPlanning::kUnwind;
  unwind.auto_chunks = true;
  const SynthResult gather = synthesize(topology, make_collective(CollectiveKind::kAllGather, 64 << 20), unwind);
  const SynthResult reduce = synthesize(topology, make_collective(CollectiveKind::kReduceScatter, 64 << 20), unwind);
  REQUIRE(reduce.unwind_degree != 0);
  const VerifyResult verdict = verify_schedule(topology, reduce.schedule);
  INFO(verdict.error);
  REQUIRE(verdict.ok);
  CHECK(unenforceable_dependency(reduce.schedule) == "");
  CHECK(reduce.schedule.planned_time_us() == Approx(reduce.time_us).epsilon(1e-9));
  CHECK(simulate(topology, reduce.schedule).time_us == Approx(reduce.time_us).epsilon(1e-6));
  CHECK(reduce.time_us < 1.01 * gather.time_us);
  // Some reduction waits for one that is not its data: the link order.
  bool ordered = false;
  for (TransferId id = 0; id < reduce.schedule.size() && !ordered; ++id) {
    const Transfer transfer = reduce.schedule.transfer(id);
    for (TransferId dep : reduce.schedule.deps_of(transfer)) {
      const Transfer before = reduce.schedule.transfer(dep);
      ordered = ordered || (before.src == transfer.src && before.dst == transfer.dst);
    }
  }
  CHECK(ordered);
}
