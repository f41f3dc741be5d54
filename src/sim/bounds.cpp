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
    case BoundTerm::kGroups: return "groups";
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
  const double size = static_cast<double>(collective.size_bytes);
  const double share = (members - 1.0) / members * size;

  LowerBound bound;
  // The time to move `bytes` through a set of links: the first byte pays the cheapest alpha.
  const auto through = [&](const std::vector<LinkId>& links, double bytes) {
    double cheapest_alpha = std::numeric_limits<double>::infinity();
    double bandwidth = 0.0;
    for (LinkId id : links) {
      cheapest_alpha = std::min(cheapest_alpha, topology.link(id).latency_us);
      bandwidth += topology.link(id).bandwidth_GBps;
    }
    return bandwidth > 0.0 ? cheapest_alpha + bytes / bytes_per_us(bandwidth) : 0.0;
  };
  // One member moves nothing: no NPU-links term.
  if (members >= 2.0) {
    for (NodeId npu : participants) {
      switch (collective.kind) {
        case CollectiveKind::kAllGather:
          // The other members' chunks must all come in.
          bound.ingress_us = std::max(bound.ingress_us, through(topology.in_links(npu), share));
          break;
        case CollectiveKind::kReduceScatter:
          // Its contribution to every other member's chunk must go out (pre-reduced elsewhere, what
          // comes in can be as little as one chunk).
          bound.ingress_us = std::max(bound.ingress_us, through(topology.out_links(npu), share));
          break;
        case CollectiveKind::kAllReduce:
          // Every byte of the result depends on the others' data, and its own data reaches every
          // byte of theirs: the whole vector in and out at least once.
          bound.ingress_us = std::max(
              {bound.ingress_us, through(topology.in_links(npu), size), through(topology.out_links(npu), size)});
          break;
      }
    }
  }
  if (collective.kind == CollectiveKind::kAllReduce && members >= 2.0) {
    // Summing m values and telling all m the sum takes at least 2(m - 1) one-way messages per
    // byte (m - 1 before the first NPU knows the sum, m - 1 into the others after), and every
    // message enters some NPU: 2(m - 1) n bytes through all NPUs' in-links together, on average
    // the 2(m - 1)/m n per member of Patarasuk & Yuan, which one NPU alone need not take in.
    std::vector<LinkId> into_npus;
    for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
      for (LinkId id : topology.in_links(npu)) into_npus.push_back(id);
    }
    bound.ingress_us = std::max(bound.ingress_us, through(into_npus, 2.0 * (members - 1.0) * size));
  }
  bound.cut = cut;
  bound.cut_bandwidth_us = cut.bandwidth_time_us(collective.size_bytes);
  bound.cut_us = cut.time_us(collective.size_bytes);
  if (collective.kind == CollectiveKind::kAllReduce) {
    bound.groups = all_reduce_group_bound(topology, participants, collective.size_bytes);
    bound.groups_us = bound.groups.time_us;
  }
  bound.latency_us = diameter.latency_us;
  bound.total_us = std::max({bound.ingress_us, bound.cut_us, bound.groups_us, bound.latency_us});
  // Ties go to the simpler explanation: a single NPU's links before a cut, a cut before groups,
  // groups before latency. The same set computed two ways can differ in the last bits, hence the
  // tolerance.
  const double tie = bound.total_us * (1.0 - 1e-12);
  if (bound.ingress_us >= tie) {
    bound.binding = BoundTerm::kIngress;
  } else if (bound.cut_us >= tie) {
    bound.binding = BoundTerm::kCut;
  } else if (bound.groups_us >= tie) {
    bound.binding = BoundTerm::kGroups;
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
  // Whole chunks through an NPU's own links, as in lower_bound: in for all-gather, out for
  // reduce-scatter, the whole vector both ways for all-reduce.
  const double needed =
      (collective.kind == CollectiveKind::kAllReduce ? members : members - 1.0) * collective.chunks_per_npu;

  double bound = 0.0;
  std::vector<double> taus;
  const bool in = collective.kind != CollectiveKind::kReduceScatter;
  const bool out = collective.kind != CollectiveKind::kAllGather;
  for (int pass = 0; pass < static_cast<int>(participants.size()) * 2; ++pass) {
    const NodeId npu = participants[static_cast<std::size_t>(pass / 2)];
    const bool incoming = pass % 2 == 0;
    if (incoming ? !in : !out) continue;
    taus.clear();
    for (LinkId id : incoming ? topology.in_links(npu) : topology.out_links(npu)) {
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
