// SPDX-License-Identifier: MIT
// Ring reduce-scatter / all-gather / all-reduce.
//
// Follows Swing (De Sensi et al.) Sec. 2.3.1 "Hamiltonian Rings" and Patarasuk & Yuan Sec. 3.2:
// each member's block is cut in p parts; in each of p-1 steps every member sends one part to its
// ring successor, which reduces it (reduce-scatter: in step s, position i sends the part of
// position i-s-1) or stores and forwards it (all-gather: in step s, position i sends the part of
// position i-s); all-reduce is reduce-scatter then all-gather (TACOS Sec. V-A, Fig. 5). Contention
// free on a ring (and on a fully connected network), the time is (p-1)(alpha + n/(p*B)) per phase.
//
// Multiport (Swing Sec. 2.3.1, TACOS "bidirectional ring"): when every hop of the ring runs over
// links that exist both ways, the data is split in two halves that travel two rings in opposite
// directions, (p-1)(alpha + n/(2p*B)) per phase. Two members make one ring already (the two
// directions are the same two links), so there it stays unidirectional.
//
// The embedding (which member follows which) is described in include/tenet/baselines/ring.hpp.

#include "tenet/baselines/ring.hpp"

#include <algorithm>
#include <numeric>

#include "builder.hpp"

namespace tenet {
namespace {

/// Coordinates of step t of the boustrophedon path through the grid of `sizes` (first entry
/// fastest): consecutive steps differ by one in exactly one coordinate.
std::vector<int> boustrophedon(std::uint64_t t, const std::vector<int>& sizes) {
  std::vector<int> at(sizes.size(), 0);
  std::uint64_t below = 1;
  for (int size : sizes) below *= static_cast<std::uint64_t>(size);
  for (std::size_t k = sizes.size(); k-- > 0;) {
    below /= static_cast<std::uint64_t>(sizes[k]);
    const std::uint64_t digit = t / below;
    std::uint64_t rest = t % below;
    // An odd digit here walks the lower dimensions backwards, so the path never jumps.
    if (digit % 2 == 1) rest = below - 1 - rest;
    at[k] = static_cast<int>(digit);
    t = rest;
  }
  return at;
}

/// The snake cycle of ring.hpp over a whole grid, in NPU ids.
RingEmbedding snake_ring(const GridLayout& layout) {
  RingEmbedding ring;
  ring.method = "snake";
  std::vector<std::size_t> used;  // dimensions of size > 1
  for (std::size_t d = 0; d < layout.dims.size(); ++d) {
    if (layout.dims[d] > 1) used.push_back(d);
  }
  std::vector<int> at(layout.dims.size(), 0);
  if (used.size() <= 1) {
    const int n = used.empty() ? 1 : layout.dims[used[0]];
    for (int x = 0; x < n; ++x) {
      if (!used.empty()) at[used[0]] = x;
      ring.order.push_back(layout.npu_at(at));
    }
    ring.hamiltonian = layout.wraps || n <= 2;
    return ring;
  }
  // Choose x: on a torus anything works; on a mesh the rows must be even in number (or x of size
  // 2) to close without a wrap-around link; failing both, the smallest x keeps the one long hop
  // short.
  const auto rows_if = [&](std::size_t x) {
    std::uint64_t rows = 1;
    for (std::size_t d : used) {
      if (d != x) rows *= static_cast<std::uint64_t>(layout.dims[d]);
    }
    return rows;
  };
  std::size_t x_dim = used[0];
  if (!layout.wraps) {
    bool closes = false;
    for (std::size_t d : used) {
      if (rows_if(d) % 2 == 0 || layout.dims[d] == 2) {
        x_dim = d;
        closes = true;
        break;
      }
    }
    if (!closes) {
      for (std::size_t d : used) {
        if (layout.dims[d] < layout.dims[x_dim]) x_dim = d;
      }
    }
  }
  std::vector<std::size_t> row_dims;
  std::vector<int> row_sizes;
  for (std::size_t d : used) {
    if (d != x_dim) {
      row_dims.push_back(d);
      row_sizes.push_back(layout.dims[d]);
    }
  }
  const int a = layout.dims[x_dim];
  const std::uint64_t rows = rows_if(x_dim);
  ring.hamiltonian = layout.wraps || rows % 2 == 0 || a == 2;

  const auto node = [&](int x, std::uint64_t y) {
    const std::vector<int> row = boustrophedon(y, row_sizes);
    for (std::size_t k = 0; k < row_dims.size(); ++k) at[row_dims[k]] = row[k];
    at[x_dim] = x;
    return layout.npu_at(at);
  };
  ring.order.reserve(layout.size());
  for (int x = 0; x < a; ++x) ring.order.push_back(node(x, 0));
  for (std::uint64_t y = 1; y < rows; ++y) {
    for (int k = 1; k < a; ++k) ring.order.push_back(node(y % 2 == 1 ? a - k : k, y));
  }
  for (std::uint64_t y = rows - 1; y >= 1; --y) ring.order.push_back(node(0, y));
  return ring;
}

/// Depth-first preorder over all nodes (ring.hpp), NPUs only.
RingEmbedding dfs_ring(const Topology& topology, NodeId start) {
  RingEmbedding ring;
  ring.method = "dfs";
  const std::uint32_t nodes = topology.node_count();
  const Adjacency adjacency(topology);
  std::vector<bool> visited(nodes, false);
  // Per frame: the node and its neighbours still to try, in the order ring.hpp states.
  struct Frame {
    std::vector<NodeId> next;
    std::size_t index = 0;
  };
  const auto neighbours = [&](NodeId node) {
    std::vector<NodeId> npus;
    std::vector<NodeId> switches;
    for (LinkId id : adjacency.out(node)) {
      const NodeId to = topology.link(id).dst;
      (topology.is_npu(to) ? npus : switches).push_back(to);
    }
    std::sort(npus.begin(), npus.end());
    npus.insert(npus.end(), switches.begin(), switches.end());
    return npus;
  };
  std::vector<Frame> stack;
  const auto enter = [&](NodeId node) {
    visited[node] = true;
    if (topology.is_npu(node)) ring.order.push_back(node);
    stack.push_back({neighbours(node), 0});
  };
  enter(start);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.index == top.next.size()) {
      stack.pop_back();
      continue;
    }
    const NodeId to = top.next[top.index++];
    if (!visited[to]) enter(to);  // invalidates `top`: nothing touches it afterwards
  }
  // A validated topology is strongly connected; anything unreached still joins the ring.
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    if (!visited[npu]) ring.order.push_back(npu);
  }
  return ring;
}

}  // namespace

RingEmbedding ring_embedding(const Topology& topology, const std::vector<NodeId>& members) {
  RingEmbedding ring;
  if (Router(topology).uses_dimension_order()) {
    ring = snake_ring(topology.layout);
  } else {
    const NodeId start = topology.switch_count() > 0 ? topology.npu_count() : members.front();
    ring = dfs_ring(topology, start);
  }
  if (members.size() != topology.npu_count()) {
    std::vector<bool> member(topology.npu_count(), false);
    for (NodeId npu : members) member[npu] = true;
    std::erase_if(ring.order, [&](NodeId npu) { return !member[npu]; });
  }
  return ring;
}

namespace baselines {
namespace {

/// One direction of the ring: `step` is +1 (to the successor) or -1 (to the predecessor), `lane`
/// the chunk of each block it carries.
struct Direction {
  int step;
  std::uint32_t lane;
};

class RingGenerator {
 public:
  RingGenerator(ScheduleBuilder& builder, const std::vector<NodeId>& order, std::vector<Direction> directions)
      : builder_(builder), order_(order), directions_(std::move(directions)), m_(order.size()) {
    // Member index of each position: chunk ids are by member index, positions by ring order.
    const std::vector<NodeId>& members = builder.members();
    member_of_.resize(m_);
    for (std::size_t i = 0; i < m_; ++i) {
      member_of_[i] =
          static_cast<std::uint32_t>(std::lower_bound(members.begin(), members.end(), order[i]) - members.begin());
    }
    // last_[d][i]: the transfer that last wrote into position i in direction d.
    last_.assign(directions_.size(), std::vector<TransferId>(m_, kNone));
  }

  /// p-1 steps; reduce-scatter moves the part of position i-s-1 (in the direction's sense) and
  /// reduces it, all-gather the part of position i-s and copies it.
  void phase(bool reduce) {
    const std::size_t offset = reduce ? 1 : 0;
    for (std::size_t s = 0; s + 1 < m_; ++s) {
      for (std::size_t d = 0; d < directions_.size(); ++d) {
        const Direction& direction = directions_[d];
        std::vector<TransferId>& last = last_[d];
        std::vector<TransferId> received(m_, kNone);
        for (std::size_t i = 0; i < m_; ++i) {
          const std::size_t block = position(i, -static_cast<std::int64_t>(s + offset) * direction.step);
          const std::size_t to = position(i, direction.step);
          const ChunkId chunk = member_of_[block] * builder_.chunks_per_member() + direction.lane;
          // The part was written into position i by its last receive (none before the first
          // step of a plain reduce-scatter or all-gather).
          const TransferId dep = last[i];
          const std::span<const TransferId> deps = dep == kNone ? std::span<const TransferId>() : std::span(&dep, 1);
          received[to] = builder_.add(order_[i], order_[to], reduce ? TransferKind::kReduce : TransferKind::kCopy,
                                      std::span(&chunk, 1), deps);
        }
        last.swap(received);
      }
    }
  }

 private:
  static constexpr TransferId kNone = ~TransferId{0};

  std::size_t position(std::size_t i, std::int64_t delta) const {
    const auto m = static_cast<std::int64_t>(m_);
    return static_cast<std::size_t>(((static_cast<std::int64_t>(i) + delta) % m + m) % m);
  }

  ScheduleBuilder& builder_;
  const std::vector<NodeId>& order_;
  std::vector<Direction> directions_;
  std::size_t m_;
  std::vector<std::uint32_t> member_of_;
  std::vector<std::vector<TransferId>> last_;
};

/// Every link on every hop's route also exists the other way, so the counter-rotating ring can
/// retrace the hops backwards instead of going the long way round (a one-way ring).
bool hops_are_duplex(const Topology& topology, const Router& router, const std::vector<NodeId>& order) {
  for (std::size_t i = 0; i < order.size(); ++i) {
    const NodeId from = order[i];
    const NodeId to = order[(i + 1) % order.size()];
    for (LinkId id : router.route(from, to)) {
      if (!topology.has_link(topology.link(id).dst, topology.link(id).src)) return false;
    }
  }
  return true;
}

}  // namespace

BaselineResult generate_ring(const Topology& topology, const Collective& collective) {
  const std::vector<NodeId> members = collective.participants(topology);
  const std::uint64_t phases = collective.kind == CollectiveKind::kAllReduce ? 2 : 1;
  const std::uint64_t m = members.size();
  // Checked before embedding: even the unidirectional ring would be too large.
  if (phases * m * (m - 1) > kMaxBaselineTransfers) return too_many_transfers("ring", m, phases * m * (m - 1));
  const RingEmbedding ring = ring_embedding(topology, members);
  const bool duplex = m > 2 && hops_are_duplex(topology, Router(topology), ring.order);
  // Two directions double the transfers; past the budget one direction still runs.
  const bool fits_twice = 2 * phases * m * (m - 1) <= kMaxBaselineTransfers;
  const bool bidirectional = duplex && fits_twice;
  ScheduleBuilder builder(topology, collective, "ring", bidirectional ? 2 : 1);

  std::string how = bidirectional ? "bidirectional" : "unidirectional";
  if (duplex && !fits_twice) how += " (two directions would exceed the transfer budget)";
  how += " ring, ";
  if (ring.method == "snake") {
    how += ring.hamiltonian ? "Hamiltonian snake on the " : "snake (no Hamiltonian cycle exists) on the ";
    how += topology.layout.describe();
  } else {
    how += topology.switch_count() > 0 ? "depth-first order over the switches" : "depth-first order";
  }
  builder.note(how);

  std::vector<Direction> directions = {{1, 0}};
  if (bidirectional) directions.push_back({-1, 1});
  // Exact sizes up front: a 4,096-member ring all-reduce is tens of millions of transfers, and
  // growing the arrays by doubling would copy them and overshoot.
  const std::uint64_t transfers = phases * directions.size() * m * (m - 1);
  builder.schedule().reserve(transfers, transfers, transfers);
  RingGenerator generator(builder, ring.order, directions);
  if (collective.kind != CollectiveKind::kAllGather) generator.phase(true);
  if (collective.kind != CollectiveKind::kReduceScatter) generator.phase(false);
  return builder.finish();
}

}  // namespace baselines
}  // namespace tenet
