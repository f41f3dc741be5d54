// SPDX-License-Identifier: MIT
#pragma once
// Recognizing a torus or mesh written as plain links, so that files without a `layout` field get
// dimension-order routing and the torus baselines (Swing, bucket) too.

#include <string>

#include "tenet/topology/topology.hpp"

namespace tenet {

/// Why the links of `topology` are not exactly the grid `layout` (NPU ids in GridLayout's
/// numbering, every neighbour pair joined both ways, no other link, no switch), or "" when they are.
/// Link attributes do not matter.
std::string grid_mismatch(const Topology& topology, const GridLayout& layout);

/// The grid the links form, with `detected` set, or an empty layout. Dimensions of size 1 are never
/// reported, so the answer is unique up to one case: when no dimension has 3 or more NPUs there is
/// no wrap-around link to tell a torus from a mesh, and it is called a mesh (as the hypercube
/// generator does). A 4-NPU ring 0-1-2-3-0 is "torus 4"; the square 0-1-3-2-0 is "mesh 2x2".
/// O(NPUs x dimensions x degree).
GridLayout detect_grid_layout(const Topology& topology);

}  // namespace tenet
