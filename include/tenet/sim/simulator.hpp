// SPDX-License-Identifier: MIT
#pragma once
// The congestion-aware flow-level simulator (DESIGN.md, "Simulator", binding).
//
// A transfer starts when all its dependencies have finished; planned times are not used, except
// that transfers planned on the same link keep their planned order on it (a synthesized
// schedule's links are queues; see simulator.cpp). It
// follows its planned link, or else its route (Router: dimension order on intact tori and meshes,
// shortest path otherwise); it first pays the sum of the alphas on its route, then moves its
// bytes at its max-min fair share of the bandwidth of every link on the route, recomputed
// whenever a flow starts or ends. On an idle route a transfer takes exactly
// sum(alpha) + bytes / min(bandwidth), so a synthesized schedule replays to the synthesizer's own
// time. A reduce additionally costs gamma per byte at its destination after the bytes arrive.

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/routing.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

/// Slowest reduction tenet simulates: as slow per byte as the slowest link a topology file may
/// have (kMinBandwidth_GBps), which keeps every simulated time finite (topology.hpp).
constexpr double kMaxGamma_us_per_byte = 1e3;

/// The InputError (at --gamma) for a reduction cost outside 0..kMaxGamma_us_per_byte; nothing
/// inside.
void check_gamma(double gamma_us_per_byte);

struct SimOptions {
  double gamma_us_per_byte = 0.0;  ///< reduction cost, 0 to kMaxGamma_us_per_byte; 0 as in the papers
  RoutingPolicy routing = RoutingPolicy::kAuto;
  /// Keep every transfer's simulated start (when it was issued) and end in SimResult.
  bool record_times = false;
  /// Simulate one transfer per orbit when the network and the schedule are provably invariant
  /// under every translation of a torus (same results up to rounding, orders of magnitude
  /// faster). Off only to test that path against the general one.
  bool use_symmetry = true;
  /// For callers that only need to know whether the schedule beats this time (compare and batch
  /// ranking baselines): a simulation that would be long (many routed flows sharing links, no
  /// symmetry to fold them) is skipped when the schedule provably ends later than this. A
  /// 1,024-NPU direct all-reduce on a mesh would take hours; its busiest link alone shows it
  /// cannot win. Never skips a simulation that could come in under this time.
  double skip_slower_than_us = std::numeric_limits<double>::infinity();
  /// What makes a simulation long for skip_slower_than_us: the hops of the distinct multi-hop
  /// routes its transfers take, summed (the flows of many routes overlap on shared links, and
  /// every start or end refills their rates). A direct all-reduce, a route per pair of NPUs,
  /// simulates on mesh-12x12 (166,000 route hops) in 2.1 s, on mesh-16x16 (700,000) in 27 s,
  /// on mesh-32x32 (22 million) in hours; a ring on mesh-32x32, a route per link, in 2 s.
  double long_from_route_hops = 2e5;
  /// For callers that rank many schedules and can do without the costliest to simulate: the rate
  /// refills' work (routes met on links, counted as the simulation goes, so the same on every
  /// machine) after which the simulation stops, unfinished. 0: no limit. A switched network where
  /// hundreds of flows share the spines makes each refill long (a 64-NPU fat tree with four
  /// spines: 258,000 tree transfers in 23 s, against 127,000 on tree-4x8 in 3 s).
  std::uint64_t max_refill_work = 0;
  /// Stops the simulation once it provably ends after this time (SimResult::simulated false, its
  /// time_us that proof): the time reached plus, on some link, the bytes not yet started on it
  /// at its bandwidth (checked at the first refill and every few hundred after; not where the
  /// symmetric quotient runs, which is short). For a caller that only needs to know whether a
  /// schedule beats this time: the synthesizer's tree trials and switch-native variants.
  double stop_once_slower_than_us = std::numeric_limits<double>::infinity();
  /// Share of the transfers finished, at least 0 and below 1, reported on the calling thread each
  /// time another kProgressEvery have finished, and every kProgressRefills rate refills: for a
  /// progress line while a long simulation runs (a direct all-reduce on a 32x32 mesh, 2 million
  /// routed transfers, takes hours; its flows all start at once and few end before the last
  /// hour, so the refills are what shows it is moving). A plan whose transfers are each alone on
  /// their links replays in one quick pass and reports nothing.
  std::function<void(double done)> progress;
  static constexpr std::uint64_t kProgressEvery = 1 << 14;
  static constexpr std::uint64_t kProgressRefills = 4;
};

struct LinkLoad {
  double bytes = 0.0;    ///< carried over the whole collective
  double busy_us = 0.0;  ///< time with at least one flow moving bytes on it
};

struct SimResult {
  double time_us = 0.0;         ///< when the last transfer ends
  std::vector<LinkLoad> links;  ///< by LinkId of the simulated topology
  double max_link_bytes = 0.0;
  std::uint64_t transfers = 0;
  /// Transfers each simulated one stood for: the torus's NPU count when the symmetric quotient
  /// ran (SimOptions::use_symmetry), else 1.
  std::uint32_t symmetry_order = 1;
  std::vector<double> start_us;  ///< per transfer, with SimOptions::record_times
  std::vector<double> end_us;
  /// What its refills cost (SimOptions::max_refill_work): 0 where no flows shared links.
  std::uint64_t refill_work = 0;
  /// False when SimOptions::skip_slower_than_us skipped the simulation: time_us is then a lower
  /// bound on the schedule's time (above that limit), the time its busiest link needs for its
  /// bytes or its slowest transfer alone on its route, whichever is larger; links hold bytes
  /// only (busy_us 0) and no times are recorded. Also false when SimOptions::max_refill_work
  /// stopped it: time_us is then the time it had reached, also a lower bound, and no times are
  /// recorded; and when SimOptions::stop_once_slower_than_us did: time_us is then the lower bound
  /// that passed it.
  bool simulated = true;
};

/// Simulates a schedule on the topology it was made for. Throws InputError when a transfer's
/// planned link does not exist there or joins other NPUs. Deterministic.
SimResult simulate(const Topology& topology, const Schedule& schedule, const SimOptions& options = {});

}  // namespace tenet
