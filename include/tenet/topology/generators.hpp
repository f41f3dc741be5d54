// SPDX-License-Identifier: MIT
#pragma once
// Generators for every topology the papers evaluate. One entry point takes the `generator` object
// of a topology file (or the equivalent built by `tenet topo generate`), validates it, refuses
// sizes that cannot fit before allocating, and builds the Topology.
//
// Parameters by kind (all links duplex unless said otherwise). `bandwidth_GBps` and `latency_us`
// are either one number or an array with one entry per dimension / level as listed; when absent
// they come from the file's `defaults`, else 50 GB/s and 0.5 us. Sizes are integers (an integral
// float such as 1e3 counts); shape arrays have at most 32 entries. NPU ids follow the shape with
// its first entry varying fastest (as in GridLayout): in two_level_switch [a, b], NPU i of group g
// is i + a * g. Unknown parameters are errors, with a suggestion.
//
//   ring             npus N >= 2; bidirectional (default true; false: one-way i -> i+1)
//   fully_connected  npus N >= 2
//   mesh             dims [d0, d1, ...], per-dimension bw/lat
//   torus            dims [d0, d1, ...]; a dimension of size 2 gets one duplex link, not two
//   hypercube        dimension D (binary: 2^D NPUs, a mesh 2x2x...x2)
//   hypercube_3d     dims [x, y, z]: the TACOS paper's "3D hypercube", a 3D mesh as its code
//                    builds it
//   switch           npus N; one switch "sw" with a duplex link to every NPU
//   two_level_switch dims [a, b], a, b >= 2: b groups of a NPUs; per group a switch "l<g>"
//                    [level 0]; per position i in the group a switch "g<i>" joining the b NPUs
//                    at i [level 1] (TACOS "2D Switch", e.g. [8, 4] at [300, 25] GB/s)
//   ring_fc_switch   dims [r, f, n]: n nodes of r x f NPUs, a ring along r [dim 0], fully
//                    connected along f [dim 1]; per position a switch "p<i>" joining the n NPUs
//                    there [dim 2] (TACOS 3D-RFS, e.g. [2, 4, 8] at [200, 100, 50] GB/s);
//                    n = 1 is one node, without switches
//   dragonfly        dims [a, g]: g groups of a NPUs, fully connected in a group [0]; groups
//                    joined all-to-all by global links spread over the group's NPUs [1] (TACOS
//                    4x5): a group's k-th other group (in id order) links to its NPU k mod a
//   hammingmesh      board [a, b] (default [2, 2]) and dims [x, y] boards; a mesh inside a board
//                    [0]; per global row "row<r>" and per global column "col<c>" a switch joining
//                    the board-edge NPUs [1], left out where it would join a single NPU; NPUs are
//                    numbered on the global (a*x) x (b*y) grid
//   hyperx           dims [d0, d1, ...]: NPUs that differ in one coordinate are directly linked
//   fat_tree         dims [k, l]: l leaf switches "leaf<i>" with k NPUs each [0], every leaf
//                    linked to each of `spines` spine switches "spine<j>" (default 1) [1]
//   tree             fanout [f0, f1, ..., fk]: a root switch with f0 child switches, each with f1
//                    children, ..., the last level's children are NPUs; bw/lat per level from the
//                    top; switches are named by their path from the root "s": "s0", "s0.1", ...
//   random           npus N, degree (average NPU-NPU degree, 1 .. N-1, default min(3, N-1)),
//                    seed (default 1), switches (default 0; "sw<i>", each linked to 2..min(N, 4)
//                    random NPUs), heterogeneous (default false: bandwidths drawn from 25..200
//                    GB/s and latencies from 0.5..2 us when true, and bandwidth_GBps / latency_us
//                    are then refused); always connected; a seed gives the same topology on
//                    every platform
//
// Grid kinds (ring when bidirectional, mesh, torus, hypercube, hypercube_3d) set
// Topology::layout. Link order is deterministic (see the top of each generators_*.cpp); every
// cable is added once, and there are no self loops.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tenet/topology/topology.hpp"

namespace tenet {

/// Link attributes used where neither the generator nor the link says otherwise.
struct LinkDefaults {
  double latency_us = 0.5;
  double bandwidth_GBps = 50.0;
};

/// Builds the topology a `generator` object describes. `source` is the file name and `pointer`
/// the JSON pointer of the object ("/generator"), both used in errors. Throws InputError listing
/// every problem (unknown kind with a suggestion, missing or mistyped parameter, size out of range).
/// With `expected_npus` (a file's "npus"), a generator that would build another count is refused
/// before it builds anything, at /npus.
Topology generate_topology(const nlohmann::json& generator, const LinkDefaults& defaults, const std::string& source,
                           const std::string& pointer, std::optional<std::uint64_t> expected_npus = std::nullopt);

/// The kinds generate_topology accepts, for help texts and suggestions.
const std::vector<std::string>& generator_kinds();

}  // namespace tenet
