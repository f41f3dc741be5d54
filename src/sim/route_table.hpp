// SPDX-License-Identifier: MIT
#pragma once
// The routes a simulation needs, computed once before it starts (internal to the simulator).
//
// Route ids 0..link_count-1 are the single links themselves, so a transfer with a planned link
// needs no lookup at all; a planned route of one link is that link's route, and the schedule's
// longer planned routes (through switches) follow, each distinct one once. Routed transfers
// (link == kNoLink) get one route per distinct (src, dst) pair that occurs in the schedule, found
// in an open-addressing table; nothing is computed for pairs the schedule never uses, so memory
// is O(links + pairs used + their hops).

#include <cstdint>
#include <span>
#include <vector>

#include "route_paths.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/routing.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::sim {

class RouteTable {
 public:
  /// Checks every transfer's endpoints and planned link (InputError naming the transfer), then
  /// routes every (src, dst) pair used by a routed transfer: by dimension order where the router
  /// uses it, else by one shortest-path tree per source (the direct link when there is one, which
  /// is the unique fewest-hop path).
  RouteTable(const Topology& topology, const Schedule& schedule, RoutingPolicy policy);

  /// The route of a transfer of the schedule given to the constructor.
  RouteId route_of(const Transfer& transfer) const {
    if (transfer.link != kNoLink) return transfer.link;
    if (transfer.route != kNoRoute) return planned_[transfer.route];
    return lookup(transfer.src, transfer.dst);
  }

  /// The same, read column by column: the simulator's event loop asks for nothing else of a
  /// transfer, and assembling the whole Transfer (nine columns) for it, with the route table's
  /// own checks, was 5% of mesh-8x8's all-reduce synthesis of 256 MiB.
  RouteId route_of(const Schedule& schedule, TransferId id) const {
    if (const LinkId link = schedule.link(id); link != kNoLink) return link;
    if (const tenet::RouteId route = schedule.route(id); route != kNoRoute) return planned_[route];
    return lookup(schedule.src(id), schedule.dst(id));
  }

  std::span<const LinkId> links(RouteId route) const { return paths_.of(route); }
  const RoutePaths& paths() const { return paths_; }
  /// Sum of the route's link latencies, in route order.
  double alpha_us(RouteId route) const { return alpha_us_[route]; }
  /// The smallest link bandwidth on the route, bytes per microsecond.
  double bottleneck_bytes_per_us(RouteId route) const { return bottleneck_[route]; }
  /// The longest route, in hops (at least 1).
  std::uint32_t max_hops() const { return paths_.max_hops; }

 private:
  static std::uint64_t key(NodeId src, NodeId dst) { return (std::uint64_t{src} << 32) | dst; }
  std::size_t slot_of(std::uint64_t key) const;
  RouteId lookup(NodeId src, NodeId dst) const;
  RouteId append(std::span<const LinkId> path, const Topology& topology);

  RoutePaths paths_;
  std::vector<double> alpha_us_;
  std::vector<double> bottleneck_;
  /// Per route of the schedule, its route here: a one-link route is that link's own, and a
  /// route listed twice is one route. Flows on the same links then move as one whatever ids the
  /// producer gave their routes, so a schedule simulates the same before and after a round trip
  /// through its file, whose reader merges equal routes (tree schedules list a link's route once
  /// per direction packed: mesh-4x4-failed-7-9 all-reduce of 64 MiB replayed 1416.26 us in memory
  /// and 1419.06 us from its file).
  std::vector<RouteId> planned_;

  // Open addressing, linear probing, power-of-two capacity at most half full.
  static constexpr std::uint64_t kEmptyKey = ~std::uint64_t{0};
  std::vector<std::uint64_t> keys_;
  std::vector<RouteId> values_;
  std::uint64_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace tenet::sim
