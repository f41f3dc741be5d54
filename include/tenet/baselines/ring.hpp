// SPDX-License-Identifier: MIT
#pragma once
// The logical ring the `ring` baseline runs on, exposed so that tests (and reports) can see how it
// was embedded in the topology. See src/baselines/ring.cpp for the algorithm itself.

#include <string>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet {

struct RingEmbedding {
  /// Members in ring order: order[i] sends to order[(i + 1) % size] (and, bidirectionally, to
  /// order[i - 1] as well).
  std::vector<NodeId> order;
  /// How the order was found: "snake" (grid layout), "dfs" (depth-first over the whole graph:
  /// the Patarasuk-Yuan ring on switched trees).
  std::string method;
  /// On a grid layout: whether the snake is a Hamiltonian cycle of the grid (every hop one link).
  bool hamiltonian = false;
};

/// Embeds a ring over `members` (ascending NPU ids, at least one) in the topology.
///
/// - Intact grid layout (torus or mesh whose links are all there, no switches): a snake. With x
///   one grid dimension of size a and the other dimensions flattened into a boustrophedon path
///   y = 0..L-1 (consecutive y differ by one step in one dimension), the cycle walks row y = 0 from
///   x = 0 to a-1, snakes the rows y = 1..L-1 over x = a-1..1 and back, and returns down column
///   x = 0. Its last snake node is (1, L-1) when L is even, and (a-1, L-1) when L is odd, which is
///   a neighbour of (0, L-1) on a torus (wrap-around) or when a = 2. So every torus gets a
///   Hamiltonian cycle, and a mesh gets one exactly when some dimension is even (x is chosen to
///   make L even); a mesh with only odd dimensions (3x3) has none (bipartite with an odd node
///   count), and there the one non-neighbour hop spans a-1 links along x, with x the smallest
///   dimension. A one-dimensional grid is the ring 0..n-1.
/// - Otherwise: the preorder of a depth-first search over all nodes (NPUs and switches),
///   following out-links, starting at the lowest-numbered switch if there is one, else at the
///   first member; a node's unvisited neighbours are taken NPUs first (ascending id), then switches
///   (in link order). On a switched tree this is exactly Patarasuk & Yuan's contention-free ring
///   (Sec. 3.2: DFS over the switches, each switch's NPUs in order); on any other graph it is the
///   ring around a DFS spanning tree, so consecutive members are close (their distance is at most
///   their distance in the tree, and the hops sum to at most twice the tree's edges).
///
/// Members are then taken in the order the full ring visits them (a sub-collective's ring is a
/// subsequence of the whole one; its hops are routed through the NPUs in between).
RingEmbedding ring_embedding(const Topology& topology, const std::vector<NodeId>& members);

}  // namespace tenet
