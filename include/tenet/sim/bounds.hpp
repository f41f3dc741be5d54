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

/// `diameter` is passed in so that callers bounding many sizes compute it once. For a
/// sub-collective it must be the diameter among the members (compute_diameter with them).
LowerBound lower_bound(const Topology& topology, const Collective& collective, const Diameter& diameter);

/// A bound for schedules in the synthesizer's model, where every transfer carries one chunk
/// (size / (members * chunks_per_npu) bytes) and a link carries one transfer at a time, each
/// paying the link's alpha: participant v must receive R chunks (R = (m-1)k, twice that for
/// all-reduce), in-link l delivers one per tau_l = alpha_l + chunk / bandwidth_l, so v needs the
/// earliest T with sum over l of floor(T / tau_l) >= R. Tighter than lower_bound when chunks are
/// few and alphas matter; not a bound for baselines that send whole blocks at one alpha.
double chunked_lower_bound_us(const Topology& topology, const Collective& collective);

}  // namespace tenet
