// SPDX-License-Identifier: MIT
#pragma once
// The index logic of the Swing baselines (De Sensi et al., "Swing: Short-cutting Rings for Higher
// Bandwidth Allreduce"), exposed so that tests can check it against the paper's definitions. The
// generators themselves are in src/baselines/swing.cpp.
//
// One ring (a torus dimension, or the logical 1D pattern on other topologies) of `size` ranks:
// - Sec. 3.1.1, Eq. 2: at step s rank r talks to pi(r, s) = r + rho(s) (r even) or r - rho(s)
//   (r odd), mod size, with rho(s) = sum_{i=0..s} (-2)^i = (1 - (-2)^(s+1)) / 3; the distance is
//   delta(s) = |rho(s)|. A mirrored collective (Sec. 4.1) flips the sign.
// - Listing 1 / Sec. 3.1.1: in reduce-scatter step s rank r sends to q = pi(r, s) "the block b_q,
//   plus all the blocks that q will transmit to other nodes in the subsequent steps", i.e. q and
//   what get_rs_idx(q, s + 1) marks. (The listing's get_rs_idx(r, s) loops over every step from s;
//   the set sent at step s is the first iteration of that loop. Taken whole, the loop would send
//   at step s the blocks of the later steps too, contradicting the halving the text states.)
// - Sec. 3.2 / App. A.2, even size not a power of two: ceil(log2 size) steps; a rank may find a
//   block in the sets of two steps (or its own block), so it sends each block once only, in the
//   latest step that lists it, and never its own.
// - Sec. 3.2, odd size: ranks 0..size-2 run the even algorithm among themselves; rank size-1
//   exchanges directly with a group of them at each step, the groups halving: ceil(rest / 2) of
//   the remaining ranks at each step but the last, which takes the rest (7 ranks: {0,1,2}, {3,4},
//   {5}, as in Fig. 3).

#include <cstdint>
#include <vector>

namespace tenet::swing {

/// rho(s) = sum_{i=0..s} (-2)^i: 1, -1, 3, -5, 11, -21, ...
std::int64_t rho(std::uint32_t step);
/// delta(s) = |rho(s)| = (2^(s+1) - (-1)^(s+1)) / 3: 1, 1, 3, 5, 11, 21, ...
std::int64_t delta(std::uint32_t step);

/// pi(rank, step) on a ring of `size` ranks (Eq. 2; `size` even, as Swing runs odd rings on their
/// first size - 1 ranks); `mirrored` flips the direction.
std::uint32_t peer(std::uint32_t rank, std::uint32_t step, std::uint32_t size, bool mirrored = false);

/// Steps Swing takes on a ring of `size` ranks: ceil(log2 size) when even, ceil(log2 (size-1))
/// when odd (the extra rank is served within those steps), 0 for a single rank.
std::uint32_t step_count(std::uint32_t size);

/// Listing 1's get_rs_idx(rank, step): every block it marks, in the order it marks them, with
/// repetitions (which occur only when `size` is not a power of two). `size` must be even.
std::vector<std::uint32_t> get_rs_idx(std::uint32_t rank, std::uint32_t step, std::uint32_t size,
                                      bool mirrored = false);

/// The blocks rank sends in reduce-scatter step `step` before Sec. 3.2's deduplication:
/// pi(rank, step) followed by get_rs_idx(pi(rank, step), step + 1). `size` must be even.
std::vector<std::uint32_t> step_blocks(std::uint32_t rank, std::uint32_t step, std::uint32_t size,
                                       bool mirrored = false);

/// For an odd `size`, the group of ranks 0..size-2 that rank size-1 exchanges with at each step.
std::vector<std::vector<std::uint32_t>> odd_groups(std::uint32_t size);

/// Where one block goes next in a reduce-scatter on one ring.
struct RingHop {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t step = kNone;  ///< the ring step (0..step_count-1) at which the block is sent
  std::uint32_t peer = kNone;  ///< the rank it is sent to
};

/// Swing's reduce-scatter on one ring as seen from `rank`: for every block y != rank, the step at
/// which rank sends it and to whom (Listing 1 with the rules above); entry `rank` is kNone. With
/// `reverse_time` the steps run in the order step_count-1, ..., 0 (the pattern whose time reversal
/// is the latency-optimal all-gather) and "latest" means latest in that order. Along the path
/// of any block the steps only move forward in time, ending at the block's owner.
std::vector<RingHop> ring_row(std::uint32_t rank, std::uint32_t size, bool mirrored, bool reverse_time = false);

/// The order in which one of Swing's 2D multiport collectives visits the torus dimensions
/// (Sec. 4.1 / 4.2): rounds sigma = 0, 1, ...; within a round the dimensions in rotation order,
/// skipping those whose sigma >= step_count(dims[d]) (a rectangular torus keeps going on its
/// larger dimensions). Dimensions of size 1 never appear; `first_dimension` counts among the
/// others (collective c of the 2D starts at c mod D, its mirrored twin at the same dimension).
struct DimensionStep {
  std::uint32_t dimension = 0;
  std::uint32_t sigma = 0;  ///< the step within that dimension
};
std::vector<DimensionStep> step_order(const std::vector<std::uint32_t>& dims, std::uint32_t first_dimension);

}  // namespace tenet::swing
