// SPDX-License-Identifier: MIT
#include "coupled_trees.hpp"

#include <algorithm>
#include <limits>

namespace tenet::synth {
namespace {

/// Rebuilds of every tree on the others' loads after the first packing. After four the most
/// loaded link pair carries at most one unit more than the mean on mesh-6x6, mesh-8x8 (37
/// against 36), mesh-10x10, mesh-16x8 and hypercube3d-4x4x4.
constexpr int kRebuildPasses = 4;

/// Two NPUs joined both ways: a tree edge between them uses both links alike.
struct LinkPair {
  NodeId a = kNoNode;
  NodeId b = kNoNode;
  LinkId a_to_b = kNoLink;
  LinkId b_to_a = kNoLink;
  double capacity_GBps = 0.0;  ///< the slower direction's
};

struct Neighbour {
  NodeId node;
  std::uint32_t pair;
};

}  // namespace

std::optional<CoupledTrees> pack_coupled_trees(const Topology& topology, const std::vector<NodeId>& members,
                                               std::uint32_t per_member, double optimal_GBps,
                                               std::uint32_t tree_count) {
  const std::uint32_t nodes = topology.node_count();
  if (topology.switch_count() > 0 || members.size() != nodes || members.size() < 2 || per_member == 0)
    return std::nullopt;
  const std::uint64_t all_units = static_cast<std::uint64_t>(per_member) * members.size();
  if (tree_count == 0) tree_count = static_cast<std::uint32_t>(all_units);
  if (tree_count > all_units || all_units % tree_count != 0) return std::nullopt;
  const auto units_per_tree = static_cast<std::uint32_t>(all_units / tree_count);
  std::vector<LinkPair> pairs;
  std::vector<std::vector<Neighbour>> neighbours(nodes);
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (link.src >= link.dst) continue;
    const LinkId back = topology.find_link(link.dst, link.src);
    if (back == kNoLink) continue;
    const auto pair = static_cast<std::uint32_t>(pairs.size());
    pairs.push_back({link.src, link.dst, id, back, std::min(link.bandwidth_GBps, topology.link(back).bandwidth_GBps)});
    neighbours[link.src].push_back({link.dst, pair});
    neighbours[link.dst].push_back({link.src, pair});
  }
  for (std::vector<Neighbour>& list : neighbours)
    std::sort(list.begin(), list.end(), [](const Neighbour& x, const Neighbour& y) { return x.node < y.node; });

  // From a root: the nodes by hop distance (breadth first, neighbours by id) and each one's hops,
  // recomputed for each tree it builds rather than kept for every root (members x nodes).
  std::vector<NodeId> order;
  std::vector<std::uint32_t> hops;
  auto breadth_first = [&](NodeId root) {
    order.clear();
    hops.assign(nodes, ~std::uint32_t{0});
    hops[root] = 0;
    order.push_back(root);
    for (std::size_t i = 0; i < order.size(); ++i) {
      for (const Neighbour& next : neighbours[order[i]]) {
        if (hops[next.node] != ~std::uint32_t{0}) continue;
        hops[next.node] = hops[order[i]] + 1;
        order.push_back(next.node);
      }
    }
    return order.size() == nodes;
  };
  for (NodeId root : members) {
    if (!breadth_first(root)) return std::nullopt;
  }

  // Tree t holds, per node, the pair to its parent. With a tree per unit, tree t is rooted at
  // member t % members; fewer trees are rooted at members spread evenly over the member list.
  std::vector<std::vector<std::uint32_t>> parent_pair(tree_count, std::vector<std::uint32_t>(nodes, 0));
  std::vector<double> load(pairs.size(), 0.0);
  auto root_index = [&](std::size_t tree) {
    return units_per_tree == 1 ? tree % members.size() : tree * members.size() / tree_count;
  };
  auto root_of = [&](std::size_t tree) { return members[root_index(tree)]; };
  auto build = [&](std::size_t tree) {
    breadth_first(root_of(tree));
    std::vector<std::uint32_t>& parents = parent_pair[tree];
    for (std::size_t i = 1; i < order.size(); ++i) {
      const NodeId node = order[i];
      std::uint32_t best = ~std::uint32_t{0};
      double best_after = std::numeric_limits<double>::infinity();
      for (const Neighbour& next : neighbours[node]) {
        if (hops[next.node] + 1 != hops[node]) continue;
        const double after = (load[next.pair] + 1.0) / pairs[next.pair].capacity_GBps;
        if (after < best_after) {
          best_after = after;
          best = next.pair;
        }
      }
      parents[node] = best;
      load[best] += 1.0;
    }
  };
  auto unload = [&](std::size_t tree) {
    const NodeId root = root_of(tree);
    for (NodeId node = 0; node < nodes; ++node) {
      if (node != root) load[parent_pair[tree][node]] -= 1.0;
    }
  };
  for (std::size_t tree = 0; tree < tree_count; ++tree) build(tree);
  for (int pass = 0; pass < kRebuildPasses; ++pass) {
    for (std::size_t tree = 0; tree < tree_count; ++tree) {
      unload(tree);
      build(tree);
    }
  }

  double unit_GBps = std::numeric_limits<double>::infinity();
  for (std::uint32_t pair = 0; pair < pairs.size(); ++pair) {
    if (load[pair] > 0.0) unit_GBps = std::min(unit_GBps, pairs[pair].capacity_GBps / load[pair]);
  }
  // A tree's load counts once per pair it crosses; its units share what the pair leaves it.
  unit_GBps /= units_per_tree;
  const TreeUnits units{per_member, unit_GBps, per_member * unit_GBps / optimal_GBps};
  CoupledTrees coupled;
  coupled.gather.units = units;
  coupled.reduce.units = units;
  coupled.gather.chained = units_per_tree > 1;
  coupled.reduce.chained = units_per_tree > 1;
  // One route per link used, in each packing: a broadcast edge takes parent -> child, a reduction
  // child -> parent (tree_schedule reverses the reduce packing's routes, which are one link long).
  std::vector<std::uint32_t> gather_route(topology.link_count(), ~std::uint32_t{0});
  std::vector<std::uint32_t> reduce_route(topology.link_count(), ~std::uint32_t{0});
  auto route_of = [](TreePacking& packing, std::vector<std::uint32_t>& index, LinkId link) {
    if (index[link] == ~std::uint32_t{0}) {
      index[link] = static_cast<std::uint32_t>(packing.routes.size());
      packing.routes.push_back({link});
    }
    return index[link];
  };
  for (std::size_t tree = 0; tree < tree_count; ++tree) {
    const auto root = static_cast<std::uint32_t>(root_index(tree));
    PackedTree down{root, units_per_tree, {}, {}};
    PackedTree up{root, units_per_tree, {}, {}};
    breadth_first(members[root]);
    for (std::size_t i = 1; i < order.size(); ++i) {
      const NodeId child = order[i];
      const LinkPair& pair = pairs[parent_pair[tree][child]];
      const NodeId parent = pair.a == child ? pair.b : pair.a;
      const LinkId to_child = pair.a == parent ? pair.a_to_b : pair.b_to_a;
      const LinkId to_parent = pair.a == parent ? pair.b_to_a : pair.a_to_b;
      down.edges.push_back({parent, child, route_of(coupled.gather, gather_route, to_child)});
      up.edges.push_back({parent, child, route_of(coupled.reduce, reduce_route, to_parent)});
      down.depth.push_back(hops[child]);
      up.depth.push_back(hops[child]);
    }
    coupled.gather.trees.push_back(std::move(down));
    coupled.reduce.trees.push_back(std::move(up));
  }
  return coupled;
}

}  // namespace tenet::synth
