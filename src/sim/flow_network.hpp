// SPDX-License-Identifier: MIT
#pragma once
// The flows in their bandwidth phase and their max-min fair rates (internal to the simulator;
// the model and the algorithm are described at the top of simulator.cpp).

#include <cstdint>
#include <vector>

#include "route_paths.hpp"
#include "tenet/sim/simulator.hpp"

namespace tenet::sim {

/// A flow's slot; slots are reused, so an id names a flow only while it is active.
using FlowId = std::uint32_t;

class FlowNetwork {
 public:
  /// Flows on `paths`, whose link ids index `capacity` (bytes per microsecond). A route may name
  /// a link more than once: it then takes its rate from that link once per naming (the symmetric
  /// quotient's link orbits, translation_symmetry.hpp).
  FlowNetwork(std::vector<double> capacity, const RoutePaths& paths);
  /// Flows on the physical links of `topology`.
  FlowNetwork(const Topology& topology, const RoutePaths& paths);

  /// Starts moving `bytes` (> 0) of `transfer` along `route` at time `now`. The flow has no rate
  /// and no end time until the next settle(), which must come before time advances.
  FlowId start(TransferId transfer, RouteId route, double bytes, double now);
  /// Removes a flow whose bytes are all through at `now` (the one next_end() named).
  void finish(FlowId flow, double now);

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
    FlowId flow;
  };
  bool idle() const { return heap_.empty(); }
  const End& next_end() const { return heap_.front(); }

  /// Bytes carried and busy time per link so far (busy intervals still open are not included).
  const std::vector<LinkLoad>& loads() const { return loads_; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  void grow();
  void next_epoch();
  void collect_component(LinkId seed, double level);
  void fill_component(double level);
  void apply_rates(double now);

  // The indexed min-heap of flow ends, keyed by (time, transfer id).
  static bool earlier(const End& a, const End& b) {
    return a.time_us < b.time_us || (a.time_us == b.time_us && a.transfer < b.transfer);
  }
  void heap_place(std::size_t index, const End& entry);
  void heap_sift_up(std::size_t index);
  void heap_sift_down(std::size_t index);
  void heap_remove(FlowId flow);

  const RoutePaths& paths_;
  /// Membership slots per flow: the longest route rounded up to a power of two, so that a
  /// membership's flow is a shift away (membership = flow << shift_ | hop).
  std::uint32_t shift_;

  // Per link.
  std::vector<double> capacity_;  ///< bytes per microsecond
  /// The memberships of the flows on the link, in no particular order. An array per link, not
  /// a linked list: refills walk these lists millions of times, and chasing list pointers
  /// through memory cost most of the simulation time of a 1,024-NPU all-to-all.
  std::vector<std::vector<std::uint32_t>> members_;
  std::vector<std::uint32_t> stamp_;     ///< epoch of the last component that took it in
  std::vector<double> residual_;         ///< progressive filling: capacity not yet given out
  std::vector<std::uint32_t> unfrozen_;  ///< progressive filling: flows on the link still rising
  std::vector<double> busy_since_;
  std::vector<LinkLoad> loads_;

  // Per flow slot.
  std::vector<TransferId> transfer_;
  std::vector<RouteId> route_;
  std::vector<double> remaining_;  ///< bytes still to move as of updated_
  std::vector<double> rate_;       ///< bytes per microsecond; 0 until the first settle
  std::vector<double> updated_;
  std::vector<double> new_rate_;  ///< progressive filling result; < 0 while unfrozen
  std::vector<std::uint32_t> flow_stamp_;
  std::vector<std::uint32_t> heap_pos_;
  std::vector<FlowId> free_;

  // Per membership: its index in members_[link], for removal by swapping with the last.
  std::vector<std::uint32_t> position_;

  std::vector<End> heap_;
  std::vector<LinkId> seeds_;
  std::vector<FlowId> started_;  ///< flows started since the last settle
  double ended_level_;           ///< lowest rate of a flow that ended beside others since then
  std::uint32_t epoch_ = 0;

  // Scratch, reused by every settle().
  struct Share {
    double share;
    LinkId link;
  };
  std::vector<Share> fill_;
  std::vector<LinkId> component_links_;
  std::vector<FlowId> component_flows_;
};

}  // namespace tenet::sim
