// SPDX-License-Identifier: MIT
#include "box_rails.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "schedule_assembly.hpp"
#include "tenet/common/parallel.hpp"

namespace tenet::synth {
namespace {

/// Link speeds tried as the boundary of a box: past this many distinct speeds the network is no
/// cluster of identical boxes (random heterogeneous networks have one per link).
constexpr std::size_t kMaxSpeeds = 32;
/// Pipeline depths tried: pieces per member.
constexpr std::uint32_t kPieceCounts[] = {1, 2, 4, 8, 16, 32};
/// Transfers a rail member may have in flight at once: with one, each transfer's alpha waits for
/// the one before it to end; with two, it runs while the other's bytes move.
constexpr std::uint32_t kRailInFlight = 2;
/// More pieces are tried only while pieces x rail rounds stay within this: a long rail pipelines
/// through its groups of rounds, a short one (two boxes have one round) needs pieces.
constexpr std::uint32_t kPipelinedRounds = 64;
/// Depths whose rail piece is mostly alpha are not tried past the first. With two rail transfers
/// in flight a piece's alpha runs beside the other's bytes, so the best depth's piece can be more
/// alpha than bytes: all-reduce of 16 MiB on h100-4x8-rail 95.6 -> 87.6 us at 4 pieces (0.60
/// alpha), on mi250-2x16-ib 147.0 -> 131.2 us at 16 (the cut was 0.55, as in tree_method.cpp;
/// over the shipped boxed networks, 1 MiB to 1 GiB, 8 of 198 schedules got faster, none slower).
constexpr double kMaxPieceAlphaShare = 0.8;
/// Nothing is tried where a whole block's rail transfer is more alpha than this: each member sends
/// one per other box, one after another (ring-fc-switch-2x4x128 all-reduce: at 16 MiB, 0.75 of
/// it, 215.0 us against the matching's 227.9; at 1 MiB, 0.98, the matching wins).
constexpr double kMaxRailAlphaShare = 0.8;

struct UnionFind {
  std::vector<NodeId> parent;
  explicit UnionFind(std::size_t size) : parent(size) { std::iota(parent.begin(), parent.end(), NodeId{0}); }
  NodeId find(NodeId node) {
    while (parent[node] != node) node = parent[node] = parent[parent[node]];
    return node;
  }
  void join(NodeId a, NodeId b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

/// Members grouped by the component of the links of at least `speed`, each group in member order;
/// empty unless every group has the same size, at least two, and there are at least two groups.
std::vector<std::vector<NodeId>> equal_groups(const Topology& topology, const std::vector<NodeId>& members,
                                              double speed, std::vector<NodeId>& component) {
  UnionFind sets(topology.node_count());
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (link.bandwidth_GBps >= speed) sets.join(link.src, link.dst);
  }
  component.resize(topology.node_count());
  for (NodeId node = 0; node < topology.node_count(); ++node) component[node] = sets.find(node);
  std::vector<NodeId> roots;
  for (NodeId member : members) roots.push_back(component[member]);
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  if (roots.size() < 2) return {};
  std::vector<std::vector<NodeId>> groups(roots.size());
  for (NodeId member : members) {
    const auto at = std::lower_bound(roots.begin(), roots.end(), component[member]) - roots.begin();
    groups[static_cast<std::size_t>(at)].push_back(member);
  }
  for (const std::vector<NodeId>& group : groups) {
    if (group.size() != groups.front().size() || group.size() < 2) return {};
  }
  return groups;
}

double route_alpha_us(const Topology& topology, std::span<const LinkId> route) {
  double alpha = 0.0;
  for (LinkId link : route) alpha += topology.link(link).latency_us;
  return alpha;
}

double route_GBps(const Topology& topology, std::span<const LinkId> route) {
  double slowest = std::numeric_limits<double>::infinity();
  for (LinkId link : route) slowest = std::min(slowest, topology.link(link).bandwidth_GBps);
  return slowest;
}

}  // namespace

std::vector<std::uint32_t> round_groups(std::uint32_t rounds, std::uint32_t groups) {
  groups = std::clamp<std::uint32_t>(groups, 1, rounds);
  std::vector<std::uint32_t> group_of(rounds);
  for (std::uint32_t round = 0; round < rounds; ++round)
    group_of[round] = static_cast<std::uint32_t>(std::uint64_t{round} * groups / rounds);
  return group_of;
}

std::optional<BoxRails> find_box_rails(const Topology& topology, const std::vector<NodeId>& members) {
  if (members.size() < 4) return std::nullopt;
  std::set<double, std::greater<>> speeds;
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    speeds.insert(topology.link(id).bandwidth_GBps);
    if (speeds.size() > kMaxSpeeds) return std::nullopt;
  }
  // The slowest speed at which the members still fall into equal boxes: the largest boxes.
  std::vector<std::vector<NodeId>> groups;
  std::vector<NodeId> component;
  double boundary = 0.0;
  for (double speed : speeds) {
    std::vector<NodeId> at;
    std::vector<std::vector<NodeId>> found = equal_groups(topology, members, speed, at);
    if (found.empty()) {
      if (!groups.empty()) break;
      continue;
    }
    groups = std::move(found);
    component = std::move(at);
    boundary = speed;
  }
  if (groups.empty()) return std::nullopt;

  BoxRails result;
  result.box_link_GBps = boundary;
  result.rail_GBps = std::numeric_limits<double>::infinity();
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (link.bandwidth_GBps >= boundary) continue;
    result.rail_alpha_us = std::max(result.rail_alpha_us, 2.0 * link.latency_us);
    result.rail_GBps = std::min(result.rail_GBps, link.bandwidth_GBps);
  }
  if (!std::isfinite(result.rail_GBps)) return std::nullopt;  // boxes no fabric joins
  // Position: the fabric node a member reaches first over slower links (its rail switch, its
  // NIC's switch), then its id, so that a rail's members share what they can of the fabric.
  std::vector<NodeId> fabric(topology.node_count(), kNoNode);
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (link.bandwidth_GBps >= boundary) continue;
    fabric[link.src] = std::min(fabric[link.src], link.dst);
    fabric[link.dst] = std::min(fabric[link.dst], link.src);
  }
  std::vector<std::uint32_t> local(topology.node_count(), ~std::uint32_t{0});
  for (std::vector<NodeId>& group : groups) {
    std::stable_sort(group.begin(), group.end(),
                     [&](NodeId a, NodeId b) { return std::pair(fabric[a], a) < std::pair(fabric[b], b); });
    Box box;
    box.members = group;
    // Its nodes: members in position order, the other NPUs of its component, then its switches.
    const NodeId root = component[group.front()];
    std::vector<NodeId> nodes = group;
    std::vector<NodeId> switches;
    for (NodeId node = 0; node < topology.node_count(); ++node) {
      if (component[node] != root) continue;
      if (topology.is_switch(node)) {
        switches.push_back(node);
      } else if (std::find(group.begin(), group.end(), node) == group.end()) {
        nodes.push_back(node);
      }
    }
    const auto npus = static_cast<std::uint32_t>(nodes.size());
    std::vector<std::string> names;
    for (NodeId node : switches) {
      names.push_back(topology.switch_name(node));
      nodes.push_back(node);
    }
    for (std::uint32_t i = 0; i < nodes.size(); ++i) local[nodes[i]] = i;
    box.inside = Topology(npus, std::move(names));
    for (NodeId node : nodes) {
      for (LinkId id : topology.out_links(node)) {
        Link link = topology.link(id);
        if (link.bandwidth_GBps < boundary || component[link.dst] != root) continue;
        link.src = local[link.src];
        link.dst = local[link.dst];
        box.inside.add_link(link);
        box.link_of.push_back(id);
      }
    }
    result.boxes.push_back(std::move(box));
  }
  return result;
}

Schedule box_rails_schedule(const Topology& topology, CollectiveKind kind, std::uint64_t size_bytes,
                            const std::vector<NodeId>& members, const BoxRails& boxes,
                            const std::vector<TreePacking>* gather, const std::vector<TreePacking>* reduce,
                            std::uint32_t pieces, std::uint32_t groups) {
  const std::vector<TreePacking>& any = gather != nullptr ? *gather : *reduce;
  const std::uint32_t units = any.front().units.per_member;
  const std::uint32_t per_member = units * pieces;
  Schedule schedule(kind, size_bytes, members, per_member, "synth");
  const auto box_count = static_cast<std::uint32_t>(boxes.boxes.size());
  const std::uint32_t positions = boxes.positions();
  // Rail round s (0: the member's own block) belongs to this group of the box phase.
  const std::vector<std::uint32_t> group_of = round_groups(box_count, groups);
  groups = group_of.back() + 1;
  // Groups are consecutive rounds: group g holds rounds [group_start[g], group_start[g + 1]).
  std::vector<std::uint32_t> group_start(groups + 1, box_count);
  for (std::uint32_t round = box_count; round-- > 0;) group_start[group_of[round]] = round;
  std::vector<std::uint32_t> index_of(topology.node_count(), 0);
  for (std::uint32_t i = 0; i < members.size(); ++i) index_of[members[i]] = i;
  auto chunk_of = [&](NodeId member, std::uint32_t unit, std::uint32_t piece) {
    return static_cast<ChunkId>(index_of[member] * per_member + unit * pieces + piece);
  };
  const double chunk_bytes = schedule.chunk_bytes();

  // Each box's routes in the schedule, in the input's link ids, sender to receiver.
  auto routes_of = [&](const std::vector<TreePacking>& packings, bool reversed) {
    std::vector<std::vector<RouteId>> routes(box_count);
    for (std::uint32_t b = 0; b < box_count; ++b) {
      for (const std::vector<LinkId>& route : packings[b].routes) {
        std::vector<LinkId> links;
        for (LinkId link : route) links.push_back(boxes.boxes[b].link_of[link]);
        if (reversed) std::reverse(links.begin(), links.end());
        routes[b].push_back(schedule.add_route(links));
      }
    }
    return routes;
  };
  std::vector<std::vector<RouteId>> gather_routes;
  std::vector<std::vector<RouteId>> reduce_routes;
  if (gather != nullptr) gather_routes = routes_of(*gather, false);
  if (reduce != nullptr) reduce_routes = routes_of(*reduce, true);
  std::vector<double> route_alpha;
  std::vector<double> route_speed;
  for (RouteId route = 0; route < schedule.route_count(); ++route) {
    route_alpha.push_back(route_alpha_us(topology, schedule.route_links(route)));
    route_speed.push_back(route_GBps(topology, schedule.route_links(route)));
  }

  // Planned times: each transfer as soon as its dependencies end, alone on its route. The replay
  // retimes the schedule; these only order the plan. Rail transfers name no route (the
  // network's own).
  const double rail_alpha = boxes.rail_alpha_us;
  const double rail_GBps = boxes.rail_GBps;
  std::vector<double> ends;
  auto add = [&](NodeId src, NodeId dst, TransferKind how, const std::vector<ChunkId>& chunks,
                 const std::vector<TransferId>& deps, RouteId route) {
    const double alpha = route == kNoRoute ? rail_alpha : route_alpha[route];
    const double GBps = route == kNoRoute ? rail_GBps : route_speed[route];
    double start = 0.0;
    for (TransferId dep : deps) start = std::max(start, ends[dep]);
    const double end = start + alpha + chunk_bytes * static_cast<double>(chunks.size()) / (GBps * 1e3);
    const TransferId id =
        schedule.add(src, dst, how, chunks, deps, start, end, route == kNoRoute ? kNoLink : Schedule::on_route(route));
    ends.push_back(end);
    return id;
  };

  constexpr TransferId kNone = ~TransferId{0};
  // One box phase's trees: where each tree's chains (one per unit and edge: pieces and groups
  // follow one another down each edge, the first needed first) start, and
  // the first of each tree's units among its root's.
  struct BoxTrees {
    const std::vector<TreePacking>* packings = nullptr;
    std::vector<std::vector<std::size_t>> chains;
    std::vector<std::vector<std::uint32_t>> first_unit;
    std::vector<std::vector<TransferId>> last;
  };
  auto box_trees = [&](const std::vector<TreePacking>* packings) {
    BoxTrees trees;
    if (packings == nullptr) return trees;
    trees.packings = packings;
    trees.chains.resize(box_count);
    trees.first_unit.resize(box_count);
    trees.last.resize(box_count);
    for (std::uint32_t b = 0; b < box_count; ++b) {
      const TreePacking& packing = (*packings)[b];
      trees.chains[b].assign(packing.trees.size() + 1, 0);
      trees.first_unit[b].resize(packing.trees.size());
      std::vector<std::uint32_t> next(positions, 0);
      for (std::size_t t = 0; t < packing.trees.size(); ++t) {
        const PackedTree& tree = packing.trees[t];
        trees.chains[b][t + 1] = trees.chains[b][t] + static_cast<std::size_t>(tree.units) * tree.edges.size();
        trees.first_unit[b][t] = next[tree.root];
        next[tree.root] += tree.units;
      }
      trees.last[b].assign(trees.chains[b].back(), kNone);
    }
    return trees;
  };
  BoxTrees reduce_trees = box_trees(reduce);
  BoxTrees gather_trees = box_trees(gather);

  // One rail phase's chains: per member, its last kRailInFlight rail transfers by count modulo
  // that, and the first of each lane in the current stretch of rounds that wait on the same data.
  struct RailChains {
    std::vector<TransferId> last;
    std::vector<TransferId> first;
    std::vector<std::uint32_t> sent;
  };
  auto rail_chains = [&] {
    return RailChains{std::vector<TransferId>(members.size() * kRailInFlight, kNone),
                      std::vector<TransferId>(members.size() * kRailInFlight, kNone),
                      std::vector<std::uint32_t>(members.size(), 0)};
  };
  RailChains reduce_rail = rail_chains();
  RailChains gather_rail = rail_chains();

  // Within the current piece, per member: the reductions into it inside its box (per group), all
  // reductions into it, and the rail copy into it of each round.
  std::vector<std::vector<TransferId>> box_reduced_into(members.size() * groups);
  std::vector<std::vector<TransferId>> reduced_into(members.size());
  std::vector<TransferId> copied_into(members.size() * box_count, kNone);
  std::vector<std::vector<TransferId>> into(topology.node_count());  // one tree's reductions
  std::vector<TransferId> delivered(topology.node_count(), kNone);
  std::vector<TransferId> deps;
  std::vector<ChunkId> chunks;

  // `from` sends `owner`'s piece (every unit) in the rail round `round`; the round is the
  // `stretch`-th of those that wait on `waits`: the first few of a stretch name them, the later
  // ones wait through their chains and the first of their lane, where a check of the data finds
  // them one step away.
  auto rail_send = [&](NodeId from, NodeId to, TransferKind how, std::uint32_t piece, NodeId owner,
                       const std::vector<TransferId>& waits, std::uint32_t stretch, RailChains& rail) {
    chunks.clear();
    for (std::uint32_t unit = 0; unit < units; ++unit) chunks.push_back(chunk_of(owner, unit, piece));
    const std::uint32_t sender = index_of[from];
    TransferId& chain = rail.last[sender * kRailInFlight + rail.sent[sender] % kRailInFlight];
    TransferId& first = rail.first[sender * kRailInFlight + stretch % kRailInFlight];
    deps.clear();
    if (stretch < kRailInFlight) {
      deps = waits;
    } else {
      deps.push_back(first);
    }
    if (chain != kNone) deps.push_back(chain);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    chain = add(from, to, how, chunks, deps, kNoRoute);
    if (stretch < kRailInFlight) first = chain;
    ++rail.sent[sender];
    return chain;
  };
  // The chunks a box tree of root position `root` carries for `unit` and `group`: those of the
  // rail members whose rounds fall in the group, as seen from the rail member `at` (rail index):
  // owners at + s for reductions (sent in round s), at - s for copies (received in round s).
  auto group_chunks = [&](std::uint32_t root, std::uint32_t at, std::uint32_t unit, std::uint32_t group,
                          std::uint32_t piece, bool reducing) {
    chunks.clear();
    for (std::uint32_t round = group_start[group]; round < group_start[group + 1]; ++round) {
      const std::uint32_t owner = reducing ? (at + round) % box_count : (at + box_count - round) % box_count;
      chunks.push_back(chunk_of(boxes.boxes[owner].members[root], unit, piece));
    }
  };

  // For every box, tree and unit of `trees`: sets `chunks` to the group's and calls
  // visit(box, tree, the chains of its edges for that unit).
  auto each_tree_unit = [&](BoxTrees& trees, std::uint32_t group, std::uint32_t piece, bool reducing,
                            const auto& visit) {
    for (std::uint32_t b = 0; b < box_count; ++b) {
      const TreePacking& packing = (*trees.packings)[b];
      for (std::size_t t = 0; t < packing.trees.size(); ++t) {
        const PackedTree& tree = packing.trees[t];
        for (std::uint32_t unit = 0; unit < tree.units; ++unit) {
          group_chunks(tree.root, b, trees.first_unit[b][t] + unit, group, piece, reducing);
          visit(b, tree,
                trees.last[b].data() + trees.chains[b][t] + static_cast<std::size_t>(unit) * tree.edges.size());
        }
      }
    }
  };

  for (std::uint32_t piece = 0; piece < pieces; ++piece) {
    for (std::vector<TransferId>& list : box_reduced_into) list.clear();
    for (std::vector<TransferId>& list : reduced_into) list.clear();
    if (reduce != nullptr) {
      // Inside each box, each group of a rail's blocks is reduced to that rail's member, leaves
      // first, in the order the rail sends them on.
      for (std::uint32_t group = 0; group < groups; ++group) {
        each_tree_unit(
            reduce_trees, group, piece, true, [&](std::uint32_t b, const PackedTree& tree, TransferId* chains) {
              const std::vector<NodeId>& in_box = boxes.boxes[b].members;
              const NodeId root = in_box[tree.root];
              for (std::size_t e = tree.edges.size(); e-- > 0;) {
                const TreeEdge& edge = tree.edges[e];
                const NodeId child = in_box[edge.child];
                const NodeId parent = in_box[edge.parent];
                deps = into[child];
                if (chains[e] != kNone) deps.push_back(chains[e]);
                std::sort(deps.begin(), deps.end());
                chains[e] = add(child, parent, TransferKind::kReduce, chunks, deps, reduce_routes[b][edge.route]);
                into[parent].push_back(chains[e]);
                into[child].clear();
              }
              std::vector<TransferId>& done = box_reduced_into[index_of[root] * groups + group];
              done.insert(done.end(), into[root].begin(), into[root].end());
              reduced_into[index_of[root]].insert(reduced_into[index_of[root]].end(), into[root].begin(),
                                                  into[root].end());
              into[root].clear();
            });
      }
      // Across each rail, to the block's owner: round s goes to rail index + s.
      for (std::uint32_t p = 0; p < positions; ++p) {
        for (std::uint32_t round = 1; round < box_count; ++round) {
          const std::uint32_t group = group_of[round];
          const std::uint32_t stretch = round - std::max<std::uint32_t>(group_start[group], 1);
          for (std::uint32_t i = 0; i < box_count; ++i) {
            const NodeId from = boxes.boxes[i].members[p];
            const NodeId to = boxes.boxes[(i + round) % box_count].members[p];
            const TransferId id = rail_send(from, to, TransferKind::kReduce, piece, to,
                                            box_reduced_into[index_of[from] * groups + group], stretch, reduce_rail);
            reduced_into[index_of[to]].push_back(id);
          }
        }
      }
    }
    if (gather != nullptr) {
      // Across each rail, from the block's owner (once its reductions are in, for all-reduce).
      for (std::uint32_t p = 0; p < positions; ++p) {
        for (std::uint32_t round = 1; round < box_count; ++round) {
          for (std::uint32_t i = 0; i < box_count; ++i) {
            const NodeId from = boxes.boxes[i].members[p];
            const NodeId to = boxes.boxes[(i + round) % box_count].members[p];
            copied_into[index_of[to] * box_count + round] = rail_send(
                from, to, TransferKind::kCopy, piece, from, reduced_into[index_of[from]], round - 1, gather_rail);
          }
        }
      }
      // Inside each box, each member broadcasts its rail's blocks, a group of rounds at a time.
      for (std::uint32_t group = 0; group < groups; ++group) {
        each_tree_unit(
            gather_trees, group, piece, false, [&](std::uint32_t b, const PackedTree& tree, TransferId* chains) {
              const std::vector<NodeId>& in_box = boxes.boxes[b].members;
              const NodeId root = in_box[tree.root];
              for (std::size_t e = 0; e < tree.edges.size(); ++e) {
                const TreeEdge& edge = tree.edges[e];
                const NodeId child = in_box[edge.child];
                const NodeId parent = in_box[edge.parent];
                deps.clear();
                if (parent != root) {
                  deps.push_back(delivered[parent]);
                } else {
                  for (std::uint32_t round = std::max<std::uint32_t>(group_start[group], 1);
                       round < group_start[group + 1]; ++round)
                    deps.push_back(copied_into[index_of[root] * box_count + round]);
                  if (group == 0) {
                    const std::vector<TransferId>& own = reduced_into[index_of[root]];
                    deps.insert(deps.end(), own.begin(), own.end());
                  }
                }
                if (chains[e] != kNone) deps.push_back(chains[e]);
                std::sort(deps.begin(), deps.end());
                chains[e] = add(parent, child, TransferKind::kCopy, chunks, deps, gather_routes[b][edge.route]);
                delivered[child] = chains[e];
              }
            });
      }
    }
  }
  return schedule;
}

std::optional<BoxRailsResult> synthesize_box_rails(const Topology& topology, CollectiveKind kind,
                                                   std::uint64_t size_bytes, const std::vector<NodeId>& members,
                                                   const BoxRails& boxes, double max_transfers,
                                                   const std::function<double(const Schedule&)>& file_time) {
  const bool gathers = kind != CollectiveKind::kReduceScatter;
  const bool reduces = kind != CollectiveKind::kAllGather;
  const std::size_t box_count = boxes.boxes.size();
  const double n = static_cast<double>(members.size());
  const double rail_alpha = boxes.rail_alpha_us;
  const double rail_GBps = boxes.rail_GBps;
  const double block_us = static_cast<double>(size_bytes) / n / (rail_GBps * 1e3);
  if (rail_alpha > kMaxRailAlphaShare * (rail_alpha + block_us)) return std::nullopt;
  std::vector<NodeId> local(boxes.positions());
  std::iota(local.begin(), local.end(), NodeId{0});
  // Trees inside every box, for each choice of units (the same in every box): the packing's own
  // (tree_units.cpp: near the box's optimal rate) and a single unit, whose trees carry a fifth
  // as many transfers and can keep pace with the rail all the same (ring-fc-switch-2x4x128: 5
  // units at 14.3 GB/s, 1 at 50).
  struct Packings {
    std::vector<TreePacking> gather;
    std::vector<TreePacking> reduce;
  };
  std::vector<std::vector<std::optional<Packings>>> per_box(box_count);
  parallel_for(std::size_t{0}, box_count, [&](std::size_t b) {
    const Topology& inside = boxes.boxes[b].inside;
    const Topology transposed = transpose(inside);
    const double optimal = optimal_rate_GBps(inside, kind, local);
    const std::vector<TreeUnits> offered =
        gathers ? choose_tree_units(inside, reduces ? &transposed : nullptr, local, optimal)
                : choose_tree_units(transposed, nullptr, local, optimal);
    std::optional<TreeUnits> single;
    {
      const std::optional<TreeUnits> out = gathers ? units_of_count(inside, local, 1, optimal) : std::nullopt;
      const std::optional<TreeUnits> in = reduces ? units_of_count(transposed, local, 1, optimal) : std::nullopt;
      if ((out || !gathers) && (in || !reduces)) single = !out || (in && in->unit_GBps < out->unit_GBps) ? in : out;
    }
    for (const std::optional<TreeUnits>& units :
         {offered.empty() ? std::optional<TreeUnits>() : offered.front(), single}) {
      std::optional<Packings> packed;
      if (units) {
        packed.emplace();
        std::optional<TreePacking> out = gathers ? pack_trees(inside, local, *units) : std::nullopt;
        std::optional<TreePacking> in = reduces ? pack_trees(transposed, local, *units) : std::nullopt;
        if ((gathers && !out) || (reduces && !in)) {
          packed.reset();
        } else {
          if (out) packed->gather.push_back(std::move(*out));
          if (in) packed->reduce.push_back(std::move(*in));
        }
      }
      per_box[b].push_back(std::move(packed));
    }
  });
  std::vector<Packings> choices;
  for (std::size_t choice = 0; choice < 2; ++choice) {
    Packings all;
    bool complete = true;
    for (std::size_t b = 0; b < box_count && complete; ++b) {
      const std::optional<Packings>& packed = per_box[b][choice];
      const std::optional<Packings>& first = per_box[0][choice];
      const auto units_of = [](const Packings& p) {
        return (p.gather.empty() ? p.reduce : p.gather).front().units.per_member;
      };
      complete = packed && first && units_of(*packed) == units_of(*first);
      if (!complete) break;
      if (gathers) all.gather.push_back(packed->gather.front());
      if (reduces) all.reduce.push_back(packed->reduce.front());
    }
    const auto units_of_all = [](const Packings& p) {
      return (p.gather.empty() ? p.reduce : p.gather).front().units.per_member;
    };
    if (complete && (choices.empty() || units_of_all(choices.front()) != units_of_all(all)))
      choices.push_back(std::move(all));
  }
  if (choices.empty()) return std::nullopt;

  // Candidates: for each choice of units, every rail round its own group (the finest pipeline),
  // halved until the schedule fits the budget; one piece, and more where the rail has too few
  // rounds to pipeline on (two boxes have one), while pieces are not mostly alpha.
  struct Candidate {
    std::size_t choice;
    std::uint32_t pieces;
    std::uint32_t groups;
  };
  const double phases = gathers && reduces ? 2.0 : 1.0;
  const double rounds = static_cast<double>(box_count);
  std::vector<Candidate> candidates;
  for (std::size_t choice = 0; choice < choices.size(); ++choice) {
    const Packings& packed = choices[choice];
    const double units = (packed.gather.empty() ? packed.reduce : packed.gather).front().units.per_member;
    const double edges = units * (static_cast<double>(boxes.positions()) - 1.0);
    auto transfers = [&](std::uint32_t pieces, std::uint32_t groups) {
      return phases * n * pieces * (rounds - 1.0 + edges * groups);
    };
    for (std::uint32_t pieces : kPieceCounts) {
      if (pieces > 1 && box_count * pieces > kPipelinedRounds) break;
      const double rail_bytes = static_cast<double>(size_bytes) / n / pieces;  // every unit's piece
      if (pieces > 1 && rail_alpha > kMaxPieceAlphaShare * (rail_alpha + rail_bytes / (rail_GBps * 1e3))) break;
      std::uint32_t groups = static_cast<std::uint32_t>(box_count);
      while (groups > 1 && transfers(pieces, groups) > max_transfers) groups = (groups + 1) / 2;
      if (transfers(pieces, groups) > max_transfers) break;
      candidates.push_back({choice, pieces, groups});
    }
  }
  if (candidates.empty()) return std::nullopt;
  std::vector<BoxRailsResult> results(candidates.size());
  parallel_for(std::size_t{0}, candidates.size(), [&](std::size_t i) {
    const Candidate& candidate = candidates[i];
    const Packings& packed = choices[candidate.choice];
    BoxRailsResult& result = results[i];
    result.schedule = box_rails_schedule(topology, kind, size_bytes, members, boxes, gathers ? &packed.gather : nullptr,
                                         reduces ? &packed.reduce : nullptr, candidate.pieces, candidate.groups);
    SimOptions options;
    options.record_times = true;
    options.long_from_route_hops = 0.0;
    result.replay = simulate(topology, result.schedule, options);
    result.schedule.retime(result.replay.start_us, result.replay.end_us);
    result.replay.start_us = {};
    result.replay.end_us = {};
    result.score_us = file_time ? file_time(result.schedule) : result.replay.time_us;
    result.pieces = candidate.pieces;
    result.groups = candidate.groups;
    result.units = (packed.gather.empty() ? packed.reduce : packed.gather).front().units.per_member;
  });
  std::size_t best = 0;
  for (std::size_t i = 1; i < results.size(); ++i) {
    if (results[i].score_us < results[best].score_us) best = i;
  }
  if (!std::isfinite(results[best].score_us)) return std::nullopt;
  results[best].tried = static_cast<std::uint32_t>(results.size());
  return std::move(results[best]);
}

}  // namespace tenet::synth
