#include "tenet/sim/bounds.hpp"

#include <algorithm>
#include <limits>

#include "tenet/common/units.hpp"

namespace tenet {

LowerBound lower_bound(const Topology& topology, const Collective& collective, const Diameter& diameter) {
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
  bound.latency_us = diameter.latency_us;
  bound.total_us = std::max(bound.ingress_us, bound.latency_us);
  return bound;
}

}  // namespace tenet
