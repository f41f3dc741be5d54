// SPDX-License-Identifier: MIT
#pragma once
// Cut lower bounds (DESIGN.md "Lower bound"): a set S of nodes that holds some members but not all
// lacks data that only the links into S can bring, so no schedule beats (bytes S lacks) / (bandwidth
// into S). The bound is the maximum over every such S, found exactly by max-flow; cut_bound.cpp
// proves each collective's version and explains the search.

#include <cstdint>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

/// Max-flow work a cut bound plans for, counted as (vertices + edges) of the flow network per
/// max-flow run: about 0.2 s on one core of the development machine, enough to try every member of
/// a 1,024-NPU torus or mesh. Members that find better sets are tried again, up to as much again.
constexpr std::uint64_t kCutWorkBudget = std::uint64_t{3} << 23;

struct CutBoundOptions {
  /// Past this much work (see kCutWorkBudget) the cut must hold one of an evenly spaced subset of
  /// the members: still a lower bound, possibly not the largest one.
  std::uint64_t work_budget = kCutWorkBudget;
};

/// The binding cut of a collective: `crossing_share` of the collective size must cross a cut of
/// `cut_bandwidth_GBps`, after at least `latency_us`. It does not depend on the size, so callers
/// bounding many sizes compute it once.
struct CutBound {
  double cut_bandwidth_GBps = 0.0;  ///< into S (out of S for reduce-scatter); 0: no cut (< 2 members)
  double crossing_share = 0.0;      ///< fraction of the collective size that must cross the cut
  /// Members outside the binding set, whose blocks cross (crossing_share = members_outside /
  /// members); 0 for all-reduce, where the whole vector crosses.
  std::uint32_t members_outside = 0;
  double latency_us = 0.0;  ///< the smallest link latency: no byte crosses any cut sooner
  bool exact = true;        ///< false: the maximum over part of the cuts only (see sinks)
  std::uint32_t members = 0;
  std::uint32_t sinks = 0;      ///< members tried inside S; exact needs all of them
  std::uint32_t max_flows = 0;  ///< max-flow runs spent

  /// crossing_share * size / cut bandwidth, microseconds: the pure bandwidth term (0 without a cut).
  double bandwidth_time_us(std::uint64_t size_bytes) const;
  /// latency_us + bandwidth_time_us (0 without a cut).
  double time_us(std::uint64_t size_bytes) const;
};

/// The largest cut bound of `kind` among `members` (ascending NPU ids, at least one; every other
/// node only forwards). Deterministic, whatever the thread count; max-flow runs are spread over
/// TBB's threads.
CutBound cut_bound(const Topology& topology, CollectiveKind kind, const std::vector<NodeId>& members,
                   const CutBoundOptions& options = {});

}  // namespace tenet
