// SPDX-License-Identifier: MIT
#pragma once
// Shared pieces of the baseline generators (private to src/baselines/).
//
// ScheduleBuilder appends a baseline's transfers with contention-free, as-soon-as-possible planned
// times: a transfer starts when the last of its dependencies ends and lasts the sum of the alphas
// on its route plus bytes / the bottleneck bandwidth of that route (baseline.hpp). Contention is
// ignored on purpose: the simulator computes the congested times; the planned ones are the
// alpha-beta closed forms the papers state, which the tests compare against.
//
// Routes come from one Router (dimension order on intact grids, shortest paths otherwise). Their
// costs are cached per (source, destination) pair; a generator that sends from one NPU to many
// (direct) calls warm_source() first, so one route tree serves all of that source's destinations.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tenet/baselines/baseline.hpp"
#include "tenet/collective.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/routing.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::baselines {

/// One generator of the registry: a Schedule, or applicable = false with a reason.
using BaselineGenerator = BaselineResult (*)(const Topology& topology, const Collective& collective);

/// applicable = false with `reason` (e.g. "bucket needs a torus layout").
BaselineResult not_applicable(std::string reason);

/// The most transfers a baseline generates (2^27, about 7.5 GB of transfers): twice a 4,096-NPU
/// bidirectional ring all-reduce. Past it a generator answers too_many_transfers instead of
/// running the machine out of memory.
constexpr std::uint64_t kMaxBaselineTransfers = std::uint64_t{1} << 27;

/// applicable = false: "`algorithm` on `members` members needs `transfers` transfers (at most ...)".
BaselineResult too_many_transfers(const std::string& algorithm, std::uint64_t members, std::uint64_t transfers);

/// The alpha-beta cost of the route from one node to another.
struct RouteCost {
  double latency_us = 0.0;      ///< sum of the alphas on the route
  double bandwidth_GBps = 0.0;  ///< bottleneck (smallest) bandwidth on the route
  std::uint32_t hops = 0;

  /// Contention-free time of `bytes` along the route.
  double time_us(double bytes) const;
};

class ScheduleBuilder {
 public:
  /// A builder for `algorithm` on the collective's participants, each member's block cut into
  /// `chunks_per_member` chunks (the baseline's granularity; Collective::chunks_per_npu is the
  /// synthesizer's knob and is not used here).
  ScheduleBuilder(const Topology& topology, const Collective& collective, std::string algorithm,
                  std::uint32_t chunks_per_member);

  const Topology& topology() const { return topology_; }
  CollectiveKind kind() const { return schedule_.collective(); }
  /// The participants, ascending NPU ids; member index i owns chunks [i * cpm, (i + 1) * cpm).
  const std::vector<NodeId>& members() const { return schedule_.members(); }
  std::uint32_t member_count() const { return static_cast<std::uint32_t>(schedule_.members().size()); }
  std::uint32_t chunks_per_member() const { return schedule_.chunks_per_member(); }
  double chunk_bytes() const { return schedule_.chunk_bytes(); }
  const Router& router() const { return router_; }

  /// Appends a transfer from NPU src to NPU dst moving `chunks`, starting when all `deps` have
  /// ended (at 0 without deps). Returns its id.
  TransferId add(NodeId src, NodeId dst, TransferKind kind, std::span<const ChunkId> chunks,
                 std::span<const TransferId> deps);
  TransferId add(NodeId src, NodeId dst, TransferKind kind, std::span<const ChunkId> chunks,
                 std::initializer_list<TransferId> deps) {
    return add(src, dst, kind, chunks, std::span<const TransferId>(deps.begin(), deps.size()));
  }

  /// Appends a transfer whose dependencies are exactly those of the earlier transfer `sibling`,
  /// sharing its dependency list in storage instead of copying it. For fan-outs where many
  /// transfers wait on the same long list (direct all-reduce: each of a member's p-1 all-gather
  /// sends waits on the p-1 reductions into it), which would otherwise store (p-1)^2 ids per member.
  TransferId add_sharing_deps(TransferId sibling, NodeId src, NodeId dst, TransferKind kind,
                              std::span<const ChunkId> chunks);

  /// The cost of the route src -> dst (cached).
  const RouteCost& route_cost(NodeId src, NodeId dst);
  /// Computes the costs from `src` to every node at once (one route tree, O(nodes + links)) and
  /// keeps them until the next warm_source: for generators that send from one NPU to many.
  void warm_source(NodeId src);

  double start_of(TransferId id) const { return schedule_.transfer(id).start_us; }
  double end_of(TransferId id) const { return schedule_.transfer(id).end_us; }
  /// Latest end among `ids` (0 for none).
  double latest_end(std::span<const TransferId> ids) const;

  Schedule& schedule() { return schedule_; }
  /// Adds a note for the user (Schedule::notes).
  /// Out of line on purpose: inlined next to a long literal, GCC 12 at -O3 reports a false
  /// -Warray-bounds in std::string.
  void note(const std::string& text);
  /// The finished schedule as an applicable result; the builder is empty afterwards.
  BaselineResult finish();

 private:
  const Topology& topology_;
  Router router_;
  Schedule schedule_;
  std::unordered_map<std::uint64_t, RouteCost> pair_costs_;
  NodeId warm_source_ = kNoNode;
  std::vector<RouteCost> warm_costs_;  ///< per node, valid while warm_source_ is set
};

/// Per NPU, the transfers that most recently wrote into it: the dependency bookkeeping of
/// step-synchronous algorithms. A transfer that reads what an NPU received, or writes into it
/// after earlier writes, depends on that NPU's entries. O(NPUs) memory.
class LastWrites {
 public:
  explicit LastWrites(std::uint32_t nodes) : writes_(nodes) {}

  std::span<const TransferId> of(NodeId npu) const { return writes_[npu]; }
  /// `id` replaces whatever `npu` had (it depends, transitively, on all of it).
  void set(NodeId npu, TransferId id) { writes_[npu].assign(1, id); }
  /// `id` joins `npu`'s list (a concurrent write in the same step).
  void append(NodeId npu, TransferId id) { writes_[npu].push_back(id); }
  /// The union of the entries of two NPUs (src's data and dst's earlier writes), no duplicates.
  std::vector<TransferId> both(NodeId a, NodeId b) const;

 private:
  std::vector<std::vector<TransferId>> writes_;
};

/// Chunk ids [first, first + count), for block ranges.
std::vector<ChunkId> chunk_range(ChunkId first, std::uint32_t count);

}  // namespace tenet::baselines
