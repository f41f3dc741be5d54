// SPDX-License-Identifier: MIT
#pragma once
// The flows in their bandwidth phase and their max-min fair rates (internal to the simulator;
// the model and the algorithm are described at the top of simulator.cpp).

#include <cstdint>
#include <span>
#include <vector>

#include "route_paths.hpp"
#include "tenet/sim/simulator.hpp"

namespace tenet::sim {

/// The active flows of one route, held as one: max-min fairness gives flows on the same links
/// the same rate, so a refill places them together (tree-4x8 all-reduce of 16 MiB: 367 flows
/// per refill, on 145 routes). Slots are reused, so an id names a route's flows only while some
/// are active.
using RouteFlowsId = std::uint32_t;

class FlowNetwork {
 public:
  /// Flows on `paths`, whose link ids index `capacity` (bytes per microsecond). A route may name
  /// a link more than once: it then takes its rate from that link once per naming (the symmetric
  /// quotient's link orbits, translation_symmetry.hpp).
  FlowNetwork(std::vector<double> capacity, const RoutePaths& paths);
  /// Flows on the physical links of `topology`.
  FlowNetwork(const Topology& topology, const RoutePaths& paths);

  /// Starts moving `bytes` (> 0) of `transfer` along `route` at time `now`. The flow has no rate
  /// until the next settle(), which must come before time advances.
  void start(TransferId transfer, RouteId route, double bytes, double now);
  /// Removes the flow that next_end() names, whose bytes are all through at `now`.
  void finish(double now);

  /// True when flows started or ended since the last settle().
  bool unsettled() const { return !seeds_.empty(); }
  /// Recomputes the max-min fair rates that the flows started or ended since the last call can
  /// have changed (see simulator.cpp: only flows at or above the restart level, connected to a
  /// change through such flows), and moves their end times accordingly.
  void settle(double now);

  /// The active flow that ends first (ties: lower transfer id). Requires !idle().
  struct End {
    double time_us;
    TransferId transfer;
    RouteFlowsId route_flows;
  };
  bool idle() const { return heap_.empty(); }
  const End& next_end() const { return heap_.front(); }

  /// Routes met on links by the refills so far (SimOptions::max_refill_work): what a settle costs.
  std::uint64_t refill_work() const { return refill_work_; }

  /// Bytes carried and busy time per link so far (busy intervals still open are not included).
  const std::vector<LinkLoad>& loads() const { return loads_; }
  /// Bytes per microsecond.
  double capacity(LinkId link) const { return capacity_[link]; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// One flow of a route's flows: it ends when their common progress reaches `target`.
  struct Pending {
    double target;
    TransferId transfer;
  };
  /// Order of a route's heap of later flows (std heap functions: the first to end is on top).
  static bool ends_after(const Pending& a, const Pending& b) {
    return a.target > b.target || (a.target == b.target && a.transfer > b.transfer);
  }

  std::span<const LinkId> path_of(RouteFlowsId group) const { return {state_[group].path, state_[group].hops}; }
  void grow();
  void next_epoch();
  void collect_component(LinkId seed, double level);
  void fill_component(double level);
  /// Freezes the flows still rising through `saturated_link` at `share` and takes them off their
  /// links (with `scanned`, keeping the scan's shares current); returns the routes' flows frozen.
  std::size_t freeze_at(LinkId saturated_link, double share, bool scanned);
  void apply_rates(double now);
  /// The end of the route's first pending flow at its current rate.
  End end_of(RouteFlowsId group) const;

  // The indexed min-heap of each route's first flow end, keyed by (time, transfer id).
  static bool earlier(const End& a, const End& b) {
    return a.time_us < b.time_us || (a.time_us == b.time_us && a.transfer < b.transfer);
  }
  void heap_place(std::size_t index, const End& entry);
  void heap_sift_up(std::size_t index);
  void heap_sift_down(std::size_t index);
  void heap_update(RouteFlowsId group, const End& entry);
  void heap_remove(RouteFlowsId group);

  const RoutePaths& paths_;
  /// Membership slots per route's flows: the longest route rounded up to a power of two, so that
  /// a membership's group is a shift away (membership = group << shift_ | hop).
  std::uint32_t shift_;

  // Per link.
  std::vector<double> capacity_;  ///< bytes per microsecond
  /// The memberships of the routes' flows on the link, in no particular order. An array per
  /// link, not a linked list: refills walk these lists millions of times, and chasing list
  /// pointers through memory cost most of the simulation time of a 1,024-NPU all-to-all.
  std::vector<std::vector<std::uint32_t>> members_;
  std::vector<std::uint32_t> flows_on_;  ///< active flows on the link, once per naming
  /// What a refill reads and writes of a link, side by side.
  struct LinkFill {
    double residual = 0.0;       ///< progressive filling: capacity not yet given out
    std::uint32_t unfrozen = 0;  ///< progressive filling: flows on the link still rising
    std::uint32_t stamp = 0;     ///< epoch of the last component that took it in
    /// Its routes' flows that the component refills: rising_groups_[first_rising, end_rising).
    std::uint32_t first_rising = 0;
    std::uint32_t end_rising = 0;
    std::uint32_t slot = 0;  ///< its index in scan_link_ while a small component is filled
  };
  std::vector<LinkFill> fill_state_;
  std::vector<double> busy_since_;
  std::vector<LinkLoad> loads_;

  // Per route: the slot of its active flows, or kNone.
  std::vector<RouteFlowsId> group_of_route_;

  // Per slot: the active flows of one route.
  std::vector<RouteId> route_;
  /// What a refill reads of every route it meets, side by side (a 1,024-NPU all-to-all meets
  /// millions of routes, each a cache miss).
  struct GroupState {
    double rate = 0.0;             ///< bytes per microsecond, per flow; 0 until the first settle
    double new_rate = 0.0;         ///< progressive filling result; < 0 while unfrozen
    const LinkId* path = nullptr;  ///< the route's links (RoutePaths)
    std::uint32_t hops = 0;
    std::uint32_t count = 0;  ///< flows
    std::uint32_t stamp = 0;  ///< epoch of the last component that took it in
  };
  std::vector<GroupState> state_;
  /// Bytes each of the route's flows has moved since the first of them started, as of
  /// updated_. A flow ends when this reaches its target: the progress at its start plus its bytes.
  std::vector<double> progress_;
  std::vector<double> updated_;
  std::vector<char> joined_;  ///< a flow started on the route since the last settle
  std::vector<std::uint32_t> heap_pos_;
  std::vector<Pending> first_;               ///< the flow that ends first
  std::vector<std::vector<Pending>> later_;  ///< the others, a heap by ends_after
  std::vector<RouteFlowsId> free_;

  // Per membership: its index in members_[link], for removal by swapping with the last.
  std::vector<std::uint32_t> position_;

  std::vector<End> heap_;
  std::vector<LinkId> seeds_;
  std::vector<RouteFlowsId> joined_groups_;  ///< slots whose joined_ is set
  double ended_level_;                       ///< lowest rate of a flow that ended beside others since then
  std::uint32_t epoch_ = 0;
  std::uint64_t refill_work_ = 0;

  // Scratch, reused by every settle().
  struct Share {
    double share;
    LinkId link;
  };
  std::vector<Share> fill_;
  std::vector<LinkId> component_links_;
  /// A small component's links with flows still rising, and their shares (fill_component).
  std::vector<double> scan_share_;
  std::vector<LinkId> scan_link_;
  std::vector<RouteFlowsId> component_groups_;
  /// Per component link, in the order of its members_, the routes' flows the refill raises: a
  /// saturated link freezes these without walking past the many slower flows it keeps (a direct
  /// all-to-all's links carry hundreds of routes, most of them below the level).
  std::vector<RouteFlowsId> rising_groups_;
};

}  // namespace tenet::sim
