#pragma once
// The TEN greedy all-gather engine on a switch-free topology. Private to src/synth.

#include <cstdint>
#include <vector>

#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::synth {

/// Time in integer picoseconds: event times compare exactly, and a chunk's time on a link is
/// rounded up once, so planned durations never undercut alpha + bytes / bandwidth.
using Tick = std::int64_t;
constexpr double kTicksPerUs = 1e6;

constexpr std::uint32_t kNotDelivered = ~std::uint32_t{0};

/// One planned transfer, 24 bytes: source, destination and cost follow from the link.
struct MatchedTransfer {
  Tick start;
  LinkId link;
  ChunkId chunk;
  /// The transfer that brought the chunk to the link's source (its only dependency), or
  /// kNotDelivered when the source is the chunk's owner.
  std::uint32_t feeder;
};

struct AllGatherTrace {
  std::vector<MatchedTransfer> transfers;  ///< in matching order: starts never decrease
  std::vector<Tick> link_ticks;            ///< time of one chunk on each link
  std::uint32_t chunk_count = 0;
  Tick finish = 0;                         ///< when the last member got its last chunk
};

struct AllGatherProblem {
  const Topology* topology = nullptr;      ///< switch-free
  std::vector<NodeId> members;             ///< ascending; chunk c starts at members[c / chunks_per_member]
  std::uint32_t chunks_per_member = 1;
  double chunk_bytes = 0.0;
};

/// Runs the matching until every member holds every chunk. Transfers to non-members that are
/// never forwarded are pruned from the trace.
AllGatherTrace run_all_gather(const AllGatherProblem& problem, SynthPolicy policy, std::uint64_t seed);

}  // namespace tenet::synth
