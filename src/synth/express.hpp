// SPDX-License-Identifier: MIT
#pragma once
// Routed transfers (issue: synthesis at every size). On point-to-point networks a chunk can
// cross a multi-hop route as one transfer, cut through the NPUs between (each hop's alpha, but
// one serialization, not one per hop), as the direct algorithm sends. The synthesizer plans such
// transfers on an express topology: the members only, a virtual link from each member to every
// other, with the latency of the route the simulator takes and its narrowest link's bandwidth.
// The plan does not see routes sharing physical links, so an express candidate is scored by its
// replay on the real network, with its transfers routed (no planned link). Private to src/synth.

#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet::synth {

/// The express topology of `members` on `topology` (every member reachable from every other):
/// the same NPU ids, a link from every member to every other.
/// Without `through_members`, no virtual link for a pair whose route enters another member on the
/// way: that member can pass the data on, and the two routes would share its links.
Topology express_topology(const Topology& topology, const std::vector<NodeId>& members, bool through_members = true);

}  // namespace tenet::synth
