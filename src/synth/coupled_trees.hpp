// SPDX-License-Identifier: MIT
#pragma once
// All-reduce trees that use each link pair both ways at once: a piece is reduced up a tree to its
// root and broadcast back down the same tree, after Blink (Wang et al., "Blink: Fast and Generic
// Collectives for Distributed ML", MLSys 2020, Sec. 3.2 and 4: all-reduce as reduce then
// broadcast on each of a packing of spanning trees). Private to src/synth.
//
// Why. Packing the broadcasts and the reductions apart (tree_packing.hpp) lets the broadcasts fill
// some links out of a node and the reductions others, and where NPUs take in unequal bandwidth (a
// mesh: corners two links, inner NPUs four) neither packing leaves the other room: mesh-8x8
// all-reduce of 1 GiB ran at 1.33x the bound that counts every link's bytes. A tree whose pieces
// go up and come back down uses each of its edges once in each direction, so trees packed on the
// network as undirected (a link pair carries a unit of bandwidth both ways) fill both directions
// of every link alike, and a packing that loads every link pair evenly reaches that bound.
//
// How. Each member roots `per_member` trees, each a unit: a shortest-path tree (the shallowest a
// root allows, for the pipeline's fill) whose every node takes, among its neighbours one hop
// nearer the root, the one whose link pair is least loaded relative to its bandwidth. The trees
// are then rebuilt in turn on the loads of the others a few times, which evens the loads out. The
// unit's bandwidth is what the most loaded link pair leaves each of its units.
// Point-to-point networks whose NPUs are all members only; links without a link back are left out.

#include <cstdint>
#include <optional>
#include <vector>

#include "tenet/topology/topology.hpp"
#include "tree_packing.hpp"

namespace tenet::synth {

struct CoupledTrees {
  TreePacking gather;  ///< the trees downwards, from each root
  TreePacking reduce;  ///< the same trees upwards, as tree_schedule takes a reduce packing
};

/// `per_member` trees per member as above, or std::nullopt where the network has switches, some
/// NPU is not a member, or the link pairs do not connect the members. `optimal_GBps` (r*) only
/// sets units.share.
std::optional<CoupledTrees> pack_coupled_trees(const Topology& topology, const std::vector<NodeId>& members,
                                               std::uint32_t per_member, double optimal_GBps,
                                               std::uint32_t tree_count = 0);

}  // namespace tenet::synth
