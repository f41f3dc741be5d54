// SPDX-License-Identifier: MIT
#pragma once
// Lower bounds on collective time (DESIGN.md): no schedule on this topology can beat them.
//
// Ingress bound (an NPU's own links): for all-gather every participant must receive (m-1)/m * n
// bytes through its incoming links; for reduce-scatter send (m-1)/m * n through its outgoing ones
// (what it receives can be pre-reduced down to one chunk); for all-reduce take in and send out the
// whole n, and all NPUs' incoming links together carry at least 2(m-1) * n (Patarasuk & Yuan's
// 2(m-1)/m * n per member holds on average only: on uneven networks one NPU can take in less). The
// first byte pays the cheapest alpha of those links: t >= min_alpha + bytes / bandwidth.
// Cut bound: every node set holding some members but not all must take in, through its links,
// the data it lacks (cut_bound.hpp): the largest such bound, by max-flow.
// Groups bound (all-reduce): the ingress bound's sum term for groups of NPUs (a box and its
// NVSwitch, say) instead of single NPUs: k groups with members need 2(k-1) n bytes through the links
// into them (group_bound.hpp).
// Latency bound: some participant's data must travel from the farthest other participant, so
// t >= the lowest-latency diameter. The bound is the largest of the four; outputs name it.

#include <cstdint>
#include <string>

#include "tenet/collective.hpp"
#include "tenet/sim/cut_bound.hpp"
#include "tenet/sim/group_bound.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

/// The term of a lower bound that binds (is largest; on a tie the first listed here).
enum class BoundTerm { kIngress, kCut, kGroups, kLatency };

/// "ingress", "cut", "groups", "latency".
std::string bound_term_name(BoundTerm term);

struct LowerBound {
  double ingress_us = 0.0;
  double cut_us = 0.0;            ///< cut.latency_us + cut_bandwidth_us
  double cut_bandwidth_us = 0.0;  ///< the cut term without its latency: bytes / cut bandwidth
  double groups_us = 0.0;         ///< all-reduce only; 0 where no grouping of NPUs gives a bound
  double latency_us = 0.0;
  double total_us = 0.0;  ///< max(ingress_us, cut_us, groups_us, latency_us)
  BoundTerm binding = BoundTerm::kIngress;
  CutBound cut;       ///< the binding cut behind cut_us
  GroupBound groups;  ///< the binding grouping behind groups_us

  std::string binding_name() const { return bound_term_name(binding); }
};

/// `diameter` is passed in so that callers bounding many sizes compute it once. For a
/// sub-collective it must be the diameter among the members (compute_diameter with them).
LowerBound lower_bound(const Topology& topology, const Collective& collective, const Diameter& diameter);
/// The same with the cut computed beforehand (cut_bound() for this collective's kind and
/// participants), for callers bounding many sizes: the cut does not depend on the size.
LowerBound lower_bound(const Topology& topology, const Collective& collective, const Diameter& diameter,
                       const CutBound& cut);
/// cut_bound() for this collective's kind and participants.
CutBound collective_cut_bound(const Topology& topology, const Collective& collective);

/// "cut bound over 64 of 1024 members" when the cut bound is not exact, else "".
std::string cut_coverage_note(const CutBound& cut);

/// Not a lower bound on the network, only in the synthesizer's model (and wrong on switched
/// networks, whose unwound links it assumes): kept for tests of the synthesizer. For schedules in
/// the synthesizer's model, where every transfer carries one chunk
/// (size / (members * chunks_per_npu) bytes) and a link carries one transfer at a time, each
/// paying the link's alpha: participant v must receive R = (m-1)k chunks for all-gather, send as
/// many for reduce-scatter, and receive and send R = mk for all-reduce; a link l moves one per
/// tau_l = alpha_l + chunk / bandwidth_l, so v needs the earliest T with sum over l of
/// floor(T / tau_l) >= R. Tighter than lower_bound when chunks are
/// few and alphas matter; not a bound for baselines that send whole blocks at one alpha.
double chunked_lower_bound_us(const Topology& topology, const Collective& collective);

}  // namespace tenet
