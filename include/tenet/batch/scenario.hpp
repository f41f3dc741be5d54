// SPDX-License-Identifier: MIT
#pragma once
// Failure scenarios for `tenet batch`: what fails in each, named so a user can find the row.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet {

/// One scenario, in node ids of the loaded (healthy) topology; reports show NPUs by their ids in
/// the topology file (scenario_node_label).
struct Scenario {
  std::string name;
  std::vector<NodeId> failed_npus;
  std::vector<std::pair<NodeId, NodeId>> failed_cables;  ///< node pairs, both directions fail
  std::vector<NodeId> members;                           ///< empty: every surviving NPU
};

/// The scenarios a `--scenarios` value describes, after the healthy reference (always first,
/// named "healthy"):
///   all-npus                    each single NPU failure
///   all-links                   each single cable (a pair of nodes joined in either direction)
///   random-links:K:M[:SEED]     M scenarios of K distinct cables each (SEED default 1)
///   random-npus:K:M[:SEED]      M scenarios of K distinct NPUs each
///   FILE.json                   {"scenarios": [{"name": ..., "failed": {"npus": [...],
///                               "links": [[a, b], ...]}, "members": [...]}, ...]}
///                               (NPUs by their ids in the topology file, switches by name)
/// Deterministic: the same value and topology give the same list. Throws InputError naming
/// `option` (or the file and JSON pointer) for anything malformed or out of range.
std::vector<Scenario> make_scenarios(const std::string& spec, const Topology& topology, const std::string& option);

/// A short label for a node in scenario names: "3" for an NPU (original id), the name of a switch.
std::string scenario_node_label(const Topology& topology, NodeId node);

}  // namespace tenet
