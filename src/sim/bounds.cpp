// SPDX-License-Identifier: MIT
#include "tenet/sim/bounds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tenet/common/units.hpp"

namespace tenet {

std::string bound_term_name(BoundTerm term) {
  switch (term) {
    case BoundTerm::kIngress: return "ingress";
    case BoundTerm::kCut: return "cut";
    case BoundTerm::kLatency: return "latency";
  }
  return "?";
}

CutBound collective_cut_bound(const Topology& topology, const Collective& collective) {
  return cut_bound(topology, collective.kind, collective.participants(topology));
}

std::string cut_coverage_note(const CutBound& cut) {
  if (cut.exact) return "";
  if (cut.sinks == cut.members) return "cut bound search stopped early";
  return "cut bound over " + std::to_string(cut.sinks) + " of " + std::to_string(cut.members) + " members";
}

LowerBound lower_bound(const Topology& topology, const Collective& collective, const Diameter& diameter) {
  return lower_bound(topology, collective, diameter, collective_cut_bound(topology, collective));
}

LowerBound lower_bound(const Topology& topology, const Collective& collective, const Diameter& diameter,
                       const CutBound& cut) {
  const std::vector<NodeId> participants = collective.participants(topology);
  const double members = static_cast<double>(participants.size());
  double bytes = (members - 1.0) / members * static_cast<double>(collective.size_bytes);
  if (collective.kind == CollectiveKind::kAllReduce) bytes *= 2.0;

  LowerBound bound;
  for (NodeId npu : participants) {
    double cheapest_alpha = std::numeric_limits<double>::infinity();
    double ingress = 0.0;
    for (LinkId id : topology.in_links(npu)) {
      cheapest_alpha = std::min(cheapest_alpha, topology.link(id).latency_us);
      ingress += topology.link(id).bandwidth_GBps;
    }
    if (ingress <= 0.0) continue;
    bound.ingress_us = std::max(bound.ingress_us, cheapest_alpha + bytes / bytes_per_us(ingress));
  }
  bound.cut = cut;
  bound.cut_bandwidth_us = cut.bandwidth_time_us(collective.size_bytes);
  bound.cut_us = cut.time_us(collective.size_bytes);
  bound.latency_us = diameter.latency_us;
  bound.total_us = std::max({bound.ingress_us, bound.cut_us, bound.latency_us});
  // Ties go to the simpler explanation: a single NPU's links before a cut, a cut before latency.
  // The same set computed two ways can differ in the last bits, hence the tolerance.
  const double tie = bound.total_us * (1.0 - 1e-12);
  if (bound.ingress_us >= tie) {
    bound.binding = BoundTerm::kIngress;
  } else if (bound.cut_us >= tie) {
    bound.binding = BoundTerm::kCut;
  } else {
    bound.binding = BoundTerm::kLatency;
  }
  return bound;
}

double chunked_lower_bound_us(const Topology& topology, const Collective& collective) {
  const std::vector<NodeId> participants = collective.participants(topology);
  const double members = static_cast<double>(participants.size());
  const double chunk_count = members * collective.chunks_per_npu;
  const double chunk_bytes = static_cast<double>(collective.size_bytes) / chunk_count;
  double needed = (members - 1.0) * collective.chunks_per_npu;
  if (collective.kind == CollectiveKind::kAllReduce) needed *= 2.0;

  double bound = 0.0;
  std::vector<double> taus;
  for (NodeId npu : participants) {
    taus.clear();
    for (LinkId id : topology.in_links(npu)) {
      const Link& link = topology.link(id);
      taus.push_back(link_time_us(chunk_bytes, link.latency_us, link.bandwidth_GBps));
    }
    if (taus.empty()) continue;
    auto delivered_by = [&](double time) {
      double count = 0.0;
      for (double tau : taus) count += std::floor(time / tau);
      return count;
    };
    // Bisect for the earliest time the in-links can have delivered `needed` chunks, then snap to
    // the link period where the count last rose: the exact answer is always such a multiple.
    double low = 0.0;
    double high = needed * *std::min_element(taus.begin(), taus.end());
    for (int step = 0; step < 100 && high - low > 1e-12 * high; ++step) {
      const double middle = 0.5 * (low + high);
      (delivered_by(middle) >= needed ? high : low) = middle;
    }
    double exact = 0.0;
    for (double tau : taus) exact = std::max(exact, std::floor(high / tau * (1.0 + 1e-12)) * tau);
    bound = std::max(bound, exact);
  }
  return bound;
}

}  // namespace tenet
