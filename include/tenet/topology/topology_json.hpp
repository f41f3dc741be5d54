// SPDX-License-Identifier: MIT
#pragma once
// The topology file (DESIGN.md, "Topology file"): reading with full validation, and writing.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "tenet/topology/topology.hpp"

namespace tenet {

/// Deepest JSON nesting tenet reads; the deepest valid topology file needs 4 levels.
constexpr int kMaxJsonDepth = 64;

/// Parses JSON text, refusing nesting deeper than kMaxJsonDepth before the parser recurses.
/// Throws InputError naming `source` with the line and column of a syntax error.
nlohmann::json parse_json_text(const std::string& text, const std::string& source);

/// Builds and validates a topology from the text of a topology file. Applies its `failed`
/// section, so the result holds the surviving NPUs renumbered 0..k-1 (original ids kept).
/// Throws InputError listing every problem, each with its JSON pointer.
Topology parse_topology(const std::string& text, const std::string& source);

/// Reads and parses a topology file. A file without a `name` is named by its stem.
Topology load_topology(const std::string& path);

/// The expanded file form: explicit links (a duplex pair with equal attributes as one
/// bidirectional entry), the most common attributes as `defaults`, and the grid `layout`.
nlohmann::json topology_to_json(const Topology& topology);

/// topology_to_json, pretty-printed, with a final newline.
std::string topology_to_text(const Topology& topology);

}  // namespace tenet
