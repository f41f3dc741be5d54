#pragma once
// Lower bounds on collective time (DESIGN.md): no schedule on this topology can beat them.
//
// Ingress bound: every participant must receive (m-1)/m * n bytes for all-gather and
// reduce-scatter (twice that for all-reduce, Patarasuk & Yuan Lemma 1) through its incoming links,
// and the first of those bytes cannot arrive before its cheapest incoming alpha; so
// t >= min_in_alpha(v) + bytes / ingress_bandwidth(v) for every participant v.
// Latency bound: some participant's data must travel from the farthest other participant, so
// t >= the lowest-latency diameter. The bound is the larger of the two.

#include <cstdint>

#include "tenet/collective.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

struct LowerBound {
  double ingress_us = 0.0;
  double latency_us = 0.0;
  double total_us = 0.0;  ///< max(ingress_us, latency_us)
};

/// `diameter` is passed in so that callers bounding many sizes compute it once.
LowerBound lower_bound(const Topology& topology, const Collective& collective, const Diameter& diameter);

}  // namespace tenet
