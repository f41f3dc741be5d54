// SPDX-License-Identifier: MIT
#include "tree_schedule.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace tenet::synth {
namespace {

/// The first of each tree's units among its root's (a root's trees share out its units in order).
std::vector<std::uint32_t> first_units(const TreePacking& packing, std::size_t members) {
  std::vector<std::uint32_t> first(packing.trees.size());
  std::vector<std::uint32_t> next(members, 0);
  for (std::size_t t = 0; t < packing.trees.size(); ++t) {
    first[t] = next[packing.trees[t].root];
    next[packing.trees[t].root] += packing.trees[t].units;
  }
  return first;
}

/// Where each tree's chains of transfers (one per unit and edge) start in a flat array.
std::vector<std::size_t> chain_offsets(const TreePacking& packing) {
  std::vector<std::size_t> offsets(packing.trees.size() + 1, 0);
  for (std::size_t t = 0; t < packing.trees.size(); ++t)
    offsets[t + 1] = offsets[t] + static_cast<std::size_t>(packing.trees[t].units) * packing.trees[t].edges.size();
  return offsets;
}

double route_alpha_us(const Topology& topology, const std::vector<LinkId>& route) {
  double alpha = 0.0;
  for (LinkId link : route) alpha += topology.link(link).latency_us;
  return alpha;
}

std::uint32_t deepest(const PackedTree& tree) {
  return tree.depth.empty() ? 0 : *std::max_element(tree.depth.begin(), tree.depth.end());
}

}  // namespace

TreeStep tree_step(const Topology& topology, const TreePacking* gather, const TreePacking* reduce, double piece_bytes) {
  // A chunk over the slowest route at a unit's bandwidth.
  TreeStep step;
  for (const TreePacking* part : {gather, reduce}) {
    if (part == nullptr) continue;
    for (const std::vector<LinkId>& route : part->routes)
      step.alpha_us = std::max(step.alpha_us, route_alpha_us(topology, route));
  }
  const TreePacking& packing = gather != nullptr ? *gather : *reduce;
  step.time_us = step.alpha_us + piece_bytes / (packing.units.unit_GBps * 1e3);
  return step;
}

Schedule tree_schedule(const Topology& topology, CollectiveKind kind, std::uint64_t size_bytes,
                       const std::vector<NodeId>& members, const TreePacking* gather, const TreePacking* reduce,
                       std::uint32_t pieces, const TreePacing& pacing) {
  if (pacing.in_flight == 0) throw std::logic_error("tree_schedule: no piece may be in flight");
  const std::uint32_t in_flight = pacing.in_flight;
  const bool senders_keep_pace = pacing.senders_keep_pace;
  const MirrorTimes* mirror = pacing.mirror;
  const TreePacking& packing = gather != nullptr ? *gather : *reduce;
  const std::uint32_t chunks_per_member = packing.units.per_member * pieces;
  Schedule schedule(kind, size_bytes, members, chunks_per_member, "synth");
  auto chunk_of = [&](std::uint32_t root, std::uint32_t unit, std::uint32_t piece) {
    return root * chunks_per_member + unit * pieces + piece;
  };
  const double step = tree_step(topology, gather, reduce, schedule.chunk_bytes()).time_us;
  std::vector<TransferId> deps;
  std::vector<std::vector<TransferId>> owner_reductions;
  double offset = 0.0;

  if (reduce != nullptr) {
    std::vector<RouteId> routes;
    for (std::vector<LinkId> route : reduce->routes) {
      std::reverse(route.begin(), route.end());
      routes.push_back(schedule.add_route(route));
    }
    const std::vector<std::uint32_t> first = first_units(*reduce, members.size());
    const std::vector<std::size_t> chains = chain_offsets(*reduce);
    // Per chain, its last `in_flight` transfers, by piece modulo in_flight.
    std::vector<TransferId> last(chains.back() * in_flight, ~TransferId{0});
    if (mirror != nullptr &&
        (mirror->start_us.size() != pieces * chains.back() || mirror->end_us.size() != mirror->start_us.size())) {
      throw std::logic_error("tree_schedule: the mirrored times are not those of this packing's all-gather");
    }
    std::vector<std::vector<TransferId>> into(topology.node_count());
    // Per sender, its reductions so far by their (planned or mirrored) end.
    std::vector<std::map<double, TransferId>> sent_by(topology.node_count());
    if (gather != nullptr) owner_reductions.resize(static_cast<std::size_t>(members.size()) * chunks_per_member);
    std::uint32_t depth = 0;
    for (std::uint32_t piece = 0; piece < pieces; ++piece) {
      for (std::size_t t = 0; t < reduce->trees.size(); ++t) {
        const PackedTree& tree = reduce->trees[t];
        const std::uint32_t tree_depth = deepest(tree);
        depth = std::max(depth, tree_depth);
        for (std::uint32_t unit = 0; unit < tree.units; ++unit) {
          const ChunkId chunk = chunk_of(tree.root, first[t] + unit, piece);
          // Leaves first: an edge's child collects its own children's reductions before it sends.
          for (std::size_t e = tree.edges.size(); e-- > 0;) {
            const TreeEdge& edge = tree.edges[e];
            TransferId& chain = last[(chains[t] + static_cast<std::size_t>(unit) * tree.edges.size() + e) * in_flight +
                                     piece % in_flight];
            deps = into[edge.child];
            if (chain != ~TransferId{0}) deps.push_back(chain);
            const std::uint32_t slot = piece + tree_depth - tree.depth[e];
            double begins = slot;
            double ends = slot + 1;
            if (mirror != nullptr) {
              // The all-gather listed piece, tree, unit, edge in order; reversed, its last piece
              // is the first reduced.
              const std::size_t image = static_cast<std::size_t>(pieces - 1 - piece) * chains.back() + chains[t] +
                                        static_cast<std::size_t>(unit) * tree.edges.size() + e;
              begins = mirror->time_us - mirror->end_us[image];
              ends = mirror->time_us - mirror->start_us[image];
            }
            // The sender's own transfer planned to end last by this one's start (in pipeline
            // steps, exact, or mirrored times), among those listed so far.
            std::map<double, TransferId>& own = sent_by[edge.child];
            if (auto before = own.upper_bound(begins); senders_keep_pace && before != own.begin()) {
              --before;
              if (std::find(deps.begin(), deps.end(), before->second) == deps.end()) deps.push_back(before->second);
              std::sort(deps.begin(), deps.end());
            }
            const double start = slot * step;
            chain = schedule.add(edge.child, edge.parent, TransferKind::kReduce, {&chunk, 1}, deps, start, start + step,
                                 Schedule::on_route(routes[edge.route]));
            if (senders_keep_pace) own[ends] = chain;
            into[edge.parent].push_back(chain);
            into[edge.child].clear();
          }
          const NodeId owner = members[tree.root];
          if (gather != nullptr) owner_reductions[chunk] = into[owner];
          into[owner].clear();
        }
      }
    }
    offset = (pieces + depth) * step;
  }

  if (gather != nullptr) {
    std::vector<RouteId> routes;
    for (const std::vector<LinkId>& route : gather->routes) routes.push_back(schedule.add_route(route));
    const std::vector<std::uint32_t> first = first_units(*gather, members.size());
    const std::vector<std::size_t> chains = chain_offsets(*gather);
    std::vector<TransferId> last(chains.back() * in_flight, ~TransferId{0});
    std::vector<TransferId> delivered(topology.node_count(), ~TransferId{0});
    for (std::uint32_t piece = 0; piece < pieces; ++piece) {
      for (std::size_t t = 0; t < gather->trees.size(); ++t) {
        const PackedTree& tree = gather->trees[t];
        for (std::uint32_t unit = 0; unit < tree.units; ++unit) {
          const ChunkId chunk = chunk_of(tree.root, first[t] + unit, piece);
          const NodeId owner = members[tree.root];
          for (std::size_t e = 0; e < tree.edges.size(); ++e) {
            const TreeEdge& edge = tree.edges[e];
            TransferId& chain = last[(chains[t] + static_cast<std::size_t>(unit) * tree.edges.size() + e) * in_flight +
                                     piece % in_flight];
            deps.clear();
            if (edge.parent != owner) {
              deps.push_back(delivered[edge.parent]);
            } else if (!owner_reductions.empty()) {
              deps = owner_reductions[chunk];
            }
            if (chain != ~TransferId{0}) deps.push_back(chain);
            const double start = offset + (piece + tree.depth[e] - 1) * step;
            chain = schedule.add(edge.parent, edge.child, TransferKind::kCopy, {&chunk, 1}, deps, start, start + step,
                                 Schedule::on_route(routes[edge.route]));
            delivered[edge.child] = chain;
          }
        }
      }
    }
  }
  return schedule;
}

}  // namespace tenet::synth
