// SPDX-License-Identifier: MIT
// Simulator benchmark (not a test): a ring all-reduce on a large ring, the reference case
// (4,096 NPUs, 2 * 4095 * 4096 = 33.5 million single-hop transfers).
//
//   tenet_sim_bench [NPUS] [SIZE]       defaults: 4096 1GiB
//
// Builds the standard ring schedule (p-1 reduce-scatter steps, then p-1 all-gather steps; each
// transfer waits for the chunk it forwards and for the previous send on its link), simulates it
// twice (transfers on planned links, then routed by the simulator), and prints the wall time of
// each simulate() call next to the closed form 2(p-1)(alpha + n/(p bw)).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "bench_clock.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/generators.hpp"

namespace {

using tenet::bench::Clock;
using tenet::bench::peak_memory_MiB;
using tenet::bench::seconds_since;

/// Transfer (step, i) is NPU i's send to i+1 in step `step`; ids run step by step.
tenet::Schedule ring_all_reduce(const tenet::Topology& topology, std::uint32_t p, std::uint64_t size) {
  using namespace tenet;
  std::vector<NodeId> members(p);
  for (NodeId i = 0; i < p; ++i) members[i] = i;
  Schedule schedule(CollectiveKind::kAllReduce, size, std::move(members), 1, "ring");
  const std::uint64_t steps = 2 * (std::uint64_t{p} - 1);
  const std::uint64_t count = steps * p;
  std::vector<std::uint32_t> dep_counts(count, 2);
  std::fill(dep_counts.begin(), dep_counts.begin() + p, 0);
  Schedule::Extension room = schedule.extend(count, dep_counts);
  std::vector<LinkId> forward(p);
  for (NodeId i = 0; i < p; ++i) forward[i] = topology.find_link(i, (i + 1) % p);
  const Link& link = topology.link(forward[0]);
  const double hop = link_time_us(schedule.chunk_bytes(), link.latency_us, link.bandwidth_GBps);
  std::vector<double> times(steps + 1);
  for (std::uint64_t step = 0; step <= steps; ++step) times[step] = static_cast<double>(step) * hop;
  const std::uint32_t time_base = schedule.add_times(times);
  for (std::uint64_t step = 0; step < steps; ++step) {
    const bool reducing = step < p - 1;
    const std::uint64_t s = reducing ? step : step - (p - 1);
    for (NodeId i = 0; i < p; ++i) {
      const std::uint64_t id = step * p + i;
      room.src[id] = i;
      room.dst[id] = (i + 1) % p;
      room.link[id] = forward[i];
      room.kind[id] = reducing ? TransferKind::kReduce : TransferKind::kCopy;
      *schedule.chunk_slot(static_cast<TransferId>(id)) =
          static_cast<ChunkId>(reducing ? (i + 2 * p - s - 1) % p : (i + p - s) % p);
      if (step > 0) {
        TransferId* deps = schedule.dep_slots(static_cast<TransferId>(id));
        deps[0] = static_cast<TransferId>((step - 1) * p + (i + p - 1) % p);  // the chunk it forwards
        deps[1] = static_cast<TransferId>((step - 1) * p + i);                // its link's previous send
      }
      room.start_at[id] = time_base + static_cast<std::uint32_t>(step);
      room.end_at[id] = time_base + static_cast<std::uint32_t>(step + 1);
    }
  }
  return schedule;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tenet;
  try {
    const std::uint32_t p = argc > 1 ? static_cast<std::uint32_t>(std::stoul(argv[1])) : 4096;
    const std::uint64_t size = argc > 2 ? parse_size(argv[2], "SIZE") : std::uint64_t{1} << 30;
    if (p < 2) throw InputError("", "NPUS", "a ring needs at least 2 NPUs");
    const Topology topology = generate_topology({{"kind", "ring"}, {"npus", p}}, LinkDefaults{}, "benchmark", "");

    auto started = Clock::now();
    Schedule schedule = ring_all_reduce(topology, p, size);
    std::printf("ring all-reduce of %s on %u NPUs: %zu transfers, built in %.2f s\n", format_size(size).c_str(), p,
                schedule.size(), seconds_since(started));
    const Link& link = topology.link(0);
    const double closed = 2.0 * (p - 1) * link_time_us(schedule.chunk_bytes(), link.latency_us, link.bandwidth_GBps);

    std::printf("%-14s %12s %14s %14s %12s %10s\n", "transfers", "simulate_s", "transfers/s", "time_us", "/closed-1",
                "peak_MiB");
    for (const char* variant : {"planned links", "routed"}) {
      if (std::string(variant) == "routed") schedule.forget_links();
      started = Clock::now();
      const SimResult result = simulate(topology, schedule);
      const double elapsed = seconds_since(started);
      std::printf("%-14s %12.2f %14.0f %14.3f %12.1e %10.0f\n", variant, elapsed,
                  static_cast<double>(result.transfers) / elapsed, result.time_us, result.time_us / closed - 1.0,
                  peak_memory_MiB());
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
  return 0;
}
