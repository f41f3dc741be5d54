// SPDX-License-Identifier: MIT
#include "tree_schedule.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace tenet::synth {
namespace {

/// Where each tree's transfers of one piece (one per unit and edge) start in the order they are
/// listed.
std::vector<std::size_t> chain_offsets(const TreePacking& packing) {
  std::vector<std::size_t> offsets(packing.trees.size() + 1, 0);
  for (std::size_t t = 0; t < packing.trees.size(); ++t)
    offsets[t + 1] = offsets[t] + static_cast<std::size_t>(packing.trees[t].units) * packing.trees[t].edges.size();
  return offsets;
}

/// Which chunk a tree's unit carries in a piece, which chain of transfers (edge by edge) it
/// follows on, and its place in that chain.
class TreeChunks {
 public:
  TreeChunks(const TreePacking& packing, std::size_t members, std::uint32_t pieces)
      : packing_(packing), pieces_(pieces), chunks_per_member_(packing.units.per_member * pieces) {
    first_.assign(packing.trees.size(), 0);
    chain_.assign(packing.trees.size() + 1, 0);
    if (packing.chained) {
      // Consecutive ranges in tree order; one chain per tree and edge.
      std::uint32_t next = 0;
      for (std::size_t t = 0; t < packing.trees.size(); ++t) {
        first_[t] = next;
        next += packing.trees[t].units * pieces;
        chain_[t + 1] = chain_[t] + packing.trees[t].edges.size();
      }
      return;
    }
    // A root's trees share out its units in order; one chain per unit and edge.
    std::vector<std::uint32_t> next(members, 0);
    for (std::size_t t = 0; t < packing.trees.size(); ++t) {
      first_[t] = next[packing.trees[t].root];
      next[packing.trees[t].root] += packing.trees[t].units;
      chain_[t + 1] = chain_[t] + static_cast<std::size_t>(packing.trees[t].units) * packing.trees[t].edges.size();
    }
  }
  std::size_t chains() const { return chain_.back(); }
  ChunkId chunk(std::size_t t, std::uint32_t unit, std::uint32_t piece) const {
    if (packing_.chained) return first_[t] + position(t, unit, piece);
    return packing_.trees[t].root * chunks_per_member_ + (first_[t] + unit) * pieces_ + piece;
  }
  std::size_t chain(std::size_t t, std::uint32_t unit, std::size_t edge) const {
    return chain_[t] + (packing_.chained ? 0 : static_cast<std::size_t>(unit) * packing_.trees[t].edges.size()) + edge;
  }
  /// The transfer's place among its chain's: a chained tree's units take turns within a piece.
  std::uint32_t position(std::size_t t, std::uint32_t unit, std::uint32_t piece) const {
    return packing_.chained ? piece * packing_.trees[t].units + unit : piece;
  }

 private:
  const TreePacking& packing_;
  std::uint32_t pieces_;
  std::uint32_t chunks_per_member_;
  std::vector<std::uint32_t> first_;
  std::vector<std::size_t> chain_;
};

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
  // A chained tree's chain carries its units one after another, at their bandwidth together.
  const std::uint32_t chained_units = packing.chained && !packing.trees.empty() ? packing.trees.front().units : 1;
  const double step = tree_step(topology, gather, reduce, schedule.chunk_bytes() / chained_units).time_us;
  const std::uint32_t chain_length = pieces * chained_units;
  std::vector<TransferId> deps;
  std::vector<std::vector<TransferId>> owner_reductions;
  double offset = 0.0;

  if (reduce != nullptr) {
    std::vector<RouteId> routes;
    for (std::vector<LinkId> route : reduce->routes) {
      std::reverse(route.begin(), route.end());
      routes.push_back(schedule.add_route(route));
    }
    const TreeChunks carried(*reduce, members.size(), pieces);
    const std::vector<std::size_t> chains = chain_offsets(*reduce);
    // Per chain, its last `in_flight` transfers, by position modulo in_flight.
    std::vector<TransferId> last(carried.chains() * in_flight, ~TransferId{0});
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
          const ChunkId chunk = carried.chunk(t, unit, piece);
          const std::uint32_t position = carried.position(t, unit, piece);
          // Leaves first: an edge's child collects its own children's reductions before it sends.
          for (std::size_t e = tree.edges.size(); e-- > 0;) {
            const TreeEdge& edge = tree.edges[e];
            TransferId& chain = last[carried.chain(t, unit, e) * in_flight + position % in_flight];
            deps = into[edge.child];
            if (chain != ~TransferId{0}) deps.push_back(chain);
            const std::uint32_t slot = position + tree_depth - tree.depth[e];
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
    offset = (chain_length + depth) * step;
  }

  if (gather != nullptr) {
    std::vector<RouteId> routes;
    for (const std::vector<LinkId>& route : gather->routes) routes.push_back(schedule.add_route(route));
    const TreeChunks carried(*gather, members.size(), pieces);
    std::vector<TransferId> last(carried.chains() * in_flight, ~TransferId{0});
    std::vector<TransferId> delivered(topology.node_count(), ~TransferId{0});
    for (std::uint32_t piece = 0; piece < pieces; ++piece) {
      for (std::size_t t = 0; t < gather->trees.size(); ++t) {
        const PackedTree& tree = gather->trees[t];
        for (std::uint32_t unit = 0; unit < tree.units; ++unit) {
          const ChunkId chunk = carried.chunk(t, unit, piece);
          const std::uint32_t position = carried.position(t, unit, piece);
          const NodeId owner = members[tree.root];
          for (std::size_t e = 0; e < tree.edges.size(); ++e) {
            const TreeEdge& edge = tree.edges[e];
            TransferId& chain = last[carried.chain(t, unit, e) * in_flight + position % in_flight];
            deps.clear();
            if (edge.parent != owner) {
              deps.push_back(delivered[edge.parent]);
            } else if (!owner_reductions.empty()) {
              deps = owner_reductions[chunk];
            }
            if (chain != ~TransferId{0}) deps.push_back(chain);
            const double start = offset + (position + tree.depth[e] - 1) * step;
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
