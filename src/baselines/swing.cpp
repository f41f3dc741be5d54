// SPDX-License-Identifier: MIT
// Swing, bandwidth-optimal (`swing`) and latency-optimal (`swing-latency`): De Sensi et al.,
// "Swing: Short-cutting Rings for Higher Bandwidth Allreduce", Sec. 3 (one ring: Eq. 2's peers
// pi(r, s), Listing 1's block sets, Sec. 3.2's non-power-of-two and odd sizes) and Sec. 4
// (D-dimensional tori, square and rectangular, with all 2D ports: D plain and D mirrored
// collectives). The index logic is declared in include/tenet/baselines/swing.hpp.
//
// Bandwidth-optimal (`swing`). The vector is cut in 2D parts (chunks_per_member = 2D, chunk
// b * 2D + c is part c of block b); part c runs its own collective, a lane of the plan: plain for
// c < D, mirrored for c >= D, its dimensions visited in rotation starting at dimension c mod D
// (swing::step_order). At each step every node talks within one dimension to its Eq. 2 peer along
// that dimension (Sec. 4.1: the coordinate a moves by +-rho(sigma), the sign set by a's parity).
// - Reduce-scatter: Listing 1 per dimension, composed over the dimensions: a node sends its
//   partial sum of block b in the earliest step, among the dimensions where its coordinate differs
//   from b's, at which that dimension's ring sends b's coordinate, to the peer along it. On a
//   torus whose sizes are powers of two this is exactly Listing 1 on the whole torus (the step
//   sequence reaching a node is unique, App. A.1); otherwise it keeps Sec. 3.2's rule that no
//   block is sent twice, in every dimension. Every block travels along a tree into its owner with
//   steps increasing, each node sending each block once: reduces only, nothing counted twice.
// - All-gather: the same plan time-reversed (Sec. 3.1.1: the peers in reverse order, the most
//   distant first, the data doubling), copies only.
// - All-reduce: reduce-scatter then all-gather (Sec. 3.1.1).
// - Odd dimension sizes d (Sec. 3.2 describes a 1D torus; applied here per dimension): the
//   coordinates 0..d-2 run the algorithm, coordinate d-1 exchanges directly with halving groups of
//   them; a node at coordinate d-1 sends (and receives) one block slice per group member.
//
// Latency-optimal (`swing-latency`, Sec. 3.1.2): each step every node exchanges its whole partial
// vector with its peer and reduces. The IR cannot express that: a node must send its partial
// before it adds the peer's into it, i.e. the incoming partial needs a receive buffer separate
// from the accumulator. The IR holds one accumulator per NPU and chunk; a reduce adds into it,
// and no dependency can order "the peer's reduce lands after my send has read" without also
// delaying the peer's own send (which would then carry my contributions back: counted twice).
// So all-reduce and reduce-scatter are not applicable. The all-gather counterpart is expressible
// (the exchanged block sets are disjoint, App. A.1, so the copies never land on a slot being
// read): each node sends everything it holds to its peer, nearest peers first, i.e. the time
// reversal of the plan above built with the steps in reverse order; where a peer would get a
// block again (sizes not a power of two) it is left out.
//
// Other topologies (and sub-collectives): the same algorithm on one logical ring over the
// members in id order (2 parts, plain and mirrored), routed by the simulator; the schedule says
// so in a note.

#include "tenet/baselines/swing.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>

#include "step_plan.hpp"

namespace tenet::swing {
namespace {

/// ceil(log2 n) for n >= 1.
std::uint32_t ceil_log2(std::uint32_t n) { return n <= 1 ? 0 : static_cast<std::uint32_t>(std::bit_width(n - 1)); }

/// Reduce-scatter row of an even ring (Listing 1 with Sec. 3.2's rules), into `row`.
void even_row(std::uint32_t rank, std::uint32_t size, bool mirrored, bool reverse_time, std::vector<RingHop>& row) {
  const std::uint32_t steps = step_count(size);
  // Time positions rather than step labels, so "later" is one comparison in either order.
  auto step_at = [&](std::uint32_t position) { return reverse_time ? steps - 1 - position : position; };
  std::vector<std::uint32_t> latest(size, RingHop::kNone);
  struct Frame {
    std::uint32_t node;
    std::uint32_t next_position;  ///< the first time position still open after reaching node
    std::uint32_t first_position;
  };
  std::vector<Frame> stack;
  for (std::uint32_t position = 0; position < steps; ++position) {
    stack.push_back({peer(rank, step_at(position), size, mirrored), position + 1, position});
  }
  while (!stack.empty()) {
    const Frame frame = stack.back();
    stack.pop_back();
    if (frame.node != rank && (latest[frame.node] == RingHop::kNone || latest[frame.node] < frame.first_position)) {
      latest[frame.node] = frame.first_position;
    }
    for (std::uint32_t position = frame.next_position; position < steps; ++position) {
      stack.push_back({peer(frame.node, step_at(position), size, mirrored), position + 1, frame.first_position});
    }
  }
  for (std::uint32_t block = 0; block < size; ++block) {
    if (latest[block] == RingHop::kNone) continue;
    const std::uint32_t step = step_at(latest[block]);
    row[block] = {step, peer(rank, step, size, mirrored)};
  }
}

}  // namespace

std::int64_t rho(std::uint32_t step) {
  // (1 - (-2)^(s+1)) / 3, exact in 64 bits for the steps a 2^20-NPU ring can take.
  const std::int64_t power = std::int64_t{1} << (step + 1);
  return (1 - ((step + 1) % 2 == 0 ? power : -power)) / 3;
}

std::int64_t delta(std::uint32_t step) { return std::abs(rho(step)); }

std::uint32_t peer(std::uint32_t rank, std::uint32_t step, std::uint32_t size, bool mirrored) {
  std::int64_t offset = rho(step) % static_cast<std::int64_t>(size);
  if ((rank % 2 == 1) != mirrored) offset = -offset;
  const std::int64_t moved = (static_cast<std::int64_t>(rank) + offset) % static_cast<std::int64_t>(size);
  return static_cast<std::uint32_t>(moved < 0 ? moved + size : moved);
}

std::uint32_t step_count(std::uint32_t size) {
  if (size <= 1) return 0;
  return ceil_log2(size % 2 == 0 ? size : size - 1);
}

std::vector<std::uint32_t> get_rs_idx(std::uint32_t rank, std::uint32_t step, std::uint32_t size, bool mirrored) {
  std::vector<std::uint32_t> blocks;
  const std::uint32_t steps = step_count(size);
  // for s in step..steps-1: mark pi(r, s), then get_rs_idx(pi(r, s), s + 1): depth first, each
  // frame's steps in increasing order, so they are pushed in reverse.
  struct Frame {
    std::uint32_t node;
    std::uint32_t step;
  };
  std::vector<Frame> stack;
  for (std::uint32_t s = steps; s-- > step;) stack.push_back({peer(rank, s, size, mirrored), s});
  while (!stack.empty()) {
    const Frame frame = stack.back();
    stack.pop_back();
    blocks.push_back(frame.node);
    for (std::uint32_t s = steps; s-- > frame.step + 1;) stack.push_back({peer(frame.node, s, size, mirrored), s});
  }
  return blocks;
}

std::vector<std::uint32_t> step_blocks(std::uint32_t rank, std::uint32_t step, std::uint32_t size, bool mirrored) {
  const std::uint32_t first = peer(rank, step, size, mirrored);
  std::vector<std::uint32_t> blocks{first};
  const std::vector<std::uint32_t> later = get_rs_idx(first, step + 1, size, mirrored);
  blocks.insert(blocks.end(), later.begin(), later.end());
  return blocks;
}

std::vector<std::vector<std::uint32_t>> odd_groups(std::uint32_t size) {
  const std::uint32_t steps = step_count(size);
  std::vector<std::vector<std::uint32_t>> groups(steps);
  std::uint32_t next = 0;
  for (std::uint32_t step = 0; step < steps; ++step) {
    const std::uint32_t rest = size - 1 - next;
    const std::uint32_t take = step + 1 == steps ? rest : (rest + 1) / 2;
    for (std::uint32_t i = 0; i < take; ++i) groups[step].push_back(next++);
  }
  return groups;
}

std::vector<RingHop> ring_row(std::uint32_t rank, std::uint32_t size, bool mirrored, bool reverse_time) {
  std::vector<RingHop> row(size);
  if (size <= 1) return row;
  if (size % 2 == 0) {
    even_row(rank, size, mirrored, reverse_time, row);
    return row;
  }
  const std::uint32_t extra = size - 1;
  const std::vector<std::vector<std::uint32_t>> groups = odd_groups(size);
  std::vector<std::uint32_t> group_of(extra);
  for (std::uint32_t step = 0; step < groups.size(); ++step) {
    for (std::uint32_t rank_in_group : groups[step]) group_of[rank_in_group] = step;
  }
  if (rank == extra) {
    for (std::uint32_t block = 0; block < extra; ++block) row[block] = {group_of[block], block};
    return row;
  }
  even_row(rank, extra, mirrored, reverse_time, row);
  row[extra] = {group_of[rank], extra};
  return row;
}

std::vector<DimensionStep> step_order(const std::vector<std::uint32_t>& dims, std::uint32_t first_dimension) {
  std::vector<std::uint32_t> used;
  for (std::uint32_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > 1) used.push_back(d);
  }
  std::vector<DimensionStep> order;
  if (used.empty()) return order;
  std::uint32_t rounds = 0;
  for (std::uint32_t d : used) rounds = std::max(rounds, step_count(dims[d]));
  for (std::uint32_t sigma = 0; sigma < rounds; ++sigma) {
    for (std::uint32_t j = 0; j < used.size(); ++j) {
      const std::uint32_t d = used[(first_dimension + j) % used.size()];
      if (sigma < step_count(dims[d])) order.push_back({d, sigma});
    }
  }
  return order;
}

}  // namespace tenet::swing

namespace tenet::baselines {
namespace {

/// Builds the reduce-scatter plan of all 2D collectives on a torus of `dims` (member index = NPU
/// id, dimension 0 fastest), in forward time order or, with `reverse_time`, with every
/// collective's steps in reverse order.
StepPlan swing_plan(const std::vector<std::uint32_t>& dims, bool reverse_time) {
  std::vector<std::uint32_t> used;
  for (std::uint32_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > 1) used.push_back(d);
  }
  const std::uint32_t parts = 2 * static_cast<std::uint32_t>(used.size());
  std::vector<std::uint64_t> stride(dims.size(), 1);
  for (std::size_t d = 1; d < dims.size(); ++d) stride[d] = stride[d - 1] * dims[d - 1];
  const std::uint32_t nodes = static_cast<std::uint32_t>(stride.back() * dims.back());
  const std::uint32_t steps = static_cast<std::uint32_t>(swing::step_order(dims, 0).size());
  StepPlan plan(steps);

  constexpr std::uint32_t kNever = ~std::uint32_t{0};
  std::vector<std::uint32_t> coords(dims.size());
  std::vector<std::uint32_t> block_coords(dims.size());
  // Per used dimension, for the current node's coordinate: the time slot and the next coordinate
  // of each target coordinate.
  std::vector<std::vector<std::uint32_t>> slot_of(dims.size());
  std::vector<std::vector<std::uint32_t>> next_of(dims.size());
  std::vector<std::uint32_t> block_slot(nodes);
  std::vector<std::uint32_t> block_peer(nodes);
  std::vector<std::uint32_t> count(steps + 1);
  std::vector<std::uint32_t> order(nodes);
  std::vector<ChunkId> chunks;

  for (std::uint32_t part = 0; part < parts; ++part) {
    const bool mirrored = part >= used.size();
    std::vector<swing::DimensionStep> sequence =
        swing::step_order(dims, part % static_cast<std::uint32_t>(used.size()));
    if (reverse_time) std::reverse(sequence.begin(), sequence.end());
    // slot[d][sigma]: when this collective runs step sigma of dimension d.
    std::vector<std::vector<std::uint32_t>> slot(dims.size());
    for (std::uint32_t d : used) slot[d].assign(swing::step_count(dims[d]), kNever);
    for (std::uint32_t t = 0; t < sequence.size(); ++t) slot[sequence[t].dimension][sequence[t].sigma] = t;

    for (std::uint32_t node = 0; node < nodes; ++node) {
      for (std::size_t d = 0; d < dims.size(); ++d) coords[d] = static_cast<std::uint32_t>(node / stride[d] % dims[d]);
      for (std::uint32_t d : used) {
        const std::vector<swing::RingHop> row = swing::ring_row(coords[d], dims[d], mirrored, reverse_time);
        slot_of[d].assign(dims[d], kNever);
        next_of[d].assign(dims[d], kNever);
        for (std::uint32_t y = 0; y < dims[d]; ++y) {
          if (row[y].step == swing::RingHop::kNone) continue;
          slot_of[d][y] = slot[d][row[y].step];
          next_of[d][y] = row[y].peer;
        }
      }
      // Each block leaves through the dimension whose next step comes first.
      std::fill(block_coords.begin(), block_coords.end(), 0);
      std::fill(count.begin(), count.end(), 0);
      for (std::uint32_t block = 0; block < nodes; ++block) {
        std::uint32_t best = kNever;
        std::uint32_t best_dim = 0;
        for (std::uint32_t d : used) {
          if (block_coords[d] == coords[d]) continue;
          const std::uint32_t t = slot_of[d][block_coords[d]];
          if (t < best) {
            best = t;
            best_dim = d;
          }
        }
        block_slot[block] = best;
        if (best != kNever) {
          const std::uint32_t next = next_of[best_dim][block_coords[best_dim]];
          block_peer[block] = static_cast<std::uint32_t>(node + (static_cast<std::int64_t>(next) - coords[best_dim]) *
                                                                    static_cast<std::int64_t>(stride[best_dim]));
          ++count[best];
        }
        for (std::size_t d = 0; d < dims.size(); ++d) {
          if (++block_coords[d] < dims[d]) break;
          block_coords[d] = 0;
        }
      }
      // Blocks by slot (counting sort, ids ascending within a slot), then by peer.
      std::vector<std::uint32_t> start(steps + 1, 0);
      for (std::uint32_t t = 0; t < steps; ++t) start[t + 1] = start[t] + count[t];
      std::vector<std::uint32_t> fill = start;
      for (std::uint32_t block = 0; block < nodes; ++block) {
        if (block_slot[block] != kNever) order[fill[block_slot[block]]++] = block;
      }
      for (std::uint32_t t = 0; t < steps; ++t) {
        auto first = order.begin() + start[t];
        auto last = order.begin() + start[t + 1];
        // Usually one peer per slot; only an odd dimension's extra coordinate has several.
        const bool one_peer =
            std::all_of(first, last, [&](std::uint32_t b) { return block_peer[b] == block_peer[*first]; });
        if (!one_peer) {
          std::stable_sort(first, last,
                           [&](std::uint32_t a, std::uint32_t b) { return block_peer[a] < block_peer[b]; });
        }
        while (first != last) {
          const std::uint32_t peer = block_peer[*first];
          chunks.clear();
          for (; first != last && block_peer[*first] == peer; ++first) chunks.push_back(*first * parts + part);
          plan.add(t, part, node, peer, chunks);
        }
      }
    }
  }
  return plan;
}

/// The torus dimensions Swing runs on, or one logical ring over the members; `note` says which
/// when it is the logical ring.
std::vector<std::uint32_t> swing_dims(const Topology& topology, const Collective& collective, const std::string& name,
                                      std::string& note) {
  std::vector<std::uint32_t> dims = full_torus_dims(topology, collective);
  if (!dims.empty()) return dims;
  const std::vector<NodeId> members = collective.participants(topology);
  note = name;
  note += members.size() == topology.npu_count() ? " on a non-torus" : " on a sub-collective";
  note += ": logical 1D pattern over the members in id order";
  return {static_cast<std::uint32_t>(members.size())};
}

std::uint32_t part_count(const std::vector<std::uint32_t>& dims) {
  std::uint32_t parts = 0;
  for (std::uint32_t size : dims) parts += size > 1 ? 2 : 0;
  return parts;
}

void note_odd(ScheduleBuilder& builder, const std::vector<std::uint32_t>& dims) {
  for (std::uint32_t size : dims) {
    if (size > 1 && size % 2 == 1) {
      builder.note(
          "odd dimension size: its last coordinate exchanges blocks directly with halving groups of the "
          "others (Swing Sec. 3.2)");
      return;
    }
  }
}

/// Swing's bandwidth- or latency-optimal plan, emitted as the collective asked for.
BaselineResult swing_schedule(const Topology& topology, const Collective& collective, const std::string& name,
                              bool latency_optimal) {
  std::string note;
  const std::vector<std::uint32_t> dims = swing_dims(topology, collective, name, note);
  ScheduleBuilder builder(topology, collective, name, part_count(dims));
  if (!note.empty()) builder.note(note);
  note_odd(builder, dims);
  const StepPlan plan = swing_plan(dims, latency_optimal);
  StepEmitter emitter(builder, part_count(dims));
  emitter.emit_collective(plan, collective.kind, false);
  return builder.finish();
}

}  // namespace

BaselineResult generate_swing(const Topology& topology, const Collective& collective) {
  return swing_schedule(topology, collective, "swing", false);
}

BaselineResult generate_swing_latency(const Topology& topology, const Collective& collective) {
  if (collective.kind != CollectiveKind::kAllGather) {
    std::string reason = "swing-latency ";
    reason += collective_name(collective.kind);
    reason +=
        " is not expressible: each step exchanges whole partial vectors, so a node must send its partial "
        "before the peer's is reduced into it, which needs a receive buffer apart from the accumulator; "
        "the schedule IR has one accumulator per NPU and chunk (use swing)";
    return not_applicable(reason);
  }
  return swing_schedule(topology, collective, "swing-latency", true);
}

}  // namespace tenet::baselines
