// SPDX-License-Identifier: MIT
// Skipping long simulations of schedules that provably cannot beat a given time
// (SimOptions::skip_slower_than_us): what is skipped must be slower, what could be faster must be
// simulated, and the time reported for a skipped schedule must be a lower bound of its own time.

#include "../support/catch.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "../support/collectives.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/evaluate/evaluate.hpp"
#include "tenet/io/result.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/transforms.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

/// Every simulation counts as long, so the rule itself is what is tested, on small networks.
SimOptions skipping_above(double limit_us) {
  SimOptions options;
  options.skip_slower_than_us = limit_us;
  options.long_from_route_hops = 0.0;
  return options;
}

}  // namespace

TEST_CASE("a skipped simulation reports a lower bound of the schedule's own time, never above it") {
  // Routed baselines on networks without translation symmetry: meshes, a torus with a failed
  // link, a switched fat tree.
  const Topology failed_torus = apply_failures(shipped("torus-4x4"), {{}, {{0, 1}}}, "", "");
  const std::pair<Topology, const char*> networks[] = {{shipped("mesh-6x6"), "mesh-6x6"},
                                                       {failed_torus, "torus-4x4 without 0->1"},
                                                       {shipped("fat-tree-8x4"), "fat-tree"}};
  for (const auto& [topology, name] : networks) {
    for (const char* algorithm : {"direct", "rhd", "circulant", "swing"}) {
      for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kAllReduce}) {
        const BaselineResult baseline = generate_baseline(algorithm, topology, make_collective(kind, 1 << 20));
        if (!baseline.applicable) continue;
        INFO(name << " " << algorithm << " " << collective_name(kind));
        const SimResult simulated = simulate(topology, baseline.schedule);
        REQUIRE(simulated.simulated);
        // Any limit below the floor skips; the floor is what it reports.
        const SimResult skipped = simulate(topology, baseline.schedule, skipping_above(0.0));
        REQUIRE_FALSE(skipped.simulated);
        CHECK(skipped.time_us > 0.0);
        CHECK(skipped.time_us <= simulated.time_us * (1.0 + 1e-12));
        REQUIRE(skipped.links.size() == simulated.links.size());
        for (std::size_t link = 0; link < simulated.links.size(); ++link)
          CHECK(skipped.links[link].bytes == Approx(simulated.links[link].bytes).epsilon(1e-12));
        CHECK(skipped.start_us.empty());
        // A limit the schedule may beat is simulated, with the same result as without a limit.
        const SimResult kept = simulate(topology, baseline.schedule, skipping_above(simulated.time_us * 1.01));
        CHECK(kept.simulated);
        CHECK(kept.time_us == exactly(simulated.time_us));
      }
    }
  }
}

TEST_CASE("only long simulations are skipped, and never symmetric ones or plans alone on their links") {
  const Topology mesh = shipped("mesh-6x6");
  const BaselineResult direct = generate_baseline("direct", mesh, make_collective(CollectiveKind::kAllReduce, 1 << 20));
  SimOptions limit;
  limit.skip_slower_than_us = 0.0;
  // 36 x 35 pairs of a few hops each: far below the default's 200,000 route hops.
  CHECK(simulate(mesh, direct.schedule, limit).simulated);
  limit.long_from_route_hops = 1e3;
  CHECK_FALSE(simulate(mesh, direct.schedule, limit).simulated);

  // A torus's direct all-reduce folds to one transfer per orbit: cheap, always simulated.
  const Topology torus = shipped("torus-4x4");
  const BaselineResult symmetric =
      generate_baseline("direct", torus, make_collective(CollectiveKind::kAllReduce, 1 << 20));
  const SimResult folded = simulate(torus, symmetric.schedule, skipping_above(0.0));
  CHECK(folded.simulated);
  CHECK(folded.symmetry_order == 16);

  // A ring on its planned links replays in one pass: nothing to skip.
  const Topology duplex = duplex_ring(8);
  const BaselineResult ring = generate_baseline("ring", duplex, make_collective(CollectiveKind::kAllGather, 1 << 20));
  CHECK(simulate(duplex, ring.schedule, skipping_above(0.0)).simulated);
}

TEST_CASE("evaluate_baseline reports a skipped baseline as not timed, with its floor, and JSON without a time") {
  const Topology mesh = shipped("mesh-6x6");
  const Collective collective = make_collective(CollectiveKind::kAllReduce, 1 << 20);
  const LowerBound bound = lower_bound(mesh, collective, compute_diameter(mesh, {}));
  const Evaluation timed = evaluate_baseline("direct", mesh, collective, bound);
  REQUIRE(timed.result.timed());
  // The default counts this run as short: a limit far below its time still simulates it.
  const Evaluation short_run = evaluate_baseline("direct", mesh, collective, bound, "--algorithm", 1.0);
  CHECK(short_run.result.timed());
  CHECK(short_run.result.time_us == exactly(timed.result.time_us));

  // mesh-16x16's direct all-gather: 65,280 routes, 700,000 hops. Its busiest link
  // needs more than 1 us, so a 1 us limit skips it, without simulating.
  const Topology large = generated({{"kind", "mesh"}, {"dims", {16, 16}}});
  const Collective gather = make_collective(CollectiveKind::kAllGather, 1 << 20);
  const LowerBound large_bound = lower_bound(large, gather, compute_diameter(large, {}));
  const Evaluation skipped = evaluate_baseline("direct", large, gather, large_bound, "--algorithm", 1.0);
  REQUIRE_FALSE(skipped.result.timed());
  CHECK(skipped.result.verified);
  REQUIRE(skipped.result.time_at_least_us);
  CHECK(*skipped.result.time_at_least_us > 1.0);
  const nlohmann::json object = result_to_json(skipped.result);
  CHECK(object["time_us"].is_null());
  CHECK(object["algbw_GBps"].is_null());
  CHECK(object["simulated"] == false);
  CHECK_FALSE(object.contains("time_over_lower_bound"));
  CHECK(object["not_simulated"].get<std::string>().find("not simulated") != std::string::npos);
}

namespace {

/// Runs `check(topology, schedule, timed options, whole timed run)` on direct all-reduces of 1 MiB:
/// routed flows that share links, so every start and end refills rates and the work adds up.
template <class Check>
void on_direct_all_reduces(const Check& check) {
  const std::pair<Topology, const char*> networks[] = {{shipped("mesh-6x6"), "mesh-6x6"},
                                                       {shipped("fat-tree-8x4"), "fat-tree"}};
  for (const auto& [topology, name] : networks) {
    const BaselineResult direct =
        generate_baseline("direct", topology, make_collective(CollectiveKind::kAllReduce, 1 << 20));
    REQUIRE(direct.applicable);
    INFO(name);
    SimOptions timed;
    timed.record_times = true;
    const SimResult whole = simulate(topology, direct.schedule, timed);
    REQUIRE(whole.simulated);
    check(topology, direct.schedule, timed, whole);
  }
}

}  // namespace

TEST_CASE("a simulation stopped by its refill work reports the time it reached, a lower bound") {
  on_direct_all_reduces(
      [](const Topology& topology, const Schedule& schedule, const SimOptions& timed, const SimResult& whole) {
        // A limit it never reaches changes nothing.
        SimOptions roomy = timed;
        roomy.max_refill_work = std::uint64_t{1} << 62;
        const SimResult unlimited = simulate(topology, schedule, roomy);
        CHECK(unlimited.simulated);
        CHECK(unlimited.time_us == whole.time_us);
        CHECK(unlimited.end_us == whole.end_us);
        // A small one stops it part way: no times, and a time reached that the whole run passes.
        SimOptions tight = timed;
        tight.max_refill_work = 1000;
        const SimResult stopped = simulate(topology, schedule, tight);
        CHECK_FALSE(stopped.simulated);
        CHECK(stopped.start_us.empty());
        CHECK(stopped.end_us.empty());
        CHECK(stopped.time_us > 0.0);
        CHECK(stopped.time_us < whole.time_us);
      });
}

TEST_CASE("a simulation stopped once it provably ends past a time reports that proof, a lower bound") {
  on_direct_all_reduces(
      [](const Topology& topology, const Schedule& schedule, const SimOptions& timed, const SimResult& whole) {
        // A time it beats changes nothing.
        SimOptions above = timed;
        above.stop_once_slower_than_us = whole.time_us * (1 + 1e-9);
        const SimResult beaten = simulate(topology, schedule, above);
        CHECK(beaten.simulated);
        CHECK(beaten.time_us == whole.time_us);
        CHECK(beaten.end_us == whole.end_us);
        // Half of it: stopped part way, with a proof above the limit and never above the whole run.
        SimOptions half = timed;
        half.stop_once_slower_than_us = whole.time_us * 0.5;
        const SimResult stopped = simulate(topology, schedule, half);
        CHECK_FALSE(stopped.simulated);
        CHECK(stopped.end_us.empty());
        CHECK(stopped.time_us > whole.time_us * 0.5);
        CHECK(stopped.time_us <= whole.time_us);
        CHECK(stopped.refill_work < whole.refill_work);
      });
}
