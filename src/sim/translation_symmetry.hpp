// SPDX-License-Identifier: MIT
#pragma once
// The symmetric quotient of a simulation on a torus (internal to the simulator).
//
// A translation g of a torus moves NPU u to u + g (coordinates added modulo the dimensions) and
// link u -> v to u + g -> v + g. When every translation maps the network onto itself (each link's
// image exists with the same bandwidth and latency) and the schedule onto itself (a bijection of
// transfers keeping kind, size and dependency lists, and mapping each route onto the route of the
// image), the simulation commutes with every translation: max-min fair rates are unique, so flows
// that are translates of each other get equal rates at every instant, and translated transfers
// start and end at the same times. The simulator then runs one transfer per orbit (the orbit's
// member leaving NPU 0) on a network of link orbits: the N translates of a transfer put, on each
// link of an orbit, as many flows as the representative's route has hops in that orbit, so a
// quotient flow takes its rate on a link orbit once per such hop. That is progressive filling of
// the whole network, exactly, with each orbit's N equal steps done as one. A direct all-reduce on
// a 32x32 torus becomes 2,046 transfers on 4 link orbits instead of 2.1 million on 4,096 links.
//
// Nothing is assumed about the producer or the router: the bijection is proposed by order (the
// k-th transfer from s to d maps to the k-th from s + g to d + g, in id order) and then checked
// for each unit translation, which generate all others. Anything that does not check out, and
// any transfer planned on a link (those keep planned orders the quotient does not model), leaves
// the simulation to the general path. Cost: O(transfers log transfers + dependency lists + route
// hops), the dependency lists shared by runs of transfers (add_sharing_deps) walked once.

#include <cstdint>
#include <optional>
#include <vector>

#include "route_paths.hpp"
#include "route_table.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::sim {

struct SymmetricQuotient {
  /// Quotient transfer q stands for the orbit of transfers[q] (its member leaving NPU 0). Orbits
  /// are ordered by their smallest transfer id, so every dependency comes before its dependent.
  std::vector<TransferId> transfers;
  /// Per transfer of the schedule: its orbit's quotient transfer.
  std::vector<std::uint32_t> orbit_of_transfer;
  /// Per quotient transfer, the quotient transfers it waits for (with repeats), as CSR.
  std::vector<std::uint64_t> dep_offsets;
  std::vector<std::uint32_t> deps;
  /// Route q is quotient transfer q's route, as link orbits.
  RoutePaths routes;
  std::vector<double> alpha_us;  ///< per quotient transfer: the sum of its route's latencies
  /// Per link of the topology: its orbit; and per orbit, the capacity of each of its links.
  std::vector<std::uint32_t> orbit_of_link;
  std::vector<double> orbit_capacity;  ///< bytes per microsecond
};

/// The quotient when the simulation of `schedule` on `topology` provably commutes with every
/// translation of the torus (see above); nothing otherwise. `routes` must be built for them.
std::optional<SymmetricQuotient> find_translation_symmetry(const Topology& topology, const Schedule& schedule,
                                                           const RouteTable& routes);

}  // namespace tenet::sim
