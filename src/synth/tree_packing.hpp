// SPDX-License-Identifier: MIT
#pragma once
// Spanning-tree packing: the second synthesis method, after ForestColl (Zhao et al., "ForestColl:
// Efficient Collective Communications on Heterogeneous Network Fabrics", 2024, Sec. 4-5) and
// Zhao & Krishnamurthy, "Bandwidth Optimal Pipeline Schedule for Collective Communication"
// (2023). Private to src/synth.
//
// Why. The greedy matching plans chunk by chunk and cannot see cuts; on switched clusters (boxes
// on an NVSwitch joined by NICs) it stays 10-30% off the all-gather cut bound. Packing trees
// reaches the bound's throughput: every member broadcasts its data over k spanning out-trees,
// each carrying a unit of bandwidth y, such that no physical link carries more units than fit.
//
// How.
// 1. Units (choose_tree_units). The optimal per-member rate r* is the cut bound's (cut
//    bandwidth / members outside). A link of bandwidth b carries floor(b / y) units. By Edmonds'
//    branching theorem, k trees per member fit iff, with a super source S feeding each member k
//    units, every member is reached from S by k x members units of flow. We take the smallest
//    k <= kMaxUnits, each with the largest y that fits (bisection), that leaves the most after
//    the pipeline's fill (more units come closer to r*, but leave fewer pieces per unit at the
//    same number of chunks), and the smallest k within 2% of r*.
// 2. Switch removal (edge splitting, Lovasz/Mader; ForestColl Sec. 5.2). Switches, and NPUs that
//    are not members, only forward. Each is split off: a pair of edges u->w->v becomes an edge
//    u->v of the same route, by the largest amount that keeps the flow condition for every set of
//    nodes the split shrinks (two families of cuts, each found by max-flow). Pairs are split a
//    quantum at a time, round robin, so a switch becomes a near-uniform mesh (shallow trees)
//    rather than a ring (deep trees that pipeline badly). A whole round of an in-edge's pairs is
//    tried first and checked once (tree_splitting.cpp).
// 3. Packing (Lovasz's proof of Edmonds' theorem). A tree grows from its root one edge a->b at a
//    time, shallowest a first; the edge is taken if every set that holds b but not a keeps K
//    units of in-flow with the tree's edges removed m times (K: units still to pack, m: the
//    tree's multiplicity). Lowering m keeps the invariant, so a tree that cannot take m units of
//    an edge continues with fewer. Lovasz shows some edge always fits at m = 1.
// Everything is deterministic (fixed scan orders) and single-threaded.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

/// Units per member tried at most: each is a chunk stream per tree edge.
constexpr std::uint32_t kMaxUnits = 16;
/// Chunks per member the pipelines are planned around (tree_method.cpp tries up to this many).
constexpr double kChunksPerMember = 128;
/// About the pieces a pipeline takes to fill: tree depth minus one, per phase.
constexpr double kFillPieces = 2;

struct TreeUnits {
  std::uint32_t per_member = 0;  ///< k: tree units each member's data is cut into
  double unit_GBps = 0.0;        ///< y: the bandwidth one unit gets on every link it crosses
  double share = 0.0;            ///< k y / r*: the share of the optimal throughput reached
};

/// r*: the rate at which each member's data can reach every other (cut bandwidth / members
/// outside the binding cut), for the directions `kind` moves data in (all-reduce: the lower of
/// all-gather's and reduce-scatter's).
double optimal_rate_GBps(const Topology& topology, CollectiveKind kind, const std::vector<NodeId>& members);

/// Units that fit on `topology` and, when given, on `transposed` too (reduce-scatter packs on the
/// transpose with the same units), one or two choices (see tree_units.cpp). `optimal_GBps` is r*.
/// Empty when no k fits (a member unreachable, or bandwidths too uneven for kMaxUnits).
std::vector<TreeUnits> choose_tree_units(const Topology& topology, const Topology* transposed,
                                         const std::vector<NodeId>& members, double optimal_GBps);

/// The largest unit bandwidth at which exactly `per_member` units per member fit on `topology`,
/// down to an eighth of optimal_GBps / per_member; std::nullopt below that.
std::optional<TreeUnits> units_of_count(const Topology& topology, const std::vector<NodeId>& members,
                                        std::uint32_t per_member, double optimal_GBps);

struct TreeEdge {
  NodeId parent = kNoNode;
  NodeId child = kNoNode;
  std::uint32_t route = 0;  ///< index into TreePacking::routes
};

struct PackedTree {
  std::uint32_t root = 0;            ///< member index
  std::uint32_t units = 0;           ///< multiplicity: units of the root's data this tree carries
  std::vector<TreeEdge> edges;       ///< every parent is the root or an earlier edge's child
  std::vector<std::uint32_t> depth;  ///< per edge: edges from the root to its child
};

struct TreePacking {
  TreeUnits units;
  std::vector<PackedTree> trees;            ///< each member's trees' units sum to units.per_member
  std::vector<std::vector<LinkId>> routes;  ///< physical links of a tree edge, sender to receiver
  /// The trees carry the chunks in consecutive ranges, in tree order (units x pieces each), not
  /// their roots' data, and each tree's units follow one another on its edges as one chain: one
  /// flow per edge, so every tree needs the same units (an all-reduce's fewer, deeper pipelines:
  /// coupled_trees.hpp). Else every unit of a root's data is its own chain.
  bool chained = false;
};

/// Packs units.per_member spanning out-trees per member on `topology` (see the file comment).
/// std::nullopt when switches cannot be split off completely (a switch whose in- and out-capacity
/// differ) or the packing fails, which the theory rules out otherwise.
std::optional<TreePacking> pack_trees(const Topology& topology, const std::vector<NodeId>& members,
                                      const TreeUnits& units);

}  // namespace tenet::synth
