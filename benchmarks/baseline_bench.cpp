// SPDX-License-Identifier: MIT
// Baseline benchmark (not a test): every baseline on one topology, with the wall time of each
// stage apart (generate, verify, simulate), so a slow `tenet compare` shows which stage to blame.
// The reference case is a 1,024-NPU torus at 1 GiB, where direct alone has 2.1 million
// routed flows.
//
//   tenet_baseline_bench [--general] TOPOLOGY.json [allreduce|allgather|reducescatter] [SIZE] [ALGORITHM...]
//
// Defaults: allreduce, 1GiB, every baseline. --general simulates without the symmetric quotient
// (SimOptions::use_symmetry), to time the general path on tori.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_clock.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

namespace {

using tenet::bench::Clock;
using tenet::bench::peak_memory_MiB;
using tenet::bench::seconds_since;

tenet::CollectiveKind parse_kind(const std::string& name) {
  if (name == "allreduce") return tenet::CollectiveKind::kAllReduce;
  if (name == "allgather") return tenet::CollectiveKind::kAllGather;
  if (name == "reducescatter") return tenet::CollectiveKind::kReduceScatter;
  throw tenet::InputError("", "COLLECTIVE", "expected allreduce, allgather or reducescatter, got '" + name + "'");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tenet;
  try {
    const bool general = argc > 1 && std::string(argv[1]) == "--general";
    if (general) {
      --argc;
      ++argv;
    }
    if (argc < 2) throw InputError("", "TOPOLOGY", "usage: tenet_baseline_bench TOPOLOGY.json [COLLECTIVE] [SIZE]");
    const Topology topology = load_topology(argv[1]);
    Collective collective;
    collective.kind = parse_kind(argc > 2 ? argv[2] : "allreduce");
    collective.size_bytes = argc > 3 ? parse_size(argv[3], "SIZE") : std::uint64_t{1} << 30;
    std::vector<std::string> algorithms(argv + std::min(argc, 4), argv + argc);
    if (algorithms.empty()) algorithms = baseline_names();

    std::printf("%-14s %10s %10s %10s %10s %14s %9s\n", "algorithm", "transfers", "generate_s", "verify_s",
                "simulate_s", "time_us", "peak_MiB");
    for (const std::string& algorithm : algorithms) {
      auto started = Clock::now();
      const BaselineResult baseline = generate_baseline(algorithm, topology, collective);
      const double generated = seconds_since(started);
      if (!baseline.applicable) {
        std::printf("%-14s n/a\n", algorithm.c_str());
        continue;
      }
      started = Clock::now();
      const bool verified = verify_schedule(topology, baseline.schedule).ok;
      const double checked = seconds_since(started);
      started = Clock::now();
      SimOptions options;
      options.record_times = true;  // as compare and baseline run it
      options.use_symmetry = !general;
      const SimResult result = simulate(topology, baseline.schedule, options);
      const double simulated = seconds_since(started);
      std::printf("%-14s %10zu %10.2f %10.2f %10.2f %14.3f %9.0f%s\n", algorithm.c_str(), baseline.schedule.size(),
                  generated, checked, simulated, result.time_us, peak_memory_MiB(), verified ? "" : "  NOT VERIFIED");
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
  return 0;
}
