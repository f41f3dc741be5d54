// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include <atomic>

#include "../../src/synth/all_gather_engine.hpp"
#include "../support/collectives.hpp"
#include "tenet/common/units.hpp"

using namespace tenet;
using namespace tenet::testing;

TEST_CASE("a matching run stops once its clock and the other phase's together pass the time to beat", "[synth]") {
  // Branch and bound of an all-reduce's two phases, run side by side: the candidate ends no
  // earlier than the sum of both clocks.
  const Topology torus =
      generated({{"kind", "torus"}, {"dims", {4, 4}}, {"bandwidth_GBps", 50.0}, {"latency_us", 0.5}});
  synth::AllGatherProblem problem;
  problem.topology = &torus;
  problem.members = all_npus(torus);
  problem.chunk_bytes = 65536.0;
  const synth::AllGatherTrace whole = synth::run_all_gather(problem, SynthPolicy::kTenet, 1);
  REQUIRE_FALSE(whole.abandoned);
  REQUIRE(whole.finish > 0);

  // A time the run just meets: it is never passed, and the run's clock ends at its finish.
  std::atomic<synth::Tick> to_beat{whole.finish};
  std::atomic<synth::Tick> clock{0};
  std::atomic<synth::Tick> other_phase{0};
  const synth::GiveUp give_up{&to_beat, &clock, &other_phase, &to_beat};
  const synth::AllGatherTrace met = synth::run_all_gather(problem, SynthPolicy::kTenet, 1, {}, give_up);
  CHECK_FALSE(met.abandoned);
  CHECK(met.finish == whole.finish);
  CHECK(clock.load() == whole.finish);

  // The other phase one tick along: together they pass it, and the run stops.
  other_phase = 1;
  CHECK(synth::run_all_gather(problem, SynthPolicy::kTenet, 1, {}, give_up).abandoned);
  // Without a time for both, only the run's own clock counts.
  CHECK_FALSE(synth::run_all_gather(problem, SynthPolicy::kTenet, 1, {}, {&to_beat, &clock, &other_phase}).abandoned);

  // Chunk by chunk no run ends before its members' in-links can bring what they lack: here 15
  // chunks over 4 in-links, 4 chunk times of 0.5 us + 64 KiB at 50 GB/s (this run takes 5).
  // Below that floor, a run stops before it matches anything, its clock there.
  const synth::Tick chunk_time = 1810720;
  REQUIRE(whole.finish >= 4 * chunk_time);
  CHECK(synth::chunk_by_chunk_floor(problem, SynthPolicy::kTenet) == 4 * chunk_time);
  problem.max_chunks_per_transfer = 8;
  CHECK(synth::chunk_by_chunk_floor(problem, SynthPolicy::kTenet) == 0);  // aggregated: none
  problem.max_chunks_per_transfer = 1;
  to_beat = 4 * chunk_time - 1;
  synth::GiveUp own_clock_only{&to_beat, &clock};
  own_clock_only.floor = 4 * chunk_time;
  CHECK(synth::run_all_gather(problem, SynthPolicy::kTenet, 1, {}, own_clock_only).abandoned);
  CHECK(clock.load() == 4 * chunk_time);
}

TEST_CASE("a collective whose plan would not fit in picoseconds is refused by name and not planned wrong", "[synth]") {
  // 1 PiB over three NPUs at 1e-6 GB/s: one block takes 3.75e11 s on a link. The ticks overflowed
  // and the plan read 0.002 ns (which the verifier then rejected).
  const Topology ring = parse_topology(R"({"npus": 3, "defaults": {"bandwidth_GBps": 1e-6},
                                     "links": [{"src": 0, "dst": 1}, {"src": 1, "dst": 2}, {"src": 2, "dst": 0}]})",
                                       "slow.json");
  SynthOptions options;
  options.auto_chunks = true;
  const Collective collective = make_collective(CollectiveKind::kAllReduce, kMaxSizeBytes);
  CHECK_THROWS_AS(synthesize(ring, collective, options), PlanTooLong);
  CHECK_THROWS_WITH(synthesize(ring, collective, options), Catch::Contains("longer than tenet plans"));
  // A transfer up to 2^56 ps (20 hours), a plan up to 2^61 ps.
  CHECK_THROWS_AS(synth::transfer_ticks(7.3e10), synth::PlanTooLong);
  CHECK(synth::transfer_ticks(7.2e10) == 72'000'000'000'000'000);
  // Where whole blocks do not fit, smaller chunks can: 1 TiB over two NPUs at 1 MB/s, 20 hours
  // a transfer at most, plans at 8 chunks per NPU (64 GiB, 19.1 hours each) on its bound.
  const Topology pair = parse_topology(
      R"({"npus": 2, "defaults": {"bandwidth_GBps": 1e-3}, "links": [{"src": 0, "dst": 1}]})", "pair.json");
  const SynthResult fitted =
      synthesize(pair, make_collective(CollectiveKind::kAllGather, std::uint64_t{1} << 40), options);
  CHECK(fitted.schedule.chunks_per_member() == 8);
  CHECK(fitted.time_us == Approx(549755813888.0 / 1e-3 / 1e3 + 8 * 0.5).epsilon(1e-9));
  // A plan past 26 days: a 64-NPU ring at 1 MB/s, 8 TiB in 64 chunks per NPU (36 min each).
  const Topology slow_ring = generated({{"kind", "ring"}, {"npus", 64}, {"bandwidth_GBps", 1e-3}});
  SynthOptions fixed;
  const Collective long_one = make_collective(CollectiveKind::kAllGather, std::uint64_t{8} << 40, 64);
  CHECK_THROWS_WITH(synthesize(slow_ring, long_one, fixed), Catch::Contains("passes 26 days"));
}
