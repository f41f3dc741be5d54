// SPDX-License-Identifier: MIT
#include "route_table.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>
#include <string>

#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"

namespace tenet::sim {
namespace {

/// A bad schedule can be wrong in millions of transfers; the first few say enough.
constexpr std::size_t kMaxProblems = 10;
/// On a grid, a source whose destinations are at least 1/kTreeShare of the nodes gets its routes
/// from one dimension-order tree (O(nodes)) rather than one walk per destination.
constexpr std::size_t kTreeShare = 8;

std::string transfer_where(TransferId id, const char* field) {
  std::string where = "/transfers/";
  where += std::to_string(id);
  where += '/';
  where += field;
  return where;
}

}  // namespace

RouteTable::RouteTable(const Topology& topology, const Schedule& schedule, RoutingPolicy policy) {
  const std::uint32_t link_count = topology.link_count();
  paths_.offsets.resize(std::size_t{link_count} + 1);
  paths_.links.resize(link_count);
  alpha_us_.resize(link_count);
  bottleneck_.resize(link_count);
  for (LinkId id = 0; id < link_count; ++id) {
    paths_.offsets[id] = id;
    paths_.links[id] = id;
    alpha_us_[id] = topology.link(id).latency_us;
    bottleneck_[id] = bytes_per_us(topology.link(id).bandwidth_GBps);
  }
  paths_.offsets[link_count] = link_count;
  planned_.resize(schedule.route_count());
  std::map<std::vector<LinkId>, RouteId> distinct;
  for (tenet::RouteId route = 0; route < schedule.route_count(); ++route) {
    const std::span<const LinkId> path = schedule.route_links(route);
    for (std::size_t i = 0; i < path.size(); ++i) {
      const bool joined =
          path[i] < link_count && (i == 0 || topology.link(path[i - 1]).dst == topology.link(path[i]).src);
      if (!joined || (i + 1 < path.size() && !topology.is_switch(topology.link(path[i]).dst))) {
        throw InputError("schedule", "/routes/" + std::to_string(route),
                         "a planned route is not a chain of this topology's links through switches");
      }
    }
    if (path.size() == 1) {
      planned_[route] = path.front();
      continue;
    }
    auto [known, added] = distinct.try_emplace(std::vector<LinkId>(path.begin(), path.end()), 0);
    if (added) known->second = append(path, topology);
    planned_[route] = known->second;
  }

  // Validate, and gather the distinct routed pairs into the hash table (value unset for now).
  keys_.assign(16, kEmptyKey);
  values_.assign(16, 0);
  mask_ = 15;
  shift_ = 64 - 4;
  std::size_t pair_count = 0;
  ProblemList problems("schedule");
  std::size_t problem_count = 0;
  auto report = [&](std::string where, std::string message) {
    if (++problem_count <= kMaxProblems) problems.add(std::move(where), std::move(message));
  };
  const std::uint32_t npus = topology.npu_count();
  for (TransferId id = 0; id < schedule.size(); ++id) {
    // Column by column: the whole Transfer is nine columns, and this runs on every simulation.
    const NodeId src = schedule.src(id);
    const NodeId dst = schedule.dst(id);
    const LinkId planned_link = schedule.link(id);
    const tenet::RouteId planned_route = schedule.route(id);
    bool endpoints_ok = true;
    if (src >= npus) {
      report(transfer_where(id, "src"),
             "NPU " + std::to_string(src) + " does not exist (the topology has " + std::to_string(npus) + " NPUs)");
      endpoints_ok = false;
    }
    if (dst >= npus) {
      report(transfer_where(id, "dst"),
             "NPU " + std::to_string(dst) + " does not exist (the topology has " + std::to_string(npus) + " NPUs)");
      endpoints_ok = false;
    }
    if (!endpoints_ok) continue;
    if (src == dst) {
      report(transfer_where(id, "dst"), "the transfer goes from NPU " + std::to_string(src) + " to itself");
      continue;
    }
    if (planned_route != kNoRoute) {
      const std::span<const LinkId> path = schedule.route_links(planned_route);
      if (topology.link(path.front()).src != src || topology.link(path.back()).dst != dst) {
        report(transfer_where(id, "route"), "the route does not run from the transfer's src to its dst");
      }
      continue;
    }
    if (planned_link != kNoLink) {
      if (planned_link >= link_count) {
        std::string message = "link " + std::to_string(planned_link);
        message += " does not exist in topology '";
        message += topology.name;
        message += "' (it has " + std::to_string(link_count) + " links)";
        report(transfer_where(id, "link"), std::move(message));
      } else if (const Link& link = topology.link(planned_link); link.src != src || link.dst != dst) {
        std::string message = "link " + std::to_string(planned_link);
        message += " joins " + topology.node_label(link.src);
        message += " -> " + topology.node_label(link.dst);
        message += ", not the transfer's " + topology.node_label(src);
        message += " -> " + topology.node_label(dst);
        report(transfer_where(id, "link"), std::move(message));
      }
      continue;
    }
    const std::uint64_t wanted = key(src, dst);
    std::size_t slot = slot_of(wanted);
    if (keys_[slot] == wanted) continue;
    keys_[slot] = wanted;
    if (++pair_count * 2 > keys_.size()) {
      // Rehash into twice the room; amortized O(1) per distinct pair.
      std::vector<std::uint64_t> old = std::move(keys_);
      keys_.assign(old.size() * 2, kEmptyKey);
      values_.assign(old.size() * 2, 0);
      mask_ = keys_.size() - 1;
      shift_ = 64 - std::countr_zero(keys_.size());
      for (std::uint64_t k : old) {
        if (k != kEmptyKey) keys_[slot_of(k)] = k;
      }
    }
  }
  if (problem_count > kMaxProblems) {
    problems.add("/transfers", std::to_string(problem_count - kMaxProblems) + " more problems like these");
  }
  problems.throw_if_any();
  if (pair_count == 0) return;

  // Route the pairs grouped by source, so a shortest-path tree is built at most once per source
  // and dropped before the next: O(nodes) memory whatever the number of sources.
  std::vector<std::uint64_t> pairs;
  pairs.reserve(pair_count);
  for (std::uint64_t k : keys_) {
    if (k != kEmptyKey) pairs.push_back(k);
  }
  std::sort(pairs.begin(), pairs.end());
  const Router router(topology, policy);
  const Adjacency adjacency(topology);
  std::vector<LinkId> neighbour_link(topology.node_count(), kNoLink);
  std::size_t begin = 0;
  while (begin < pairs.size()) {
    const NodeId src = static_cast<NodeId>(pairs[begin] >> 32);
    std::size_t end = begin;
    while (end < pairs.size() && (pairs[end] >> 32) == src) ++end;
    for (LinkId id : adjacency.out(src)) neighbour_link[topology.link(id).dst] = id;
    // A grid route walked hop by hop finds each link among its node's; a source with many
    // destinations (direct: all of them) is cheaper as one tree of the same routes, read back
    // from each destination (a direct all-reduce on torus-256x4: 6.4 s instead of 8.0 to verify
    // and simulate, as both route it).
    const bool walk_grid = router.uses_dimension_order() && (end - begin) * kTreeShare < topology.node_count();
    RouteTree tree;
    for (std::size_t i = begin; i < end; ++i) {
      const NodeId dst = static_cast<NodeId>(pairs[i] & 0xffffffffu);
      RouteId route = neighbour_link[dst];
      if (router.uses_dimension_order() || route == kNoLink) {
        std::vector<LinkId> path;
        try {
          if (walk_grid) {
            path = router.route(src, dst);
          } else {
            if (tree.source != src) tree = router.tree_from(src);
            path = router.path_in(tree, dst);
          }
        } catch (const std::invalid_argument&) {
          throw InputError("schedule", "/transfers",
                           "a transfer goes from " + topology.node_label(src) + " to " + topology.node_label(dst) +
                               ", which it cannot reach");
        }
        route = path.size() == 1 ? path.front() : append(path, topology);
      }
      values_[slot_of(pairs[i])] = route;
    }
    for (LinkId id : adjacency.out(src)) neighbour_link[topology.link(id).dst] = kNoLink;
    begin = end;
  }
}

std::size_t RouteTable::slot_of(std::uint64_t wanted) const {
  std::size_t slot = static_cast<std::size_t>((wanted * 0x9E3779B97F4A7C15ull) >> shift_);
  while (keys_[slot] != wanted && keys_[slot] != kEmptyKey) slot = (slot + 1) & mask_;
  return slot;
}

RouteId RouteTable::lookup(NodeId src, NodeId dst) const { return values_[slot_of(key(src, dst))]; }

RouteId RouteTable::append(std::span<const LinkId> path, const Topology& topology) {
  double alpha = 0.0;
  double bottleneck = bytes_per_us(topology.link(path.front()).bandwidth_GBps);
  for (LinkId link : path) {
    alpha += topology.link(link).latency_us;
    bottleneck = std::min(bottleneck, bytes_per_us(topology.link(link).bandwidth_GBps));
  }
  alpha_us_.push_back(alpha);
  bottleneck_.push_back(bottleneck);
  return paths_.append(path);
}

}  // namespace tenet::sim
