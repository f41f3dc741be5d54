// SPDX-License-Identifier: MIT
#pragma once
// Shared by the tests: shipped topologies and collectives in one line.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tenet/collective.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/topology/topology_json.hpp"

namespace tenet::testing {

/// Synthesis in the paper's model: one chunk per transfer, hop by hop.
inline SynthOptions chunk_by_chunk() {
  SynthOptions options;
  options.transfers = TransferPlanning::kChunk;
  return options;
}

inline Topology shipped(const std::string& name) {
  return load_topology(std::string(TENET_SOURCE_DIR) + "/topologies/" + name + ".json");
}

/// The topology generators' link defaults: latency in us, bandwidth in bytes per us (50 GB/s).
constexpr double kAlpha = 0.5;
constexpr double kBandwidth = 50e3;

/// Every NPU of the topology, in id order: the members of a collective on all of them.
inline std::vector<NodeId> all_npus(const Topology& topology) {
  std::vector<NodeId> members(topology.npu_count());
  for (NodeId i = 0; i < members.size(); ++i) members[i] = i;
  return members;
}

inline Topology generated(const nlohmann::json& generator) {
  return generate_topology(generator, LinkDefaults{}, "t", "");
}

/// n NPUs on a duplex ring; link 2i is i -> i+1, link 2i+1 the reverse.
inline Topology duplex_ring(std::uint32_t n) {
  Topology topology(n, {});
  for (NodeId i = 0; i < n; ++i) topology.add_duplex(i, (i + 1) % n, 0.5, 1.0);
  topology.name = "ring-" + std::to_string(n);
  return topology;
}

inline Collective make_collective(CollectiveKind kind, std::uint64_t size, std::uint32_t chunks = 1,
                                  std::vector<NodeId> members = {}) {
  Collective collective;
  collective.kind = kind;
  collective.size_bytes = size;
  collective.chunks_per_npu = chunks;
  collective.members = std::move(members);
  return collective;
}

/// The schedule with the times the simulator gives it. Schedules converted from MSCCL XML carry
/// no planned times, and the verifier holds every transfer to its link's or route's time.
inline Schedule timed_by_simulation(const Topology& topology, const Schedule& schedule) {
  SimOptions options;
  options.record_times = true;
  const SimResult simulated = simulate(topology, schedule, options);
  Schedule timed(schedule.collective(), schedule.size_bytes(), schedule.members(), schedule.chunks_per_member(),
                 schedule.algorithm());
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    timed.add(transfer.src, transfer.dst, transfer.kind, schedule.chunks_of(transfer), schedule.deps_of(transfer),
              simulated.start_us[id], simulated.end_us[id], transfer.link);
  }
  return timed;
}

/// Dependencies a runtime cannot hold to: a transfer may wait only for data reaching its sender
/// or for the sender's own earlier transfers (MSCCL steps wait only for steps of their own rank).
/// Returns the first other dependency as "transfer t waits for d", or "" when there is none.
inline std::string unenforceable_dependency(const Schedule& schedule) {
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    for (TransferId dep : schedule.deps_of(transfer)) {
      const Transfer before = schedule.transfer(dep);
      if (before.dst != transfer.src && before.src != transfer.src)
        return "transfer " + std::to_string(id) + " waits for " + std::to_string(dep);
    }
  }
  return "";
}

/// Every shipped topology with switches small enough for a unit test (up to 128 NPUs).
inline std::vector<std::string> switched_topologies() {
  return {"switch-8",
          "two-level-switch-8x4",
          "ring-fc-switch-2x4x2",
          "ring-fc-switch-2x4x8",
          "ring-fc-switch-2x4x16",
          "tree-2x2x4",
          "tree-4x8",
          "fat-tree-8x4",
          "pod-2x4-handwritten",
          "hammingmesh-hx2-4x4",
          "a100-2x8-ib",
          "a100-4x8-ib",
          "h100-4x8-rail",
          "mi250-2x16-ib"};
}

constexpr CollectiveKind kAllKinds[] = {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                        CollectiveKind::kAllReduce};

}  // namespace tenet::testing
