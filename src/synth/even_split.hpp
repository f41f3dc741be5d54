// SPDX-License-Identifier: MIT
#pragma once
// A chunk count at which the members' ingress splits evenly (issue: synthesis at every size).
// An all-gather ends when its slowest member has taken in (members - 1) x c chunks over its
// in-links, each link landing a chunk every alpha + chunk / bandwidth. With whole chunks the
// best split can be well above the bytes-over-bandwidth bound, and powers of two need not split
// best: a 4x2x3 mesh's corners take 23c chunks over 3 links (c = 3: 19178 us; c = 16: 19280),
// and a 7x10 mesh whose x links are 4.6x slower than its y links splits 69c chunks 37:170 at
// c = 3 (44612 us; c = 2: 44680). Private to src/synth.

#include <cstdint>
#include <optional>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

/// The chunk count in 1..max_count whose whole-chunk ingress time (the largest over members of
/// the shortest time their in-links land every chunk they need; out-links for a reduce-scatter,
/// both for an all-reduce) is least, ties to the smaller count. Point-to-point networks only:
/// nullopt with switches.
std::optional<std::uint32_t> even_split_chunk_count(const Topology& topology, const std::vector<NodeId>& members,
                                                    CollectiveKind kind, double size_bytes, std::uint32_t max_count);

/// The whole-chunk ingress time (us) of `members` at `chunks_per_member` (as above).
double whole_chunk_ingress_us(const Topology& topology, const std::vector<NodeId>& members, CollectiveKind kind,
                              double size_bytes, std::uint32_t chunks_per_member);

}  // namespace tenet::synth
