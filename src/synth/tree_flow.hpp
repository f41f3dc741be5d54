// SPDX-License-Identifier: MIT
#pragma once
// The flow network the tree packing works on (tree_packing.hpp), shared by its three steps.
// Private to src/synth.

#include <cstdint>
#include <vector>

#include "int_max_flow.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

struct TreeFlowGraph {
  IntMaxFlow flow;
  /// Per flow edge id / 2 (forward edges have even ids): the physical links it stands for,
  /// sender to receiver (empty for the source and sink edges).
  std::vector<std::vector<LinkId>> routes;
  std::vector<char> is_member;               ///< per topology node
  std::vector<IntMaxFlow::Capacity> demand;  ///< per topology node: units still to pack from it
  IntMaxFlow::Capacity total_demand = 0;     ///< K: the sum of demand

  explicit TreeFlowGraph(std::uint32_t nodes) : flow(nodes), is_member(nodes, 0), demand(nodes, 0) {}
};

/// Every node of `topology` a vertex, every link an edge of floor(bandwidth / unit) units, and
/// the source feeding each member `per_member` units.
TreeFlowGraph tree_flow_graph(const Topology& topology, const std::vector<NodeId>& members, std::uint32_t per_member,
                              double unit_GBps);

/// Whether every member receives total_demand units from the source: Edmonds' condition for
/// packing the remaining trees.
bool every_member_reached(TreeFlowGraph& graph);

/// Splits off every node that is not a member (tree_splitting.cpp); false when one keeps
/// capacity that no pair of its edges can take. Without whole rounds every pair is asked on its
/// own: the same result, slower (kept for the tests that show it is the same).
bool split_off_relays(TreeFlowGraph& graph, bool whole_rounds = true);

}  // namespace tenet::synth
