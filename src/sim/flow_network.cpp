// SPDX-License-Identifier: MIT
#include "flow_network.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "tenet/common/units.hpp"
#include "tolerances.hpp"

namespace tenet::sim {
namespace {

constexpr double kNoLevel = std::numeric_limits<double>::infinity();
/// apply_rates rebuilds the heap when its sifts would take more than this many comparisons per
/// heap entry.
constexpr std::size_t kRebuildFactor = 2;

}  // namespace

namespace {

std::vector<double> link_capacities(const Topology& topology) {
  std::vector<double> capacity(topology.link_count());
  for (LinkId id = 0; id < capacity.size(); ++id) capacity[id] = bytes_per_us(topology.link(id).bandwidth_GBps);
  return capacity;
}

}  // namespace

FlowNetwork::FlowNetwork(const Topology& topology, const RoutePaths& paths)
    : FlowNetwork(link_capacities(topology), paths) {}

FlowNetwork::FlowNetwork(std::vector<double> capacity, const RoutePaths& paths)
    : paths_(paths),
      shift_(static_cast<std::uint32_t>(std::countr_zero(std::bit_ceil(paths.max_hops)))),
      capacity_(std::move(capacity)),
      ended_level_(kNoLevel) {
  const std::size_t links = capacity_.size();
  members_.resize(links);
  stamp_.assign(links, 0);
  residual_.assign(links, 0.0);
  unfrozen_.assign(links, 0);
  busy_since_.assign(links, 0.0);
  loads_.assign(links, LinkLoad{});
}

void FlowNetwork::grow() {
  const std::size_t old_size = transfer_.size();
  const std::size_t new_size = std::max<std::size_t>(64, old_size * 2);
  transfer_.resize(new_size);
  route_.resize(new_size);
  remaining_.resize(new_size);
  rate_.resize(new_size);
  updated_.resize(new_size);
  new_rate_.resize(new_size);
  flow_stamp_.resize(new_size, 0);
  heap_pos_.resize(new_size, kNone);
  position_.resize(new_size << shift_);
  // Hand out low slots first: the ones used most stay warm in cache.
  for (std::size_t slot = new_size; slot-- > old_size;) free_.push_back(static_cast<FlowId>(slot));
}

FlowId FlowNetwork::start(TransferId transfer, RouteId route, double bytes, double now) {
  if (free_.empty()) grow();
  const FlowId flow = free_.back();
  free_.pop_back();
  transfer_[flow] = transfer;
  route_[flow] = route;
  remaining_[flow] = bytes;
  rate_[flow] = 0.0;
  updated_[flow] = now;
  const auto links = paths_.of(route);
  for (std::uint32_t hop = 0; hop < links.size(); ++hop) {
    const LinkId link = links[hop];
    const std::uint32_t member = flow << shift_ | hop;
    std::vector<std::uint32_t>& on_link = members_[link];
    if (on_link.empty()) busy_since_[link] = now;
    position_[member] = static_cast<std::uint32_t>(on_link.size());
    on_link.push_back(member);
    loads_[link].bytes += bytes;
  }
  // Any one link reaches the new flow's whole component.
  seeds_.push_back(links.front());
  started_.push_back(flow);
  return flow;
}

void FlowNetwork::finish(FlowId flow, double now) {
  heap_remove(flow);
  const auto links = paths_.of(route_[flow]);
  for (std::uint32_t hop = 0; hop < links.size(); ++hop) {
    const LinkId link = links[hop];
    const std::uint32_t member = flow << shift_ | hop;
    std::vector<std::uint32_t>& on_link = members_[link];
    const std::uint32_t moved = on_link.back();
    on_link[position_[member]] = moved;
    position_[moved] = position_[member];
    on_link.pop_back();
    if (on_link.empty()) {
      loads_[link].busy_us += now - busy_since_[link];
    } else {
      // The flows left on this link may now get more; the component may have split, so every
      // such link is a seed of its own.
      seeds_.push_back(link);
      ended_level_ = std::min(ended_level_, rate_[flow]);
    }
  }
  free_.push_back(flow);
}

void FlowNetwork::next_epoch() {
  if (++epoch_ == 0) {  // wrapped after 2^32 settles: old stamps could collide
    std::fill(stamp_.begin(), stamp_.end(), 0);
    std::fill(flow_stamp_.begin(), flow_stamp_.end(), 0);
    epoch_ = 1;
  }
}

void FlowNetwork::settle(double now) {
  // The restart level: no flow below it can change (simulator.cpp). A started flow will get at
  // least its smallest equal share, capacity / flows, over its links.
  double level = ended_level_;
  for (FlowId flow : started_) {
    for (LinkId link : paths_.of(route_[flow]))
      level = std::min(level, capacity_[link] / static_cast<double>(members_[link].size()));
  }
  level *= 1.0 - kLevelMargin;
  next_epoch();
  for (std::size_t i = 0; i < seeds_.size(); ++i) {
    const LinkId seed = seeds_[i];
    if (stamp_[seed] == epoch_ || members_[seed].empty()) continue;
    collect_component(seed, level);
    fill_component(level);
    apply_rates(now);
  }
  seeds_.clear();
  started_.clear();
  ended_level_ = kNoLevel;
}

void FlowNetwork::collect_component(LinkId seed, double level) {
  // The flows to refill: new ones (rate 0) and those at or above the level, connected through
  // links they share. Flows below the level keep their rates and only take their part of each
  // link's capacity off the top, which this same pass adds up.
  component_links_.clear();
  component_flows_.clear();
  stamp_[seed] = epoch_;
  component_links_.push_back(seed);
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    const LinkId at = component_links_[i];
    double kept = 0.0;
    std::uint32_t rising = 0;
    for (std::uint32_t member : members_[at]) {
      const FlowId flow = member >> shift_;
      if (rate_[flow] != 0.0 && rate_[flow] < level) {
        kept += rate_[flow];
        continue;
      }
      ++rising;
      if (flow_stamp_[flow] == epoch_) continue;
      flow_stamp_[flow] = epoch_;
      component_flows_.push_back(flow);
      for (LinkId link : paths_.of(route_[flow])) {
        if (stamp_[link] == epoch_) continue;
        stamp_[link] = epoch_;
        component_links_.push_back(link);
      }
    }
    residual_[at] = capacity_[at] - kept;
    unfrozen_[at] = rising;
  }
}

void FlowNetwork::fill_component(double level) {
  if (component_flows_.empty()) return;
  if (component_flows_.size() == 1) {
    // One flow to place: it takes the least that is left on its links, shared among its own
    // namings of a link (one on physical links). Alone on its route (a ring, a synthesized
    // schedule: the common case) that is exactly its slowest link.
    const FlowId flow = component_flows_.front();
    double rate = kNoLevel;
    for (LinkId link : paths_.of(route_[flow])) rate = std::min(rate, residual_[link] / unfrozen_[link]);
    new_rate_[flow] = std::max(rate, level);
    return;
  }
  // Progressive filling: raise every unfrozen flow's rate together; the link whose residual
  // capacity per unfrozen flow is smallest saturates first and freezes its flows at that share.
  // Freezing flows at the current (smallest) share s can only raise another link's share:
  // (r - k s) / (u - k) >= r / u when s <= r / u. So the heap keeps one entry per link, possibly
  // too low; a popped entry whose link has changed is re-pushed with its share now, and only an
  // entry still current is a bottleneck. Links touched many times between pops are re-keyed once,
  // and the heap never holds more than the component's links.
  auto after = [](const Share& a, const Share& b) {
    return a.share > b.share || (a.share == b.share && a.link > b.link);
  };
  fill_.clear();
  for (LinkId link : component_links_) {
    if (unfrozen_[link] > 0) fill_.push_back({residual_[link] / unfrozen_[link], link});
  }
  std::make_heap(fill_.begin(), fill_.end(), after);
  for (FlowId flow : component_flows_) new_rate_[flow] = -1.0;
  std::size_t rising = component_flows_.size();
  // Once every flow is frozen the links left in the heap have nothing to give out.
  while (rising > 0 && !fill_.empty()) {
    std::pop_heap(fill_.begin(), fill_.end(), after);
    const Share entry = fill_.back();
    fill_.pop_back();
    if (unfrozen_[entry.link] == 0) continue;
    const double current = residual_[entry.link] / unfrozen_[entry.link];
    if (current != entry.share) {
      fill_.push_back({current, entry.link});
      std::push_heap(fill_.begin(), fill_.end(), after);
      continue;
    }
    // Shares only grow as filling proceeds; rounding in the residuals must not make a later
    // share smaller (or negative), so it is held at the level already reached.
    const double share = std::max(current, level);
    level = share;
    for (std::uint32_t member : members_[entry.link]) {
      const FlowId flow = member >> shift_;
      if (flow_stamp_[flow] != epoch_ || new_rate_[flow] >= 0.0) continue;  // kept, or frozen
      new_rate_[flow] = share;
      --rising;
      for (LinkId link : paths_.of(route_[flow])) {
        residual_[link] -= share;
        --unfrozen_[link];
      }
    }
  }
}

void FlowNetwork::apply_rates(double now) {
  // Many new end times at once (a shared link's flows all speed up when one leaves) are cheaper
  // to place by rebuilding the heap, in time linear in its size, than one sift each: tree-4x8
  // all-reduce of 16 MiB synthesizes in 8.5 s instead of 9.0 (its tree replays), mesh-10x10's
  // direct all-reduce simulates in 0.46 s instead of 0.49. The heap's order is total (time, then
  // transfer id), so either way the same flow comes out first.
  std::size_t changed = 0;
  for (FlowId flow : component_flows_) changed += new_rate_[flow] != rate_[flow] ? 1 : 0;
  const std::size_t after = heap_.size() + changed;
  const bool rebuild = changed * static_cast<std::size_t>(std::bit_width(after)) > kRebuildFactor * after;
  for (FlowId flow : component_flows_) {
    const double rate = new_rate_[flow];
    // An unchanged rate keeps its end time untouched: no drift from re-deriving it.
    if (rate == rate_[flow]) continue;
    if (rate_[flow] > 0.0) {
      remaining_[flow] = std::max(0.0, remaining_[flow] - rate_[flow] * (now - updated_[flow]));
      updated_[flow] = now;
    }
    rate_[flow] = rate;
    const End entry{updated_[flow] + remaining_[flow] / rate, transfer_[flow], flow};
    if (heap_pos_[flow] == kNone) {
      heap_.push_back(entry);
      heap_pos_[flow] = static_cast<std::uint32_t>(heap_.size() - 1);
      if (!rebuild) heap_sift_up(heap_.size() - 1);
    } else if (rebuild) {
      heap_[heap_pos_[flow]] = entry;
    } else {
      const std::size_t index = heap_pos_[flow];
      const bool sooner = earlier(entry, heap_[index]);
      heap_[index] = entry;
      if (sooner) {
        heap_sift_up(index);
      } else {
        heap_sift_down(index);
      }
    }
  }
  if (rebuild) {
    for (std::size_t index = heap_.size() / 2; index-- > 0;) heap_sift_down(index);
  }
}

void FlowNetwork::heap_place(std::size_t index, const End& entry) {
  heap_[index] = entry;
  heap_pos_[entry.flow] = static_cast<std::uint32_t>(index);
}

void FlowNetwork::heap_sift_up(std::size_t index) {
  const End entry = heap_[index];
  while (index > 0) {
    const std::size_t parent = (index - 1) / 2;
    if (!earlier(entry, heap_[parent])) break;
    heap_place(index, heap_[parent]);
    index = parent;
  }
  heap_place(index, entry);
}

void FlowNetwork::heap_sift_down(std::size_t index) {
  const End entry = heap_[index];
  const std::size_t size = heap_.size();
  while (true) {
    std::size_t child = 2 * index + 1;
    if (child >= size) break;
    if (child + 1 < size && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], entry)) break;
    heap_place(index, heap_[child]);
    index = child;
  }
  heap_place(index, entry);
}

void FlowNetwork::heap_remove(FlowId flow) {
  const std::size_t index = heap_pos_[flow];
  heap_pos_[flow] = kNone;
  const End last = heap_.back();
  heap_.pop_back();
  if (index == heap_.size()) return;
  // The last entry fills the hole and moves whichever way its key says.
  const bool sooner = earlier(last, heap_[index]);
  heap_place(index, last);
  if (sooner) {
    heap_sift_up(index);
  } else {
    heap_sift_down(index);
  }
}

}  // namespace tenet::sim
