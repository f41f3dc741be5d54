// SPDX-License-Identifier: MIT
#pragma once
// The synthesizer: TACOS (Won et al., Sec. IV) made fast, deterministic and causal.
//
// All-gather is synthesized on a time-expanded network (TEN): at every event time (a link
// becoming free, or data arriving next to an idle link) each free link u->v is matched to a chunk
// u holds and v still wants; one chunk per link at a time, or, where alphas matter, several in
// one transfer (aggregated), or straight between members through the nodes between (routed). Reduce-scatter is the time-reversed
// all-gather on the transposed graph (Sec. IV-H); all-reduce is reduce-scatter then all-gather.
// On a network with switches the matching runs on the physical links themselves by default
// (switch-native: a transfer through switches holds every link of its route, src/synth/fabric.hpp),
// or, as the paper does, on point-to-point links unwound from the switches (Sec. IV-G).
//
// Every candidate (chunk count, matching rule, unwinding degree, seed) is scored by its time on
// the real network: a switch-native plan is replayed through the switches with only the orders a
// runtime can keep (each sender's own port), an unwound one routed through them; the result's
// schedule carries the times of that replay.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/common/error.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/sim/simulator.hpp"
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

/// How a topology's switches are planned on.
enum class SwitchPlanning {
  /// Switch-native plans, and unwound ones while they are small enough to route through the
  /// switches for scoring: the fastest on the real network wins.
  kAuto,
  /// On the physical links: a plan's transfer through switches holds its sender's port, the fabric
  /// links and its receiver's port (fabric.hpp). The schedule keeps only its senders' port order
  /// (what a runtime can hold to) and is scored by its replay on the real network.
  kNative,
  /// TACOS Sec. IV-G: switches unwound into point-to-point links of 1/d of a port each.
  kUnwind,
};

/// Switch-native matching: the order in which a free port into an NPU tries the senders of its
/// switch group. Ordered, a sender across the fabric offers only chunks the port's own switch
/// lacks; near-first spares the fabric links, far-first keeps them busy from the start (on a tree
/// the leaf's uplink is the bottleneck that must never idle). Ring-first tries the receiver's two
/// neighbours on the ring embedding (the Patarasuk-Yuan ring on switched trees) before the rest:
/// matched that way every port is busy at every step and each fabric link carries one transfer
/// each way, which is what reaches the per-port bound on trees.
enum class SenderOrder { kAny, kNearFirst, kFarFirst, kRingFirst };

/// What shapes of transfer the synthesizer plans.
enum class TransferPlanning {
  /// One chunk per transfer hop by hop, and where alphas matter also aggregated transfers (all
  /// the chunks a link is given at an event, one alpha) and routed ones (straight between
  /// members, cut through the NPUs between): the fastest on the network wins.
  kAuto,
  /// One chunk per transfer, hop by hop: the TACOS paper's model.
  kChunk,
};

struct SynthOptions {
  SynthPolicy policy = SynthPolicy::kTenet;
  SwitchPlanning switches = SwitchPlanning::kAuto;
  TransferPlanning transfers = TransferPlanning::kAuto;
  /// Try several chunk counts per NPU (1, 2, 4, 8, as far as the transfers stay few enough) and
  /// keep the fastest; otherwise use the collective's chunks_per_npu.
  bool auto_chunks = false;
  std::uint64_t seed = 1;
  /// Independent seeds tried (in parallel); the fastest schedule wins, ties to the lower seed.
  std::uint32_t restarts = 1;
  /// Switch unwinding degree; 0 tries several (1, 2, 3, 4, 6, 8 where they fit) and keeps the best.
  std::uint32_t unwind_degree = 0;
  /// When set, told now and then (at most twice a second, from any thread, never concurrently)
  /// how much of the matching is done, 0 to 1 over every run: for a progress line.
  std::function<void(double done)> progress;
  /// Where the result will be written as a file a runtime runs at a time of its own (MSCCL XML,
  /// MSCCL++ plan): how such a file is scored. Set `estimate` to use it; every member is called
  /// from several threads at once, with a schedule carrying its times on the network.
  struct FileModel {
    /// The file's time (MSCCL XML: transfers in flight between a pair of ranks beyond what the
    /// runtime's channels hold run one after another, and a rank holds at most about 4,000 steps);
    /// infinity when it cannot be written. On switched networks, where every candidate is
    /// replayed, candidates are ranked by it (files that can be written first) rather than by their
    /// schedule's time; the spanning-tree method ranks its pipeline depths by it, trying fewer
    /// pieces too.
    std::function<double(const Schedule&)> estimate;
    /// Whether the file can be written at all, exactly and at a higher cost than `estimate`, which
    /// may miss a limit (MSCCL XML: the 128 threadblocks that others can wait for). On switched
    /// networks each round's best candidate by `estimate` must pass it, or the next best is taken.
    std::function<bool(const Schedule&)> fits;
    /// `estimate` only screens (an MSCCL++ plan's: whether its threadblocks could fit, then the
    /// schedule's own time): the finalists are more, and each is written and timed.
    bool estimate_screens = false;
    /// The time of the file itself, written and run on the runtime's model (infinity when it
    /// cannot be written). It decides between the spanning trees and the matching's best, where
    /// the estimate can pick the slower file (mi250-2x16-ib all-reduce of 64 MiB: the trees' file
    /// estimated at 575.7 us runs 658.8, the matching's 600.2).
    std::function<double(const Schedule&)> written;
    /// Where the runtime pipelines a file's chunks in slices (MSCCL, msccl_pipelined_time_us), the
    /// time that pipeline could take at best, which `estimate` (the second argument) does not see;
    /// infinity elsewhere. Each round keeps its candidate of the lowest such time beside its
    /// scores; the two lowest of the search are written at the end where they could beat the
    /// winner, and a faster file wins. Point-to-point finalists are written where it could beat
    /// their estimate. Needs `written`.
    std::function<double(const Schedule&, double)> pipelined;
    /// The transfers (sent and received) one rank of such a file holds, where its format limits
    /// them (MSCCL XML: a rank's ~4,000 steps; MSCCL++: its threadblocks' ops, about seven a
    /// transfer); 0 where nothing does. The spanning-tree method cuts its trees into no more
    /// pieces than fit it: a deeper pipeline it cannot write costs its replay and is lost.
    std::uint64_t transfers_per_rank = 0;
  };
  FileModel file;
  /// Try the box-and-rail method (src/synth/box_rails.hpp) where link speeds show boxes; tests of
  /// the other methods turn it off.
  bool box_rails = true;
  /// When not 0, chunk counts at which some member would surely receive (or, reducing, send) more
  /// transfers than this are not tried: (members - 1) x chunks per NPU one chunk at a time.
  std::uint64_t max_transfers_per_member = 0;
  /// Transfers per block of the matching's log, as a power of two (blocks are converted into the
  /// schedule and freed one at a time). Tests lower it to cross block boundaries on small runs;
  /// the schedule does not depend on it.
  unsigned log_block_bits = 22;
  /// On switches without a file to write, routed candidates' replays stop once they provably lose
  /// by kHopelessRound, and run again in full only where the search needs their exact time.
  /// Tests turn it off to check that the schedule does not depend on it.
  bool stop_losing_replays = true;
};

/// What the spanning-tree method (src/synth/tree_packing.hpp) built, when its schedule won.
struct TreeSummary {
  std::uint32_t units_per_member = 0;  ///< tree units each member's data is cut into
  double unit_GBps = 0.0;              ///< bandwidth one unit gets on every link it crosses
  double share_of_optimal = 0.0;       ///< units x unit bandwidth over the cut bound's rate
  std::uint32_t pieces = 0;            ///< pipeline pieces per unit
  std::size_t trees = 0;               ///< distinct trees (both directions for all-reduce)
};

/// What the box-and-rail method (src/synth/box_rails.hpp) built, when its schedule won.
struct BoxRailsSummary {
  std::uint32_t boxes = 0;      ///< boxes found from link speeds
  std::uint32_t positions = 0;  ///< members per box, hence rails
  std::uint32_t units = 0;      ///< tree units per member inside a box
  std::uint32_t pieces = 0;     ///< pipeline pieces per member
  std::uint32_t groups = 0;     ///< groups of rail rounds moved inside the boxes on their own
};

struct SynthResult {
  /// On the input topology: its links, routes through its switches (switch-native), or neither
  /// (unwound: routed by the simulator). Times are those of the replay on the real network.
  Schedule schedule;
  /// Collective time on the real network (the replay); the schedule's planned time.
  double time_us = 0.0;
  /// The time the winner's own plan predicted (not what runs on switches): on the physical links,
  /// each port and fabric link held, for a switch-native plan; on unwound links when unwinding.
  double plan_us = 0.0;
  std::uint32_t unwind_degree = 0;  ///< 0 unless switches were unwound
  /// Switches unwound in this radix (unwind_switches_in_radix), unwind_degree links per NPU; 0 if not.
  std::uint32_t unwind_radix = 0;
  bool switch_native = false;                    ///< planned on the switches themselves
  std::uint32_t chunks_per_npu = 1;              ///< the chunk count of the winner
  std::uint64_t seed = 0;                        ///< the seed whose schedule won
  SynthPolicy policy = SynthPolicy::kTenet;      ///< the matching rule whose schedule won
  SenderOrder sender_order = SenderOrder::kAny;  ///< switch-native: the variant that won
  /// Chunks one of the winner's transfers may carry (one alpha for all of them): 1, a cap, or 0
  /// for as many as its link is given.
  std::uint32_t max_chunks_per_transfer = 1;
  /// The winner's transfers go straight between members, routed through the NPUs between.
  bool routed = false;
  /// The winner's (aggregated) transfers go in synchronous rounds: every link of a round starts
  /// when the last transfer of the round before has ended.
  bool rounds = false;
  /// The winner was planned on the group overlay (each member linked to its switch group and to
  /// its peers in the other groups) and routed through the switches.
  bool grouped = false;
  /// Set when the spanning-tree method won over the greedy matching.
  std::optional<TreeSummary> trees;
  /// Set when the box-and-rail method won.
  std::optional<BoxRailsSummary> box_rails;
  std::uint32_t candidates = 0;  ///< schedules synthesized and compared
  /// Bytes and busy time per link of the input topology, from the replay.
  std::vector<LinkLoad> link_loads;

  bool aggregated() const { return max_chunks_per_transfer != 1; }
};

/// What synthesize throws when no candidate's plan fits in its clock of integer picoseconds (a
/// transfer past 20 hours, a plan past 26 days): an input error (the size, `--size`), and one a
/// comparison can show as "synth does not apply here" beside the baselines, which are timed in
/// floating point and have no such limit.
class PlanTooLong : public InputError {
 public:
  using InputError::InputError;
};

/// Synthesizes `collective` on `topology`. Deterministic for given options, whatever the thread
/// count. Throws InputError when a participant cannot reach another, or when the schedule would
/// not fit in memory (with the number of transfers it would need); PlanTooLong when no plan fits
/// in picoseconds.
SynthResult synthesize(const Topology& topology, const Collective& collective, const SynthOptions& options);

}  // namespace tenet
