// SPDX-License-Identifier: MIT
#pragma once
// The index logic of the `circulant` baseline (Träff, Hunold, Vardas, Funk, "Uniform Algorithms
// for Reduce-scatter and (most) other Collectives for MPI", Sec. III, reconstructing the
// circulant-graph algorithm of Bar-Noy, Kipnis and Schieber), exposed for tests, and the direct
// all-reduce variant. The generator is in src/baselines/circulant.cpp.
//
// p processes, q = ceil(log2 p) rounds. skips[q] = p and skips[k] = skips[k+1] - skips[k+1] / 2
// (Listing 1, repeated halving rounding up). In round k the correction term is
// epsilon_k = 1 when skips[k+1] is odd (skips[k] + skips[k] = skips[k+1] + 1), else 0; process r
// sends to t = r - skips[k] + epsilon_k and receives from f = r + skips[k] - epsilon_k (mod p).

#include <cstdint>
#include <vector>

#include "tenet/baselines/baseline.hpp"

namespace tenet::circulant {

/// skips[0..q] for p >= 1 (q + 1 entries; skips[0] = 1 for p >= 2, skips[q] = p).
std::vector<std::uint32_t> skips(std::uint32_t p);
/// q = ceil(log2 p): the number of rounds.
std::uint32_t rounds(std::uint32_t p);
/// epsilon_k for round k < rounds(p).
std::uint32_t epsilon(const std::vector<std::uint32_t>& skips, std::uint32_t round);
/// The to-process t_r^k and the from-process f_r^k.
std::uint32_t to_process(std::uint32_t rank, std::uint32_t round, std::uint32_t p);
std::uint32_t from_process(std::uint32_t rank, std::uint32_t round, std::uint32_t p);

/// Sec. III-D, Eq. (1) as enumerated by Listing 5: B_r^k, the blocks (target processes) whose
/// partial sums process r sends in reduce-scatter round k, in the listing's order.
std::vector<std::uint32_t> reduce_scatter_blocks(std::uint32_t rank, std::uint32_t round, std::uint32_t p);

/// Sec. III-E, Listing 7: the blocks process r sends in all-gather round k, in order:
/// r + epsilon_k, ..., r + epsilon_k + skips[k+1] - skips[k] - 1 (mod p).
std::vector<std::uint32_t> all_gather_blocks(std::uint32_t rank, std::uint32_t round, std::uint32_t p);

}  // namespace tenet::circulant

namespace tenet {

/// The circulant all-reduce variants. `circulant` in the registry is kReduceScatterAllGather
/// (Sec. III-G): reduce-scatter (Sec. III-D) then all-gather (Sec. III-E).
enum class CirculantAllReduce {
  kReduceScatterAllGather,
  /// Sec. III-B, Listing 2: ceil(log2 p) rounds, each process sending its whole running sum.
  /// Not expressible in the schedule IR (see circulant.cpp); always not applicable, with the
  /// reason.
  kDirect,
};

/// The circulant baseline with a chosen all-reduce variant (reduce-scatter and all-gather are the
/// same for both variants, except that kDirect only describes an all-reduce).
BaselineResult generate_circulant(const Topology& topology, const Collective& collective, CirculantAllReduce variant);

}  // namespace tenet
