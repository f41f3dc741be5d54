#pragma once
// The synthesizer: TACOS (Won et al., Sec. IV) made fast, deterministic and causal.
//
// All-gather is synthesized on a time-expanded network (TEN): at every event time (a link
// becoming free, or data arriving next to an idle link) each free link u->v is matched to a chunk
// u holds and v still wants; one chunk per link at a time. Reduce-scatter is the time-reversed
// all-gather on the transposed graph (Sec. IV-H); all-reduce is reduce-scatter then all-gather.
// Switches are first unwound into point-to-point links (Sec. IV-G), trying several degrees.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

enum class SynthPolicy {
  /// tenet's default: a destination's free in-links are served cheapest first, and each takes,
  /// among a sample of the chunks its source can offer, the one fewest other in-neighbours hold
  /// (a chunk only this link can deliver goes first; a common one can come any way later). On
  /// switched networks the paper's rule is also tried on the densest unwinding.
  kTenet,
  /// The paper's rule: unsatisfied (NPU, chunk) postconditions in random order, each matched to
  /// the cheapest free in-link whose source holds the chunk (ties random).
  kTacos,
};

/// "tenet" / "tacos"; throws InputError naming `option` otherwise.
SynthPolicy parse_synth_policy(const std::string& text, const std::string& option);

struct SynthOptions {
  SynthPolicy policy = SynthPolicy::kTenet;
  std::uint64_t seed = 1;
  /// Independent seeds tried (in parallel); the fastest schedule wins, ties to the lower seed.
  std::uint32_t restarts = 1;
  /// Switch unwinding degree; 0 tries several (1, 2, 3, 4, 6, 8 where they fit) and keeps the best.
  std::uint32_t unwind_degree = 0;
  /// When set, told now and then (at most twice a second, from any thread, never concurrently)
  /// how much of the matching is done, 0 to 1 over every run: for a progress line.
  std::function<void(double done)> progress;
  /// Transfers per block of the matching's log, as a power of two (blocks are converted into the
  /// schedule and freed one at a time). Tests lower it to cross block boundaries on small runs;
  /// the schedule does not depend on it.
  unsigned log_block_bits = 22;
};

struct SynthResult {
  Schedule schedule;
  /// The switch-free topology the schedule's links refer to: the input itself, or its unwinding.
  Topology synthesis_topology;
  std::uint32_t unwind_degree = 0;   ///< 0 when the topology had no switches
  std::uint64_t seed = 0;            ///< the seed whose schedule won
  SynthPolicy policy = SynthPolicy::kTenet;  ///< the matching rule whose schedule won
  double time_us = 0.0;              ///< collective time as planned
};

/// Synthesizes `collective` on `topology`. Deterministic for given options, whatever the thread
/// count. Throws InputError when a participant cannot reach another, or when the schedule would
/// not fit in memory (with the number of transfers it would need).
SynthResult synthesize(const Topology& topology, const Collective& collective, const SynthOptions& options);

}  // namespace tenet
