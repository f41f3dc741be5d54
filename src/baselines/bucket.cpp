// SPDX-License-Identifier: MIT
// Multicolor bidirectional bucket algorithm on N-dimensional tori: Jain & Sabharwal, "Optimal
// Bucket Algorithms for Large MPI Collectives on Torus Interconnects", Sec. 4, Algorithm 1 (with
// the 1D bucket algorithm of Sec. 2.2), bidirectional model. The index logic is declared in
// include/tenet/baselines/bucket.hpp.
//
// Reduce-scatter (Algorithm 1). Every block X[i_1..i_N] is split into N colors and each color in
// two halves (clockwise, anticlockwise): chunks_per_member = 2N, chunk b * 2N + 2c + h is half h
// of color c of block b ("node distribution-respecting": reducing each part separately reduces
// the whole). Color c runs N phases; in phase i it works along dimension pi_c(i) = (i + c) mod N
// (non-conflicting permutations: in a phase no two colors share a dimension). In a phase, every
// ring of nodes along that dimension runs the bucket reduce-scatter of Sec. 2.2 on the data the
// color still holds (after earlier phases, only the blocks whose coordinates in those dimensions
// equal the node's own), split by the block's coordinate along the ring into d buckets: d - 1
// steps, at step t position x sends bucket (x - t - 1) mod d to x + 1 (mirror image for the
// anticlockwise half). Each node thus sends 2N messages per step, one per link direction.
// Phases are synchronous per node (a node enters phase i + 1 once all its colors finished phase
// i: on an asymmetric torus the colors on shorter rings wait, as Swing Sec. 5.2 describes), so
// every phase lasts max(d) - 1 steps.
//
// All-gather: "the same as that for the Reduce-scatter executed in the reverse order" (Sec. 4):
// the reduce-scatter plan time-reversed, copies only. All-reduce: reduce-scatter then
// all-gather.
//
// Cost (bidirectional, Eq. 2/3): on a symmetric torus d^N the bandwidth term is
// (p-1)/p * n / (2N) / B for reduce-scatter and all-gather (twice for all-reduce), and with
// contention-free links each of the N(d-1) steps pays one alpha.

#include "tenet/baselines/bucket.hpp"

#include <algorithm>

#include "step_plan.hpp"

namespace tenet::bucket {

std::uint32_t phase_dimension(std::uint32_t color, std::uint32_t phase, std::uint32_t dimensions) {
  return (phase + color) % dimensions;
}

std::uint32_t ring_bucket(std::uint32_t position, std::uint32_t step, std::uint32_t size, bool clockwise) {
  const std::uint64_t shift = step + 1;
  return clockwise ? static_cast<std::uint32_t>((position + size - shift % size) % size)
                   : static_cast<std::uint32_t>((position + shift) % size);
}

std::uint32_t ring_next(std::uint32_t position, std::uint32_t size, bool clockwise) {
  return clockwise ? (position + 1) % size : (position + size - 1) % size;
}

}  // namespace tenet::bucket

namespace tenet::baselines {
namespace {

StepPlan bucket_plan(const std::vector<std::uint32_t>& dims) {
  std::vector<std::uint32_t> used;
  std::uint32_t longest = 0;
  for (std::uint32_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > 1) used.push_back(d);
    longest = std::max(longest, dims[d]);
  }
  const std::uint32_t colors = static_cast<std::uint32_t>(used.size());
  const std::uint32_t lanes = 2 * colors;
  const std::uint32_t phase_steps = longest - 1;
  std::vector<std::uint64_t> stride(dims.size(), 1);
  for (std::size_t d = 1; d < dims.size(); ++d) stride[d] = stride[d - 1] * dims[d - 1];
  const std::uint32_t nodes = static_cast<std::uint32_t>(stride.back() * dims.back());

  StepPlan plan(colors * phase_steps);
  for (std::uint32_t phase = 1; phase < colors; ++phase) plan.set_barrier(phase * phase_steps);

  std::vector<std::uint32_t> coords(dims.size());
  std::vector<bool> fixed(dims.size());
  std::vector<std::uint32_t> free_dims;
  std::vector<std::uint32_t> odometer;
  std::vector<ChunkId> chunks;
  for (std::uint32_t color = 0; color < colors; ++color) {
    for (std::uint32_t phase = 0; phase < colors; ++phase) {
      const std::uint32_t ring_dim = used[bucket::phase_dimension(color, phase, colors)];
      // Dimensions already reduced by this color hold the node's own coordinate.
      std::fill(fixed.begin(), fixed.end(), false);
      for (std::uint32_t earlier = 0; earlier < phase; ++earlier) {
        fixed[used[bucket::phase_dimension(color, earlier, colors)]] = true;
      }
      fixed[ring_dim] = true;
      free_dims.clear();
      for (std::uint32_t d = 0; d < dims.size(); ++d) {
        if (!fixed[d] && dims[d] > 1) free_dims.push_back(d);
      }
      const std::uint32_t size = dims[ring_dim];
      for (std::uint32_t node = 0; node < nodes; ++node) {
        for (std::size_t d = 0; d < dims.size(); ++d)
          coords[d] = static_cast<std::uint32_t>(node / stride[d] % dims[d]);
        for (std::uint32_t half = 0; half < 2; ++half) {
          const bool clockwise = half == 0;
          const std::uint32_t lane = 2 * color + half;
          const std::uint32_t next = bucket::ring_next(coords[ring_dim], size, clockwise);
          const std::uint32_t peer =
              static_cast<std::uint32_t>(node + (static_cast<std::int64_t>(next) - coords[ring_dim]) *
                                                    static_cast<std::int64_t>(stride[ring_dim]));
          for (std::uint32_t step = 0; step + 1 < size; ++step) {
            const std::uint32_t target = bucket::ring_bucket(coords[ring_dim], step, size, clockwise);
            // The bucket: blocks at `target` along the ring, at the node's coordinates in the
            // reduced dimensions, anything in the others.
            std::uint64_t base = 0;
            for (std::uint32_t d = 0; d < dims.size(); ++d) {
              if (fixed[d]) base += stride[d] * (d == ring_dim ? target : coords[d]);
            }
            chunks.clear();
            odometer.assign(free_dims.size(), 0);
            for (;;) {
              std::uint64_t block = base;
              for (std::size_t k = 0; k < free_dims.size(); ++k) block += stride[free_dims[k]] * odometer[k];
              chunks.push_back(static_cast<ChunkId>(block * lanes + lane));
              std::size_t k = 0;
              for (; k < free_dims.size(); ++k) {
                if (++odometer[k] < dims[free_dims[k]]) break;
                odometer[k] = 0;
              }
              if (k == free_dims.size()) break;
            }
            std::sort(chunks.begin(), chunks.end());
            plan.add(phase * phase_steps + step, lane, node, peer, chunks);
          }
        }
      }
    }
  }
  return plan;
}

}  // namespace

BaselineResult generate_bucket(const Topology& topology, const Collective& collective) {
  const std::vector<std::uint32_t> dims = full_torus_dims(topology, collective);
  if (dims.empty()) {
    if (!collective.members.empty() && collective.members.size() != topology.npu_count()) {
      return not_applicable("bucket needs every NPU of the torus to take part (this is a sub-collective)");
    }
    std::string reason = "bucket needs a torus layout (";
    reason += topology.layout.is_grid() ? topology.layout.describe() : std::string("no grid layout");
    reason += ")";
    return not_applicable(reason);
  }
  std::uint32_t colors = 0;
  for (std::uint32_t size : dims) colors += size > 1 ? 1 : 0;
  ScheduleBuilder builder(topology, collective, "bucket", 2 * colors);
  const StepPlan plan = bucket_plan(dims);
  StepEmitter emitter(builder, 2 * colors);
  emitter.emit_collective(plan, collective.kind, true);
  return builder.finish();
}

}  // namespace tenet::baselines
