// SPDX-License-Identifier: MIT
#pragma once
// The index logic of the `bucket` baseline (Jain & Sabharwal, "Optimal Bucket Algorithms for
// Large MPI Collectives on Torus Interconnects", Sec. 2.2 and Sec. 4, Algorithm 1), exposed for
// tests. The generator is in src/baselines/bucket.cpp.

#include <cstdint>

namespace tenet::bucket {

/// The dimension (index among the torus dimensions of size > 1, `dimensions` of them) color
/// `color` works on in reduce-scatter phase `phase`: the non-conflicting permutations
/// pi_c(i) = (i + c) mod N of Sec. 4, so no two colors share a dimension in any phase.
std::uint32_t phase_dimension(std::uint32_t color, std::uint32_t phase, std::uint32_t dimensions);

/// The bucket algorithm's reduce-scatter on a ring of `size` (Sec. 2.2): at step t (0..size-2)
/// position x sends its partial sum of the bucket returned here to its neighbour (x + 1 clockwise,
/// x - 1 anticlockwise) and after size - 1 steps holds its own bucket, complete.
std::uint32_t ring_bucket(std::uint32_t position, std::uint32_t step, std::uint32_t size, bool clockwise);

/// The neighbour position x sends to.
std::uint32_t ring_next(std::uint32_t position, std::uint32_t size, bool clockwise);

}  // namespace tenet::bucket
