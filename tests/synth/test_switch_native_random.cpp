// SPDX-License-Identifier: MIT
// Property tests over seeded random switched networks: NPUs on one or two of a few switches, with
// ports, switch-to-switch links and some direct NPU-to-NPU links of mixed bandwidths.

#include "../support/catch.hpp"

#include <cstdint>
#include <string>

#include "../support/collectives.hpp"
#include "../support/random_networks.hpp"
#include "../support/sanitizers.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

/// A quarter as many under the sanitizers, which run every synthesis about ten times slower (the
/// suite's time budget); the Release run takes all.
constexpr int kNetworks = kSanitized ? 6 : 24;

}  // namespace

TEST_CASE("random switched networks: synthesized schedules verify, replay as timed, beat no bound",
          "[synth][property]") {
  for (std::uint32_t seed = 1; seed <= kNetworks; ++seed) {
    const Topology topology = parse_topology(random_switched_network(seed), "random.json");
    const Diameter diameter = compute_diameter(topology);
    for (CollectiveKind kind : kAllKinds) {
      const Collective collective = make_collective(kind, 16 << 20, 1 + seed % 3);
      INFO(topology.name << " " << collective_name(kind));
      const SynthResult result = synthesize(topology, collective, {});
      const VerifyResult verdict = verify_schedule(topology, result.schedule);
      INFO(verdict.error);
      REQUIRE(verdict.ok);
      // The reported time is the replay on the network, of a schedule the runtime can hold to.
      CHECK(simulate(topology, result.schedule).time_us == Approx(result.time_us).epsilon(1e-9));
      CHECK(unenforceable_dependency(result.schedule) == "");
      const LowerBound bound = lower_bound(topology, collective, diameter);
      CHECK(result.time_us >= bound.total_us * (1 - 1e-9));
      for (const char* name : {"ring", "direct"}) {
        const BaselineResult baseline = generate_baseline(name, topology, collective);
        if (baseline.applicable) CHECK(simulate(topology, baseline.schedule).time_us >= bound.total_us * (1 - 1e-9));
      }
    }
  }
}

TEST_CASE("random switched networks: 1 and 2 threads give the same schedule", "[synth][property][threads]") {
  for (std::uint32_t seed = 1; seed <= kNetworks; seed += 3) {
    const Topology topology = parse_topology(random_switched_network(seed), "random.json");
    SynthOptions options;
    options.auto_chunks = true;
    auto render = [&](int threads) {
      ThreadLimit limit(static_cast<std::size_t>(threads));
      return schedule_to_text(
          synthesize(topology, make_collective(CollectiveKind::kAllReduce, 16 << 20), options).schedule, topology);
    };
    INFO(topology.name);
    CHECK(render(1) == render(2));
  }
}

TEST_CASE("random switched networks where alphas matter: aggregated switch-native schedules replay as timed",
          "[synth][property]") {
  // 256 KiB: alphas of a few microseconds against chunks of a few, so transfers carry several
  // chunks each; the schedule carries its time on the real switches and only orders the runtime
  // can keep.
  std::uint32_t aggregated = 0;
  for (std::uint32_t seed = 1; seed <= kNetworks; seed += 2) {
    const Topology topology = parse_topology(random_switched_network(seed), "random.json");
    for (CollectiveKind kind : kAllKinds) {
      INFO(topology.name << " " << collective_name(kind));
      SynthOptions options;
      options.switches = SwitchPlanning::kNative;
      const SynthResult result = synthesize(topology, make_collective(kind, 256 << 10), options);
      const VerifyResult verdict = verify_schedule(topology, result.schedule);
      INFO(verdict.error);
      REQUIRE(verdict.ok);
      CHECK(simulate(topology, result.schedule).time_us == Approx(result.time_us).epsilon(1e-9));
      CHECK(unenforceable_dependency(result.schedule) == "");
      if (result.switch_native && result.aggregated()) ++aggregated;
    }
  }
  CHECK(aggregated > 0);
}
