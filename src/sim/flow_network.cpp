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
/// Components of at most this many links are filled by a scan of their shares (fill_component).
/// Larger ones keep the heap: a 1,024-NPU all-to-all refills thousands of links with about as many
/// bottlenecks, where a scan per bottleneck would be quadratic.
constexpr std::size_t kScannedLinks = 128;

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
      group_of_route_(paths.size(), kNone),
      ended_level_(kNoLevel) {
  const std::size_t links = capacity_.size();
  members_.resize(links);
  flows_on_.assign(links, 0);
  fill_state_.assign(links, LinkFill{});
  busy_since_.assign(links, 0.0);
  loads_.assign(links, LinkLoad{});
}

void FlowNetwork::grow() {
  const std::size_t old_size = route_.size();
  const std::size_t new_size = std::max<std::size_t>(64, old_size * 2);
  route_.resize(new_size);
  state_.resize(new_size);
  progress_.resize(new_size);
  updated_.resize(new_size);
  joined_.resize(new_size, 0);
  heap_pos_.resize(new_size, kNone);
  first_.resize(new_size);
  later_.resize(new_size);
  position_.resize(new_size << shift_);
  // Hand out low slots first: the ones used most stay warm in cache.
  for (std::size_t slot = new_size; slot-- > old_size;) free_.push_back(static_cast<RouteFlowsId>(slot));
}

void FlowNetwork::start(TransferId transfer, RouteId route, double bytes, double now) {
  const auto links = paths_.of(route);
  RouteFlowsId group = group_of_route_[route];
  if (group == kNone) {
    if (free_.empty()) grow();
    group = free_.back();
    free_.pop_back();
    group_of_route_[route] = group;
    route_[group] = route;
    state_[group].path = links.data();
    state_[group].hops = static_cast<std::uint32_t>(links.size());
    state_[group].count = 0;
    progress_[group] = 0.0;
    state_[group].rate = 0.0;
    updated_[group] = now;
    for (std::uint32_t hop = 0; hop < links.size(); ++hop) {
      const std::uint32_t member = group << shift_ | hop;
      std::vector<std::uint32_t>& on_link = members_[links[hop]];
      position_[member] = static_cast<std::uint32_t>(on_link.size());
      on_link.push_back(member);
    }
  } else if (state_[group].rate > 0.0) {
    // The flows already moving have their progress brought up to now, where the new one starts.
    progress_[group] += state_[group].rate * (now - updated_[group]);
    updated_[group] = now;
  }
  ++state_[group].count;
  const Pending flow{progress_[group] + bytes, transfer};
  if (state_[group].count == 1) {
    first_[group] = flow;
  } else {
    // The first to end stays apart from the heap of the others: most routes carry one flow.
    Pending other = flow;
    if (ends_after(first_[group], flow)) std::swap(first_[group], other);
    std::vector<Pending>& later = later_[group];
    later.push_back(other);
    std::push_heap(later.begin(), later.end(), ends_after);
  }
  for (LinkId link : links) {
    if (flows_on_[link]++ == 0) busy_since_[link] = now;
    loads_[link].bytes += bytes;
  }
  // Placed before the flows already moving, it must be the route's next end until the refill.
  if (heap_pos_[group] != kNone && first_[group].transfer == transfer) heap_update(group, end_of(group));
  if (!joined_[group]) {
    joined_[group] = 1;
    joined_groups_.push_back(group);
  }
  // Any one link reaches the new flow's whole component.
  seeds_.push_back(links.front());
}

void FlowNetwork::finish(double now) {
  const RouteFlowsId group = heap_.front().route_flows;
  std::vector<Pending>& later = later_[group];
  if (!later.empty()) {
    std::pop_heap(later.begin(), later.end(), ends_after);
    first_[group] = later.back();
    later.pop_back();
  }
  const auto links = path_of(group);
  const bool emptied = --state_[group].count == 0;
  for (std::uint32_t hop = 0; hop < links.size(); ++hop) {
    const LinkId link = links[hop];
    if (emptied) {
      const std::uint32_t member = group << shift_ | hop;
      std::vector<std::uint32_t>& on_link = members_[link];
      const std::uint32_t moved = on_link.back();
      on_link[position_[member]] = moved;
      position_[moved] = position_[member];
      on_link.pop_back();
    }
    if (--flows_on_[link] == 0) {
      loads_[link].busy_us += now - busy_since_[link];
    } else {
      // The flows left on this link may now get more; the component may have split, so every
      // such link is a seed of its own.
      seeds_.push_back(link);
      ended_level_ = std::min(ended_level_, state_[group].rate);
    }
  }
  if (emptied) {
    heap_remove(group);
    group_of_route_[route_[group]] = kNone;
    free_.push_back(group);
  } else {
    heap_update(group, end_of(group));
  }
}

void FlowNetwork::next_epoch() {
  if (++epoch_ == 0) {  // wrapped after 2^32 settles: old stamps could collide
    for (LinkFill& link : fill_state_) link.stamp = 0;
    for (GroupState& state : state_) state.stamp = 0;
    epoch_ = 1;
  }
}

void FlowNetwork::settle(double now) {
  // The restart level: no flow below it can change (simulator.cpp). A started flow will get at
  // least its smallest equal share, capacity / flows, over its links.
  double level = ended_level_;
  for (RouteFlowsId group : joined_groups_) {
    if (state_[group].count == 0) continue;
    for (LinkId link : path_of(group)) level = std::min(level, capacity_[link] / static_cast<double>(flows_on_[link]));
    // A route a flow joined is refilled: its rate can only fall, to no less than that share,
    // so this changes the level only where rounding put the route's rate below it.
    if (state_[group].rate > 0.0) level = std::min(level, state_[group].rate);
  }
  level *= 1.0 - kLevelMargin;
  next_epoch();
  for (std::size_t i = 0; i < seeds_.size(); ++i) {
    const LinkId seed = seeds_[i];
    if (fill_state_[seed].stamp == epoch_ || members_[seed].empty()) continue;
    collect_component(seed, level);
    fill_component(level);
    apply_rates(now);
  }
  for (RouteFlowsId group : joined_groups_) joined_[group] = 0;
  seeds_.clear();
  joined_groups_.clear();
  ended_level_ = kNoLevel;
}

void FlowNetwork::collect_component(LinkId seed, double level) {
  // The flows to refill: new ones (rate 0, or joining their route's: settle keeps the level
  // below its rate) and those at or above the level, connected through links they share. Flows
  // below the level keep their rates and only take their part of each link's capacity off the
  // top, which this same pass adds up.
  component_links_.clear();
  component_groups_.clear();
  rising_groups_.clear();
  fill_state_[seed].stamp = epoch_;
  component_links_.push_back(seed);
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    const LinkId at = component_links_[i];
    refill_work_ += members_[at].size();
    double kept = 0.0;
    std::uint32_t rising = 0;
    fill_state_[at].first_rising = static_cast<std::uint32_t>(rising_groups_.size());
    for (std::uint32_t member : members_[at]) {
      const RouteFlowsId group = member >> shift_;
      GroupState& state = state_[group];
      if (state.rate != 0.0 && state.rate < level) {
        kept += state.rate * state.count;
        continue;
      }
      rising += state.count;
      rising_groups_.push_back(group);
      if (state.stamp == epoch_) continue;
      state.stamp = epoch_;
      component_groups_.push_back(group);
      for (LinkId link : path_of(group)) {
        if (fill_state_[link].stamp == epoch_) continue;
        fill_state_[link].stamp = epoch_;
        component_links_.push_back(link);
      }
    }
    fill_state_[at].residual = capacity_[at] - kept;
    fill_state_[at].unfrozen = rising;
    fill_state_[at].end_rising = static_cast<std::uint32_t>(rising_groups_.size());
  }
}

void FlowNetwork::fill_component(double level) {
  if (component_groups_.empty()) return;
  if (component_groups_.size() == 1) {
    // One route's flows to place: they take the least that is left on their links, shared
    // among themselves (and their route's namings of a link: one on physical links). Alone on
    // their route (a ring, a synthesized schedule: the common case) that is exactly its slowest
    // link.
    const RouteFlowsId group = component_groups_.front();
    double rate = kNoLevel;
    for (LinkId link : path_of(group)) rate = std::min(rate, fill_state_[link].residual / fill_state_[link].unfrozen);
    state_[group].new_rate = std::max(rate, level);
    return;
  }
  // Progressive filling: raise every unfrozen flow's rate together; the link whose residual
  // capacity per unfrozen flow is smallest saturates first and freezes its flows at that share.
  for (RouteFlowsId group : component_groups_) state_[group].new_rate = -1.0;
  std::size_t rising = component_groups_.size();
  // Few links (a tree replay through switches refills about 47 at a time, up to the network's 72):
  // a scan of their shares, each kept current as freezing changes it, finds the same bottleneck as
  // the heap below (the least share, ties by lower link id) without its hard-to-predict
  // comparisons: tree-4x8's all-reduce of 16 MiB on spanning trees replays in 1.82 s instead of
  // 2.35 (2.03 with the scan up to 64 links only). Where rounding made a share fall a little
  // below what the heap holds for it, the heap picks later than the scan, so times can differ in
  // the 7th digit (that replay: 2740.26243 -> 2740.26286 us). The share is held at the level
  // reached, as below.
  if (component_links_.size() <= kScannedLinks) {
    scan_share_.clear();
    scan_link_.clear();
    for (LinkId link : component_links_) {
      LinkFill& fill = fill_state_[link];
      if (fill.unfrozen == 0) continue;
      fill.slot = static_cast<std::uint32_t>(scan_link_.size());
      scan_link_.push_back(link);
      scan_share_.push_back(fill.residual / fill.unfrozen);
    }
    while (rising > 0 && !scan_link_.empty()) {
      double least = scan_share_[0];
      const std::size_t open = scan_share_.size();
      for (std::size_t k = 1; k < open; ++k) least = scan_share_[k] < least ? scan_share_[k] : least;
      LinkId saturated_link = kNoLink;
      for (std::size_t k = 0; k < open; ++k) {
        if (scan_share_[k] == least && scan_link_[k] < saturated_link) saturated_link = scan_link_[k];
      }
      level = std::max(least, level);
      rising -= freeze_at(saturated_link, level, true);
    }
    return;
  }
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
    if (fill_state_[link].unfrozen > 0)
      fill_.push_back({fill_state_[link].residual / fill_state_[link].unfrozen, link});
  }
  std::make_heap(fill_.begin(), fill_.end(), after);
  // Once every flow is frozen the links left in the heap have nothing to give out.
  while (rising > 0 && !fill_.empty()) {
    std::pop_heap(fill_.begin(), fill_.end(), after);
    const Share entry = fill_.back();
    fill_.pop_back();
    if (fill_state_[entry.link].unfrozen == 0) continue;
    const double current = fill_state_[entry.link].residual / fill_state_[entry.link].unfrozen;
    if (current != entry.share) {
      fill_.push_back({current, entry.link});
      std::push_heap(fill_.begin(), fill_.end(), after);
      continue;
    }
    // Shares only grow as filling proceeds; rounding in the residuals must not make a later
    // share smaller (or negative), so it is held at the level already reached.
    level = std::max(current, level);
    rising -= freeze_at(entry.link, level, false);
  }
}

std::size_t FlowNetwork::freeze_at(LinkId saturated_link, double share, bool scanned) {
  const LinkFill& saturated = fill_state_[saturated_link];
  std::size_t frozen = 0;
  for (std::uint32_t i = saturated.first_rising; i < saturated.end_rising; ++i) {
    const RouteFlowsId group = rising_groups_[i];
    if (state_[group].new_rate >= 0.0) continue;  // frozen already
    state_[group].new_rate = share;
    ++frozen;
    const double taken = share * state_[group].count;
    for (LinkId link : path_of(group)) {
      LinkFill& fill = fill_state_[link];
      fill.residual -= taken;
      fill.unfrozen -= state_[group].count;
      if (!scanned) continue;
      if (fill.unfrozen > 0) {
        scan_share_[fill.slot] = fill.residual / fill.unfrozen;
        continue;
      }
      // Nothing left to rise on the link: out of the scan.
      const LinkId last = scan_link_.back();
      scan_link_[fill.slot] = last;
      scan_share_[fill.slot] = scan_share_.back();
      fill_state_[last].slot = fill.slot;
      scan_link_.pop_back();
      scan_share_.pop_back();
    }
  }
  return frozen;
}

FlowNetwork::End FlowNetwork::end_of(RouteFlowsId group) const {
  const Pending& first = first_[group];
  return {updated_[group] + std::max(0.0, first.target - progress_[group]) / state_[group].rate, first.transfer, group};
}

void FlowNetwork::apply_rates(double now) {
  // Many new end times at once (a shared link's flows all speed up when one leaves) are cheaper
  // to place by rebuilding the heap, in time linear in its size, than one sift each: tree-4x8
  // all-reduce of 16 MiB synthesizes in 8.5 s instead of 9.0 (its tree replays), mesh-10x10's
  // direct all-reduce simulates in 0.46 s instead of 0.49. The heap's order is total (time, then
  // transfer id), so either way the same flow comes out first.
  std::size_t changed = 0;
  for (RouteFlowsId group : component_groups_)
    changed += state_[group].new_rate != state_[group].rate || joined_[group] ? 1 : 0;
  const std::size_t after = heap_.size() + changed;
  const bool rebuild = changed * static_cast<std::size_t>(std::bit_width(after)) > kRebuildFactor * after;
  for (RouteFlowsId group : component_groups_) {
    const double rate = state_[group].new_rate;
    // An unchanged rate keeps its end time untouched: no drift from re-deriving it.
    if (rate == state_[group].rate && !joined_[group]) continue;
    if (state_[group].rate > 0.0) {
      progress_[group] += state_[group].rate * (now - updated_[group]);
      updated_[group] = now;
    }
    state_[group].rate = rate;
    const End entry = end_of(group);
    if (heap_pos_[group] == kNone) {
      heap_.push_back(entry);
      heap_pos_[group] = static_cast<std::uint32_t>(heap_.size() - 1);
      if (!rebuild) heap_sift_up(heap_.size() - 1);
    } else if (rebuild) {
      heap_[heap_pos_[group]] = entry;
    } else {
      heap_update(group, entry);
    }
  }
  if (rebuild) {
    for (std::size_t index = heap_.size() / 2; index-- > 0;) heap_sift_down(index);
  }
}

void FlowNetwork::heap_place(std::size_t index, const End& entry) {
  heap_[index] = entry;
  heap_pos_[entry.route_flows] = static_cast<std::uint32_t>(index);
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

void FlowNetwork::heap_update(RouteFlowsId group, const End& entry) {
  const std::size_t index = heap_pos_[group];
  const bool sooner = earlier(entry, heap_[index]);
  heap_[index] = entry;
  if (sooner) {
    heap_sift_up(index);
  } else {
    heap_sift_down(index);
  }
}

void FlowNetwork::heap_remove(RouteFlowsId group) {
  const std::size_t index = heap_pos_[group];
  heap_pos_[group] = kNone;
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
