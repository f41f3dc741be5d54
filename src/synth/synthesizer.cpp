// SPDX-License-Identifier: MIT
// The synthesis driver: run the all-gather engine for every candidate (chunk count x matching
// variant x unwinding degree x seed) in parallel, score each by its time on the real network, keep
// the fastest, and assemble the requested collective from it.

#include "tenet/synth/synthesizer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "all_gather_engine.hpp"
#include "box_rails.hpp"
#include "even_split.hpp"
#include "express.hpp"
#include "group_overlay.hpp"
#include "schedule_assembly.hpp"
#include "switch_native.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/common/random.hpp"
#include "tenet/common/units.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/analysis.hpp"
#include "tenet/topology/transforms.hpp"
#include "tree_method.hpp"

namespace tenet {
namespace {

/// Point-to-point plans up to this many transfers are replayed, and retimed where the replay is earlier.
constexpr std::size_t kReplayRetimeLimit = std::size_t{1} << 22;
/// Added to the schedule time of a candidate whose file cannot be written (SynthOptions::FileModel::estimate):
/// every file that can be written ranks first, and among the others the fastest schedule.
constexpr double kUnwritable_us = 1e15;
/// Candidates of one round whose files are checked exactly (SynthOptions::FileModel::fits) before the
/// round counts as unwritable: each check lays out a whole plan (0.3-1 s at 64 MiB on
/// two-level-switch-8x4, where one round's ten best failed in turn).
constexpr std::size_t kFileFitsChecks = 2;
/// Files the runtime pipelines in slices (SynthOptions::FileModel::pipelined): the candidates of the
/// lowest such estimates, at most this many, are written at the end, each only where its estimate
/// beats the best by this factor. A pipeline does not run as well as estimated (a100-4x8-ib
/// reduce-scatter of 1 GiB, one chunk per NPU: 4.174 ms estimated, 4.242 written; ring-fc-switch-2x4x8
/// all-reduce of 1 GiB: 5.58 and 7.30), and a write takes 0.1-0.9 s at 1 GiB on 32 to 64 ranks;
/// written where the estimate was under the best's at all, no file was faster on nine switched
/// networks at 1 GiB, and synthesis took up to 2.7x as long (tree-4x8 all-reduce 0.66 -> 1.79 s).
constexpr std::size_t kPipelinedContenders = 2;
constexpr double kPipelineGain = 0.97;
/// Where the best pipeline's estimate is within this factor of the winner's estimate (but not 3%
/// under it), the winner's own file is written to compare with.
constexpr double kPipelineNear = 1.05;
/// Relative difference between a plan and its replay that the plan's rounding up to ticks explains.
constexpr double kPlanRounding = 1e-6;

/// Degrees tried when the user fixes none: from a ring to moderately dense; beyond 8 a switch's
/// port is cut into slivers whose alphas dominate.
constexpr std::uint32_t kDefaultDegrees[] = {1, 2, 3, 4, 6, 8};
/// A single switch of up to this many NPUs is also unwound in full where alphas matter (synthesize).
constexpr std::uint32_t kFullUnwindingNpus = 32;
/// With a file to write, where alphas matter, switches are also unwound in this radix
/// (unwind_switches_in_radix): an aggregated all-gather on it takes ceil(log_16 members) rounds
/// over 15 links per digit, where the ring's unwindings take members / degree rounds and the
/// routed (direct) plans need a threadblock per peer, more than a file holds (kRadixMembers).
/// Planned on unwindings of a 200-NPU switch (50 GB/s, 0.5 us), all-reduce of 4 KiB: radix 2
/// 12.1 us, 4 8.2, 8 6.2, 16 4.2, 32 4.2; of 64 KiB radix 8 8.6, 16 6.7, 32 6.7 us.
constexpr std::uint32_t kUnwindRadix = 16;
/// ... on more members than this: up to it a routed (direct) plan's file holds its peers, past it
/// a rank has more threadblocks that others wait for than the 128 a dependency can name. On
/// ring-fc-switch-2x4x16 (128 NPUs) the radix tied the group overlay's files at 4 and 64 KiB and
/// took 2.3x the synthesis (all-reduce of 4 KiB with -o x.xml: 2.1 -> 4.7 s).
constexpr std::size_t kRadixMembers = 128;

/// More transfers than this would not fit in this machine's memory as a Schedule.
constexpr double kMaxTransfers = 4e8;

/// Chunk counts tried with --chunks-per-npu auto: 1, 2, 4, ... up to kMaxAutoChunks, as long as
/// a schedule stays under kAutoChunkTransfers transfers (one chunk is always tried).
constexpr std::uint32_t kMaxAutoChunks = 64;
constexpr double kAutoChunkTransfers = 4e6;

/// Unwound candidates are each routed through the real switches to be ranked while they have at
/// most this many transfers; larger ones are ranked by their plans and only the winner is routed
/// (routed flows share switch ports: simulating millions of them takes minutes).
constexpr std::size_t kRankRoutedMax = 250000;
/// Beside switch-native plans, unwound ones are routed only up to this size: they win with few
/// transfers (small switch groups), and routing is where a search spends its time.
constexpr double kPortfolioRoutedMax = 60000;

/// Kept candidates at each next chunk count (--chunks-per-npu auto), besides the best switch-native
/// and the best unwound one, and rounds in a row without a faster schedule before the search
/// stops: a count can lose to the ones before and the next win (two 2x8 A100 boxes, all-gather of
/// 64 MiB: 295 us at 1 chunk, 331 at 2, 308 at 4, 244 at 8).
constexpr std::size_t kBeam = 3;
constexpr int kPatience = 3;
/// On switches, a round whose best replay is this much slower than the best so far, and gained
/// nothing, ends the search: no family left is near (hammingmesh-hx2-4x4 reduce-scatter of 256
/// MiB: after 8 chunks only the switch-native family was left, 1.63x the best, and ran on at 16, 32
/// and 64 chunks, up to 258,000 transfers, for nothing). Over the 576 cases of
/// benchmarks/synth_times.sh every schedule stayed the same and synthesis took 146 -> 122 s. Not
/// on point-to-point links, where a round's losers stop at the best total (branch and bound) and
/// have no score to compare; there at 1.3x the same rule lost up to 15% (torus-8x8 all-gather of
/// 1 MiB), the later rounds winning.
constexpr double kHopelessRound = 1.5;
/// Families respond to chunk counts in ways no beam predicts (at 1 chunk a full-mesh unwinding of
/// those A100 boxes is the slowest family, at 8 the fastest): every family runs at every count
/// while the whole search stays under this many planned transfers, and the beam takes over after.
constexpr double kExhaustiveTransfers = 2.5e5;
/// The whole search stops before its planned transfers pass this (the first round always runs).
constexpr double kSearchTransfers = 1.5e6;

/// Files whose estimated times (SynthOptions::FileModel::estimate) are this close are both written and
/// timed to decide between the spanning trees and the matching's best, where the trees had to be
/// moved onto the runtime's routes: their pipelines then keep steps waiting in the runtime's
/// threadblocks that the estimate does not see (mi250-2x16-ib all-reduce of 64 MiB: the trees'
/// file estimated 4% faster than the matching's ran 10% slower), or where the trees' own file was
/// written and timed already (tree_method.cpp). Writing a file costs as much as a few replays, so
/// not otherwise.
constexpr double kFileEstimateDoubt = 1.2;

/// With a file to write on point-to-point links, the fastest few plans (kNearFinalists) within
/// this factor of the best are finalists too, and the finalists whose files are estimated within
/// it of the fastest estimate are laid out and timed, where small (kNearFinalistTransfers): a
/// chunk count that plans 0.3% slower can make a file that runs 13% faster (mesh-8x8 all-reduce
/// of 1 MiB in rounds: 16 chunks per NPU planned 35.34 us and ran 40.65 us as XML, staged through
/// scratch; 4 chunks planned 35.46 us and ran 35.46).
constexpr double kNearPlan = 1.02;
constexpr std::size_t kNearFinalists = 3;
/// Where the file's estimate only screens (MSCCL++ plans: SynthOptions::FileModel::fits), plans
/// this far from the best are near, up to kScreenedNearFinalists of them, and all are written and
/// timed: a plan's threadblocks can run a schedule twice as slow as planned, and a slower plan
/// faster (mesh-8x8 all-reduce of 1 MiB: 4 chunks per NPU aggregated planned 36.86 us, its plan
/// ran 76.86; 1 chunk planned 37.27 and its plan ran 42.28).
constexpr double kScreenedNearPlan = 1.25;
constexpr std::size_t kScreenedNearFinalists = 6;
constexpr std::size_t kNearFinalistTransfers = 50000;

/// Aggregated candidates (a transfer carries every chunk its link is given at an event, one alpha
/// for all) run beside chunk-by-chunk ones where a chunk's alpha is at least this share of its
/// time on some link at one chunk per NPU: at large sizes they only lose and would double the
/// search.
constexpr double kAggregateAlphaShare = 0.05;
constexpr std::uint32_t kAggregateAll = ~std::uint32_t{0};
/// Unlimited aggregated candidates run twice: links leaving at once, and waiting up to this share
/// of their alpha for data about to arrive (at 4 KiB on an 8x8 torus waiting saves an alpha in
/// eight; at 1 MiB leaving at once is 2% faster).
constexpr double kAggregateWait = 0.5;
/// Chunk counts the aggregated search tries at most (1, 2, 4): aggregating already amortizes the
/// alphas that smaller chunks would multiply.
constexpr std::size_t kAggregatedRounds = 3;
/// Chunk counts the synchronous-rounds search tries at most (1 to 16): a round's links carry
/// whole blocks, so more pieces only even out the links, without more alphas.
constexpr std::size_t kSynchronousRounds = 5;
/// Every aggregated family runs while a chunk-by-chunk schedule has at most this many transfers.
constexpr double kAggregatedFamiliesUpTo = 1e6;
/// Capped aggregated families (a few chunks a transfer) run up to this many chunks per NPU. Past
/// it a cap of 8 is nearly chunk by chunk, and each of their many events scans every chunk its
/// destination lacks: mesh-3x3 reduce-scatter at 4,096 chunks per NPU took 4.8 s (0.26 s without
/// them, the same schedule); at 65,536 it ran for more than 5 minutes (1.6 s without).
constexpr std::uint32_t kCappedAggregationChunks = 256;
/// Routed (express) candidates plan on a virtual link per ordered pair of members, where alphas
/// are at least kExpressAlphaShare of a chunk's time (cutting through saves serializations, which
/// matter less the larger the chunks). Past kExpressCheapMembers members they cost up to a second
/// (65,280 virtual links at 256), so there only where alphas are nearly all (a 16x16 torus at
/// 64 KiB: 8.04 us routed, 8.55 hop by hop), and never past kExpressMembers.
constexpr std::size_t kExpressCheapMembers = 128;
constexpr std::size_t kExpressMembers = 256;
constexpr double kExpressAlphaShare = 0.5;
/// Routed candidates run at every size for sub-collectives of up to this many members with NPUs
/// between them that only forward (below). Their replays route every pair: 128 of mesh-32x32's
/// NPUs (all-gather of 16 MiB) took 0.52 -> 1.50 s of synthesis for nothing, 64 took 0.55 -> 0.82.
constexpr std::size_t kExpressForwardedMembers = 64;
constexpr double kExpressLargeAlphaShare = 0.9;
/// The spanning-tree method (tree_packing.hpp) runs on networks of mixed link speeds or with
/// switches, where the greedy matching cannot see the cuts, up to this many members (its packing
/// runs hundreds of max-flows per member: ring-fc-switch-2x4x16's 128 take 2.3 s at 1 GiB) ...
constexpr std::size_t kTreeMembers = 128;
/// Transfers a tree schedule may have (pieces are chosen within it).
constexpr double kTreeTransfers = 3e5;
/// ... and where a member's whole block pays an alpha of at most this share of its time on every
/// link: trees cut it into 16 to 128 pieces. On a100-4x8-ib (0.7 us, 300 GB/s NVSwitch ports) the
/// block pays 29% at 16 MiB, where trees cut the all-reduce from 228 to 213 us, and 87% at 1 MiB,
/// where they never won and doubled the synthesis time.
constexpr double kTreeAlphaShare = 0.3;
/// ... and only where the matching's schedule is further than this from the lower bound: trees
/// can at best close that gap, and replaying them on a shared fabric costs seconds (fat-tree-8x4
/// all-reduce of 64 MiB: 2724 us matched, 4.7% over its bound; trees 1% faster in 20 s). At 5%
/// they were skipped where they win by more than that distance: two A100 boxes' all-reduce of 256
/// MiB, the matching 3.9% from the bound, the trees 1.2% (with the group overlay's chunk counts
/// below and the box gap, the 576 cases of benchmarks/synth_times.sh took 138.5 -> 142.7 s).
constexpr double kTreeGap = 1.03;
/// The boxes and rails, far cheaper than the trees (no trials to replay), run wherever the
/// matching is further than this from the bound (pod-2x4-handwritten all-reduce of 256 MiB: the
/// matching 1.1%, the boxes 0.4%).
constexpr double kBoxGap = 1.01;
/// On large networks the boxes and the trees each cost seconds, so there the 5% they had stays.
/// The boxes run past it on more than kTreeMembers members (kBoxGap was measured only up to 64;
/// past 128 the boxes' schedules run to millions of transfers), and where the boxes come this
/// near the bound on more than kTreesAlwaysMembers members the trees are not tried (at 3% they
/// ran on ring-fc-switch-2x4x16 for nothing: all-reduce of 256 MiB, boxes 4% from the bound,
/// 1.4 -> 6.6 s of synthesis, the same schedule).
constexpr double kLargeNetworkGap = 1.05;
/// Switch-native candidates replayed within this factor of their round's best are replayed again
/// without the port waits their data covers (covered_port_waits.cpp): that gained up to 3.6% (tree-2x2x4
/// reduce-scatter of 16 MiB) and nothing where the candidate was further behind.
constexpr double kCoveredWaitsGap = 1.05;
/// ... and those replays stop past this many times the ordered replay's refill work (or the least
/// below). Where they gained (25 of the 576 cases on at most 64 NPUs) they took at most 1.3 times
/// as much; on ring-fc-switch-2x4x128's all-reduce of 1 GiB they took 2 and 25 times as much (the
/// boxes won there anyway): 6 s more synthesis without the limit.
constexpr std::uint64_t kCoveredWaitsWork = 2;
constexpr std::uint64_t kCoveredWaitsLeastWork = 1 << 16;
/// The trees' replays may take refill work (SimOptions::max_refill_work) in proportion to what they
/// could gain: this much per unit of the distance from the bound, (time / bound - 1), of the time
/// they must beat (the matching's, or the boxes' where faster: 128 H100s on rails, all-reduce of
/// 256 MiB, the matching 18% from the bound and the boxes 6%: replays of 0.46 and 0.9 billion,
/// 11 and 22 s, that lost), so at least 0.21 billion (kTreeGap) where the trees run at all.
/// Where hundreds of flows share a few spines every refill is long: on a 64-NPU fat tree with four
/// spines, the matching 5.6% from the bound, the trees' replays of a reduce-scatter of
/// 64 MiB took 0.28 to 1.46 billion each, 112 s in all, and lost (1469.9 against 1396.2 us). On
/// the same network the trees win the all-reduce of 16 MiB (794.1 against 815.6 us, the matching
/// 23% from the bound) through a trial whose replay takes 1.58 billion; on a 64-NPU tree of
/// switches (4x4x4, the matching 35% from the bound) they win an all-reduce of 16 MiB by 17% with
/// 0.81 billion. On the shipped networks no winning replay needed more than 0.15 billion.
constexpr double kTreeReplayWorkPerGap = 7e9;
/// Transfers the box-and-rail method's schedules may have (box_rails.hpp): every rail round its
/// own group on ring-fc-switch-2x4x128 (2.1 million for an all-reduce), fewer groups past it.
constexpr double kBoxRailsTransfers = 3e6;
/// Up to this many members the spanning trees are tried even where the boxes come near the bound.
constexpr std::size_t kTreesAlwaysMembers = 64;
/// A candidate apart from its chunk count.
struct Family {
  SenderOrder order = SenderOrder::kAny;  ///< switch-native variant (run_switch_all_gather)
  std::size_t d = 0;                      ///< index of the topology it plans on (degrees, planned_on)
  SynthPolicy policy = SynthPolicy::kTenet;
  std::uint64_t seed = 0;
  /// Chunks one transfer may carry (either engine): 1, a cap, or kAggregateAll.
  std::uint32_t aggregate = 1;
  /// Aggregated: how long a link waits for data about to reach its source (AllGatherProblem).
  double aggregate_wait = 0.0;
  /// Aggregated, point-to-point engine: in synchronous rounds (AllGatherProblem).
  bool rounds = false;
};

struct Candidate {
  std::uint32_t chunks = 1;
  SenderOrder order = SenderOrder::kAny;
  std::uint32_t degree = 0;
  std::uint64_t seed = 0;
  SynthPolicy policy = SynthPolicy::kTenet;
  const Topology* topology = nullptr;
  const Topology* transposed = nullptr;
  bool switch_native = false;  ///< planned on the input's switches (routes, port order)
  bool routed = false;         ///< planned on the express topology: transfers routed, scored by replay
  bool grouped = false;        ///< planned on the group overlay: transfers routed, scored by replay
  Family family;
  /// Planned on links the input does not have (unwound, express, group overlay): routed as it runs.
  bool on_virtual_links() const { return degree != 0 || routed || grouped; }
  /// Planned on virtual links where alphas matter: its reductions are also replayed free
  /// (replayed_executable).
  bool free_reductions_too = false;
  /// Planned on the switches unwound in kUnwindRadix (its links per NPU in `degree`).
  bool in_radix = false;
};

struct Outcome {
  std::optional<synth::AllGatherTrace> reduce_scatter;  ///< on the transpose
  std::optional<synth::AllGatherTrace> all_gather;
  synth::Tick total = 0;
  bool abandoned = false;  ///< a phase stopped early: it could not have won
};

struct RoundResult {
  std::vector<double> scores;                                ///< per candidate; infinity when abandoned
  std::size_t best = 0;                                      ///< candidates.size() when none finished
  double score = std::numeric_limits<double>::infinity();    ///< the best's score (see run_round)
  double time_us = std::numeric_limits<double>::infinity();  ///< the best's time on the network
  double plan_us = 0.0;                                      ///< what the best's plan predicted
  Schedule schedule;                                         ///< the best's, on the input topology, timed as replayed
  std::vector<LinkLoad> link_loads;
  /// The candidate whose file the runtime's pipeline of slices could make fastest
  /// (SynthOptions::FileModel::pipelined), where that beats `pipelined_to_beat`: candidates.size()
  /// when none does.
  std::size_t pipelined = 0;
  double pipelined_estimate_us = std::numeric_limits<double>::infinity();
  Schedule pipelined_schedule;
  double pipelined_time_us = 0.0;
  double pipelined_plan_us = 0.0;
  std::vector<LinkLoad> pipelined_link_loads;
  /// A candidate's plan would not fit in ticks (synth::PlanTooLong): null when none.
  std::exception_ptr too_long;
};

/// Turns a candidate's traces into its schedule (consuming them).
Schedule assemble(const Candidate& candidate, Outcome& outcome, const Collective& collective,
                  const std::vector<NodeId>& members) {
  Schedule schedule(collective.kind, collective.size_bytes, members, candidate.chunks, "synth");
  std::size_t expected = 0;
  if (outcome.reduce_scatter) expected += outcome.reduce_scatter->transfers.size();
  if (outcome.all_gather) expected += outcome.all_gather->transfers.size();
  schedule.reserve(expected, expected, expected + static_cast<std::size_t>(members.size()) * candidate.chunks);
  std::vector<std::vector<TransferId>> ready;
  synth::Tick offset = 0;
  if (outcome.reduce_scatter) {
    ready = synth::append_reduce_scatter(schedule, *candidate.topology, *outcome.reduce_scatter);
    offset = outcome.reduce_scatter->finish;
    outcome.reduce_scatter.reset();
  }
  if (outcome.all_gather) synth::append_all_gather(schedule, *candidate.topology, *outcome.all_gather, offset, ready);
  outcome.all_gather.reset();
  return schedule;
}

/// On the input topology as it runs: a switch-native plan with its port order as dependencies,
/// an unwound one with its transfers left to be routed through the switches.
Schedule executable(Schedule schedule, const Candidate& candidate, const Topology& topology) {
  if (candidate.switch_native) return synth::with_port_order(schedule, topology);
  if (candidate.on_virtual_links()) schedule.forget_links();
  return schedule;
}

/// A candidate's executable schedule and its replay on the real network.
///
/// A plan on virtual links (unwound, group overlay, express) with reductions runs with its
/// reductions keeping their virtual link's planned order (with_reduction_order). Left to run as
/// soon as their data is there, the reductions that start a reduce-scatter (a member's own
/// pieces, which no earlier transfer feeds) all start at once and take the links from the ones
/// the critical path needs; an all-gather's copies are held back by their data.
/// ring-fc-switch-2x4x16 reduce-scatter of 1 GiB: 4.847 ms free, 2.906 ms ordered (the
/// all-gather: 3.107). Where alphas matter the free one can win, since a transfer's alpha holds
/// no bandwidth and free transfers overlap theirs (pod-2x4-handwritten reduce-scatter of 64 KiB:
/// 8.44 us free, 10.31 us ordered), so there both run and the faster is kept. At the sizes where
/// alphas do not matter, ordered won or tied in every shipped switched case.
std::pair<Schedule, SimResult> replayed_executable(Schedule planned, const Candidate& candidate,
                                                   const Collective& collective, const Topology& topology,
                                                   const SimOptions& options) {
  if (candidate.on_virtual_links() && collective.kind != CollectiveKind::kAllGather) {
    Schedule ordered = synth::with_reduction_order(planned);
    SimResult ordered_replay = simulate(topology, ordered, options);
    if (candidate.free_reductions_too) {
      planned.forget_links();
      SimResult free_replay = simulate(topology, planned, options);
      if (free_replay.time_us < ordered_replay.time_us) return {std::move(planned), std::move(free_replay)};
    }
    return {std::move(ordered), std::move(ordered_replay)};
  }
  Schedule schedule = executable(std::move(planned), candidate, topology);
  SimResult replay = simulate(topology, schedule, options);
  return {std::move(schedule), std::move(replay)};
}

/// Whether a point-to-point candidate's time will be its plan total: a schedule past
/// kReplayRetimeLimit transfers is not retimed by its replay (run_round), and chunk by chunk
/// each member receives every chunk it lacks once per phase.
bool plan_is_time(const Candidate& candidate, std::size_t members, std::size_t phases) {
  if (candidate.family.aggregate != 1 || candidate.routed || candidate.grouped) return false;
  const double fewest_transfers =
      static_cast<double>(phases) * static_cast<double>(members) * static_cast<double>(members - 1) * candidate.chunks;
  return fewest_transfers > static_cast<double>(kReplayRetimeLimit);
}

/// Runs every candidate (both phases of each in parallel) and scores them: by their replay on the
/// real network when `replay_all`, else by their planned time (point-to-point links, where the
/// plan is its replay, or unwindings too large to route), with branch and bound below
/// `known_best_us`. Only a best scoring below `best_score_so_far` (an earlier round's) has its file
/// checked exactly (SynthOptions::FileModel::fits). RoundResult::pipelined: only a pipeline estimated
/// below `pipelined_to_beat`. `beam_follows`: the next round's families are chosen from this round's
/// ranking (the beam), so it must rank the fastest few exactly. `losers_unranked`: nothing but a
/// best that beats `known_best_us` is used of this round (no beam follows, no finalists kept).
RoundResult run_round(const Topology& topology, const Collective& collective, const std::vector<NodeId>& members,
                      const std::vector<Candidate>& candidates, const SynthOptions& options, bool replay_all,
                      bool beam_follows, bool losers_unranked, double known_best_us, double best_score_so_far,
                      double pipelined_to_beat) {
  std::vector<Outcome> outcomes(candidates.size());
  // Every candidate's phases are independent runs (reduce-scatter on the transpose, all-gather on
  // the topology), so they all go in parallel: two threads keep busy through each run's serial
  // stretches. Reduce-scatter and all-gather draw from different streams of the same seed.
  const bool reduce_phase = collective.kind != CollectiveKind::kAllGather;
  const bool gather_phase = collective.kind != CollectiveKind::kReduceScatter;
  const std::size_t phases_per_candidate = (reduce_phase ? 1 : 0) + (gather_phase ? 1 : 0);
  const std::size_t tasks = candidates.size() * phases_per_candidate;
  // Each run reports its own fraction; the user hears the mean, rate-limited, from one thread at a time.
  std::vector<std::atomic<double>> done(tasks);
  std::mutex progress_mutex;
  auto last_report = std::chrono::steady_clock::now();
  auto progress_of = [&](std::size_t task) {
    return [&, task](double fraction) {
      done[task].store(fraction, std::memory_order_relaxed);
      const std::lock_guard lock(progress_mutex);
      const auto now = std::chrono::steady_clock::now();
      if (now - last_report < std::chrono::milliseconds(500)) return;
      last_report = now;
      double sum = 0.0;
      for (const std::atomic<double>& part : done) sum += part.load(std::memory_order_relaxed);
      options.progress(sum / static_cast<double>(tasks));
    };
  };
  // Branch and bound: a candidate whose run passes the best total already finished can only end
  // later, so it stops there. Which candidates stop depends on timing, but a stopped one can
  // never be the winner (its total would exceed another's), so the result does not. Only sound
  // when candidates are ranked by their planned time.
  const bool branch_and_bound = !replay_all;
  const synth::Tick known_best = std::isfinite(known_best_us)
                                     ? static_cast<synth::Tick>(std::ceil(known_best_us * synth::kTicksPerUs))
                                     : std::numeric_limits<synth::Tick>::max();
  std::atomic<synth::Tick> best_total{known_best};
  // An all-reduce's phases (tasks 2i and 2i+1) run side by side, each publishing its clock, and a
  // candidate stops once both clocks together pass a plan total of this round: then it is not the
  // round's best, the one candidate whose result is used. Its time can be less than its plan
  // total (executable() lets a transfer start before its planned time), so the sum is held
  // against `known_best_us`, a time, only where the time will be the plan total (timed_by_plan)
  // and no loser of the round is used (`losers_unranked`). The chunk-by-chunk all-reduce of 64 MiB
  // on mesh-64x64, behind the aggregated one, ran both phases to their ends; now it stops at its
  // start (the phases' floors, below, already pass): synthesis 12.2-14.8 -> 6.2-8.7 s on two
  // threads, 20.3-21.6 -> 10.5-11.6 s on one, the same schedule.
  std::atomic<synth::Tick> round_best_total{std::numeric_limits<synth::Tick>::max()};
  std::vector<std::atomic<synth::Tick>> phase_clock(phases_per_candidate == 2 ? tasks : 0);
  for (std::atomic<synth::Tick>& clock : phase_clock) clock.store(0, std::memory_order_relaxed);  // set below
  const auto timed_by_plan = [&](const Candidate& candidate) {
    return losers_unranked && plan_is_time(candidate, members.size(), phases_per_candidate);
  };
  std::vector<std::atomic<std::size_t>> phases_left(candidates.size());
  for (std::atomic<std::size_t>& left : phases_left) left.store(phases_per_candidate);
  const auto reduces = [&](std::size_t task) { return reduce_phase && task % phases_per_candidate == 0; };
  const auto problem_of = [&](std::size_t task) {
    const Candidate& candidate = candidates[task / phases_per_candidate];
    const double chunk_bytes =
        static_cast<double>(collective.size_bytes) / (static_cast<double>(members.size()) * candidate.chunks);
    return synth::AllGatherProblem{reduces(task) ? candidate.transposed : candidate.topology,
                                   members,
                                   candidate.chunks,
                                   chunk_bytes,
                                   options.log_block_bits,
                                   candidate.family.aggregate,
                                   candidate.family.aggregate_wait,
                                   candidate.family.rounds,
                                   !candidate.routed,
                                   options.policy == SynthPolicy::kTenet};
  };
  // What any plan of each phase needs at least, known before any starts: a phase's clock begins
  // there, so that the phase that starts first (on one thread, the other only after it) knows its
  // partner's share.
  const auto stops_early = [&](const Candidate& candidate) {
    return branch_and_bound && !candidate.switch_native && !candidate.routed && !candidate.grouped;
  };
  std::vector<synth::Tick> floor(tasks, 0);
  for (std::size_t task = 0; task < tasks; ++task) {
    const Candidate& candidate = candidates[task / phases_per_candidate];
    if (!stops_early(candidate)) continue;
    try {
      floor[task] = synth::chunk_by_chunk_floor(problem_of(task), candidate.policy);
    } catch (const synth::PlanTooLong&) {
      // Its run says so too (below).
    }
    if (!phase_clock.empty()) phase_clock[task].store(floor[task], std::memory_order_relaxed);
  }
  // Per task: its plan did not fit in ticks (synth::PlanTooLong). The round reports the first in
  // task order, so that the message does not depend on thread timing.
  std::vector<std::exception_ptr> too_long(tasks);
  parallel_for(std::size_t{0}, tasks, [&](std::size_t task) {
    const std::function<void(double)> progress =
        options.progress ? std::function<void(double)>(progress_of(task)) : std::function<void(double)>();
    const std::size_t index = task / phases_per_candidate;
    const Candidate& candidate = candidates[index];
    Outcome& outcome = outcomes[index];
    const bool reduce = reduces(task);
    const synth::AllGatherProblem problem = problem_of(task);
    const std::uint64_t seed = mix_seed(candidate.seed, reduce ? 1 : 2);
    // Routed candidates' plans are not their times: they neither stop at nor set the bound.
    synth::GiveUp give_up;
    if (stops_early(candidate)) {
      give_up.after = &best_total;
      give_up.floor = floor[task];
      if (phases_per_candidate == 2) {
        give_up.clock = &phase_clock[task];
        give_up.other_phase = &phase_clock[task ^ 1];
        give_up.both_after = timed_by_plan(candidate) ? &best_total : &round_best_total;
      }
    }
    synth::AllGatherTrace trace;
    try {
      trace = candidate.switch_native ? synth::run_switch_all_gather(problem, seed, candidate.order, progress)
                                      : synth::run_all_gather(problem, candidate.policy, seed, progress, give_up);
    } catch (const synth::PlanTooLong&) {
      // Passed over: larger chunk counts can fit where whole blocks do not.
      trace.abandoned = true;
      too_long[task] = std::current_exception();
    }
    done[task].store(1.0, std::memory_order_relaxed);
    (reduce ? outcome.reduce_scatter : outcome.all_gather) = std::move(trace);
    if (phases_left[index].fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // The last phase of this candidate to finish sees the other's trace (acq_rel above).
    for (const std::optional<synth::AllGatherTrace>* phase : {&outcome.reduce_scatter, &outcome.all_gather}) {
      if (!*phase) continue;
      outcome.abandoned = outcome.abandoned || (*phase)->abandoned;
      outcome.total += (*phase)->finish;
    }
    if (outcome.abandoned || candidate.routed || candidate.grouped) return;
    for (std::atomic<synth::Tick>* total : {&best_total, &round_best_total}) {
      synth::Tick best = total->load(std::memory_order_relaxed);
      while (outcome.total < best && !total->compare_exchange_weak(best, outcome.total, std::memory_order_relaxed)) {
      }
    }
  });

  RoundResult round;
  for (const std::exception_ptr& error : too_long) {
    if (error && !round.too_long) round.too_long = error;
  }
  round.scores.assign(candidates.size(), std::numeric_limits<double>::infinity());
  round.best = candidates.size();
  SimOptions replay_options;
  replay_options.record_times = true;
  SimResult replay;
  const bool switched = topology.switch_count() > 0;
  // Scores: with `replay_all` (on switches) every candidate is scored by its replay on the real
  // network: an unwound plan routed through the switches, a switch-native one with only its
  // senders' port order kept; on point-to-point links the plan is its replay.
  // With a file to write, replayed candidates are scored by that file's time (options.file.estimate).
  const bool by_file = switched && static_cast<bool>(options.file.estimate);
  std::vector<std::optional<Schedule>> schedules(candidates.size());
  std::vector<SimResult> replays(candidates.size());
  std::vector<double> pipelined(candidates.size(), std::numeric_limits<double>::infinity());
  // Without a file to write, a routed plan's replay stops once it provably ends past
  // kHopelessRound times the best so far: such a round cannot gain, and a loser's exact time
  // would only rank it among the losers. Switch-native replays, cheap, always run in full (the
  // covered port waits below start from them). Where a stopped replay's exact time is still
  // needed (below), it runs again in full, so the search is the same as with every replay whole.
  const double stop_past = replay_all && !by_file && options.stop_losing_replays
                               ? kHopelessRound * best_score_so_far
                               : std::numeric_limits<double>::infinity();
  SimOptions routed_options = replay_options;
  routed_options.stop_once_slower_than_us = stop_past;
  // A plan is assembled once (its traces are consumed): kept until its replay has run in full.
  std::vector<std::optional<Schedule>> plans(candidates.size());
  const auto replay_plan = [&](std::size_t i, Schedule plan, const SimOptions& sim_options) {
    auto [schedule, replay] = replayed_executable(std::move(plan), candidates[i], collective, topology, sim_options);
    schedules[i] = std::move(schedule);
    replays[i] = std::move(replay);
    round.scores[i] = replays[i].time_us;
  };
  parallel_for(std::size_t{0}, candidates.size(), [&](std::size_t i) {
    if (outcomes[i].abandoned) return;
    if (!candidates[i].routed && !replay_all) {
      // Nor one past `known_best_us` that both phases' clocks could have stopped (above): it
      // cannot win, and whether it stopped depends on thread timing.
      if (!(phases_per_candidate == 2 && timed_by_plan(candidates[i]) && outcomes[i].total > known_best))
        round.scores[i] = static_cast<double>(outcomes[i].total) / synth::kTicksPerUs;
      return;
    }
    Schedule plan = assemble(candidates[i], outcomes[i], collective, members);
    if (candidates[i].switch_native || !std::isfinite(stop_past)) {
      replay_plan(i, std::move(plan), replay_options);
      return;
    }
    plans[i] = plan;
    replay_plan(i, std::move(plan), routed_options);
    if (replays[i].simulated) plans[i].reset();
  });
  // A stopped replay scores its proof, past stop_past; every candidate that ends by then ran in
  // full. The round's best, the covered waits' threshold (kCoveredWaitsGap times it) and, where the
  // search goes on with a beam, the beam (the fastest kBeam and the fastest of each kind) are those
  // of full replays as long as they are all ahead of every stopped one.
  std::vector<std::size_t> stopped;
  double least_stopped = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!schedules[i] || replays[i].simulated) continue;
    stopped.push_back(i);
    least_stopped = std::min(least_stopped, replays[i].time_us);
  }
  if (!stopped.empty()) {
    std::size_t ahead = 0;
    bool unwound_ahead = false;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!schedules[i] || !replays[i].simulated || !(replays[i].time_us < least_stopped)) continue;
      ++ahead;
      unwound_ahead = unwound_ahead || !candidates[i].switch_native;
    }
    const bool ranked = ahead > 0 && (!beam_follows || (ahead >= kBeam && unwound_ahead));
    if (!ranked) {
      parallel_for(std::size_t{0}, stopped.size(),
                   [&](std::size_t k) { replay_plan(stopped[k], std::move(*plans[stopped[k]]), replay_options); });
    }
  }
  plans.clear();
  // The switch-native candidates near the round's best replay also without the port waits their
  // plan's data covers (covered_port_waits.cpp), kept where faster.
  double best_replayed = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (schedules[i]) best_replayed = std::min(best_replayed, round.scores[i]);
  }
  std::vector<std::size_t> near_best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (schedules[i] && candidates[i].switch_native && round.scores[i] <= kCoveredWaitsGap * best_replayed)
      near_best.push_back(i);
  }
  parallel_for(std::size_t{0}, near_best.size(), [&](std::size_t k) {
    const std::size_t i = near_best[k];
    std::optional<Schedule> freed = synth::without_covered_port_waits(*schedules[i], topology);
    if (!freed) return;
    // Freed transfers can meet on links where the ordered ones took turns, and refilling many
    // flows at once costs: at most kCoveredWaitsWork times the ordered replay's work. And it
    // matters only where it beats the ordered replay: it stops once it provably cannot.
    SimOptions freed_options = replay_options;
    freed_options.max_refill_work = std::max(kCoveredWaitsWork * replays[i].refill_work, kCoveredWaitsLeastWork);
    freed_options.skip_slower_than_us = replays[i].time_us;
    freed_options.long_from_route_hops = 0.0;
    freed_options.stop_once_slower_than_us = replays[i].time_us;
    SimResult freed_replay = simulate(topology, *freed, freed_options);
    if (!freed_replay.simulated || freed_replay.time_us >= replays[i].time_us) return;
    round.scores[i] = freed_replay.time_us;
    schedules[i] = std::move(freed);
    replays[i] = std::move(freed_replay);
  });
  if (by_file) {
    parallel_for(std::size_t{0}, candidates.size(), [&](std::size_t i) {
      if (!schedules[i]) return;
      schedules[i]->retime(replays[i].start_us, replays[i].end_us);
      const double file_us = options.file.estimate(*schedules[i]);
      round.scores[i] = std::isfinite(file_us) ? file_us : kUnwritable_us + replays[i].time_us;
      if (options.file.pipelined) pipelined[i] = options.file.pipelined(*schedules[i], file_us);
    });
  }
  const auto pick_best = [&] {
    round.best = candidates.size();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!std::isfinite(round.scores[i])) continue;
      if (round.best == candidates.size() || round.scores[i] < round.scores[round.best]) round.best = i;
    }
  };
  pick_best();
  // The runtime pipelines files of few, large chunks in slices, which FileModel::estimate does not see. The
  // candidate whose pipeline could be fastest is kept beside the round's scores, which drive the
  // search (its early stops among them), and its file is written at the end where it could win.
  round.pipelined = candidates.size();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (pipelined[i] < pipelined_to_beat &&
        (round.pipelined == candidates.size() || pipelined[i] < pipelined[round.pipelined]))
      round.pipelined = i;
  }
  if (round.pipelined != candidates.size()) {
    const std::size_t i = round.pipelined;
    round.pipelined_estimate_us = pipelined[i];
    round.pipelined_schedule = *schedules[i];
    round.pipelined_time_us = replays[i].time_us;
    round.pipelined_plan_us = static_cast<double>(outcomes[i].total) / synth::kTicksPerUs;
    round.pipelined_link_loads = replays[i].links;
  }
  // The best whose file passes the exact check; one that fails ranks with the unwritable. Where
  // the best few fail, the round's chunk count is past the file's limits: the round ranks with them.
  // Not where the round's best cannot beat an earlier round's anyway.
  std::size_t fit_checks = 0;
  while (by_file && options.file.fits && round.best != candidates.size() && schedules[round.best] &&
         round.scores[round.best] < std::min(kUnwritable_us, best_score_so_far) &&
         !options.file.fits(*schedules[round.best])) {
    if (++fit_checks == kFileFitsChecks) {
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (round.scores[i] < kUnwritable_us) round.scores[i] = kUnwritable_us + replays[i].time_us;
      }
    }
    round.scores[round.best] = kUnwritable_us + replays[round.best].time_us;
    pick_best();
  }
  if (round.best == candidates.size()) return round;
  // Its file's time where it was scored by that; its time on the network otherwise (below).
  const bool scored_by_file = by_file && schedules[round.best].has_value();
  round.score = round.scores[round.best];
  if (schedules[round.best]) {
    round.schedule = std::move(*schedules[round.best]);
    replay = std::move(replays[round.best]);
  } else {
    Schedule planned = assemble(candidates[round.best], outcomes[round.best], collective, members);
    if (switched) {
      std::tie(round.schedule, replay) =
          replayed_executable(std::move(planned), candidates[round.best], collective, topology, replay_options);
    } else {
      round.schedule = executable(std::move(planned), candidates[round.best], topology);
    }
  }
  round.plan_us = static_cast<double>(outcomes[round.best].total) / synth::kTicksPerUs;
  // On switches the schedule's times become those of its replay on the real network: the one
  // time that counts. On point-to-point links the plan is its own replay (each transfer alone on
  // its link), which the tests check.
  if (switched || candidates[round.best].routed) {
    round.schedule.retime(replay.start_us, replay.end_us);
    round.time_us = replay.time_us;
    round.link_loads = std::move(replay.links);
  } else {
    round.time_us = round.plan_us;
    // The plan never undercuts its replay, but a transfer may run before its planned start once
    // its data and link are free (a reduce-scatter planned as a time-reversed all-gather): up to
    // a few percent on uneven networks. Then the replay's times and time are what the user runs.
    // Where the two differ only by the plan's rounding (ticks of 1e-6 us per transfer), the plan
    // is kept: retiming costs 40% of a large synthesis. The replay (one pass: each transfer alone
    // on its planned link, simulator.cpp) and the retiming need 32 bytes per transfer, so the
    // largest plans keep their own.
    if (round.schedule.size() <= kReplayRetimeLimit) {
      SimResult replayed = simulate(topology, round.schedule, replay_options);
      if (replayed.time_us < round.plan_us * (1.0 - kPlanRounding)) {
        round.schedule.retime(replayed.start_us, replayed.end_us);
        round.time_us = replayed.time_us;
      }
      round.link_loads = std::move(replayed.links);
    }
  }
  if (!scored_by_file) round.score = round.time_us;
  return round;
}

/// Whether some link spends at least `share` of a chunk's time on its alpha, at `chunk_bytes` a chunk.
bool alpha_matters(const Topology& topology, double chunk_bytes, double share) {
  for (const Link& link : topology.links()) {
    if (link.latency_us >= share * link_time_us(chunk_bytes, link.latency_us, link.bandwidth_GBps)) return true;
  }
  return false;
}

/// Whether the topology's links differ in bandwidth.
bool mixed_link_speeds(const Topology& topology) {
  for (LinkId id = 1; id < topology.link_count(); ++id) {
    if (topology.link(id).bandwidth_GBps != topology.link(0).bandwidth_GBps) return true;
  }
  return false;
}

/// A single switch and nothing else: every link joins an NPU to it.
bool one_switch_only(const Topology& topology) {
  if (topology.switch_count() != 1) return false;
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (!topology.is_switch(link.src) && !topology.is_switch(link.dst)) return false;
  }
  return true;
}

/// Members that take in different bandwidths (a mesh's corners two links, its inner NPUs four):
/// there an all-reduce's reductions and broadcasts can share the inner links, and the reduction
/// trees packed beside the broadcast trees (tree_method.cpp) beat reduce-scatter then all-gather.
bool uneven_member_ingress(const Topology& topology, const std::vector<NodeId>& members) {
  double lowest = std::numeric_limits<double>::infinity();
  double highest = 0.0;
  for (NodeId member : members) {
    double ingress = 0.0;
    for (LinkId id : topology.in_links(member)) ingress += topology.link(id).bandwidth_GBps;
    lowest = std::min(lowest, ingress);
    highest = std::max(highest, ingress);
  }
  return highest > lowest;
}

/// Makes `schedule`, built and replayed by a method other than the matching (the trees, the boxes),
/// the result. The fields that describe how the matching planned (unwinding, routing, rounds, its
/// rule) are reset: they would describe a schedule that lost.
void adopt_replayed(SynthResult& result, Schedule schedule, SimResult& replay, std::uint32_t chunks_per_npu,
                    std::uint32_t max_chunks_per_transfer) {
  result.schedule = std::move(schedule);
  result.time_us = result.plan_us = replay.time_us;
  result.link_loads = std::move(replay.links);
  result.chunks_per_npu = chunks_per_npu;
  result.max_chunks_per_transfer = max_chunks_per_transfer;
  result.unwind_degree = 0;
  result.unwind_radix = 0;
  result.switch_native = false;
  result.routed = false;
  result.rounds = false;
  result.grouped = false;
  result.policy = SynthPolicy::kTenet;
}

}  // namespace

SynthPolicy parse_synth_policy(const std::string& text, const std::string& option) {
  if (text == "tenet") return SynthPolicy::kTenet;
  if (text == "tacos") return SynthPolicy::kTacos;
  std::string message = "unknown policy '" + text + "'";
  const std::string suggestion = closest_match(text, {"tenet", "tacos"});
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  throw InputError("", option, message + "; expected tenet (the default) or tacos (the paper's rule)");
}

SynthResult synthesize(const Topology& topology, const Collective& collective, const SynthOptions& options) {
  const std::vector<NodeId> members = collective.participants(topology);
  if (members.size() < 2) throw InputError("", "--members", "a collective needs at least 2 members");
  if (collective.chunks_per_npu == 0 && !options.auto_chunks)
    throw InputError("", "--chunks-per-npu", "must be at least 1");
  const double phases = collective.kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  auto transfers_with = [&](double chunks_per_npu) {
    return phases * static_cast<double>(members.size()) * chunks_per_npu *
           (static_cast<double>(topology.npu_count()) - 1.0);
  };
  // More chunks than bytes is no collective anyone runs, and a million sub-byte chunks of a
  // 1 KiB collective would keep the engine busy for minutes.
  const auto whole_bytes = [&](std::uint32_t chunks_per_npu) {
    return static_cast<double>(members.size()) * chunks_per_npu <= static_cast<double>(collective.size_bytes);
  };
  std::vector<std::uint32_t> chunk_counts;
  if (options.auto_chunks) {
    const auto fits_output = [&](std::uint32_t count) {
      return options.max_transfers_per_member == 0 ||
             static_cast<double>(members.size() - 1) * count <= static_cast<double>(options.max_transfers_per_member);
    };
    for (std::uint32_t count = 1; count <= kMaxAutoChunks; count *= 2) {
      if (count == 1 || (transfers_with(count) <= kAutoChunkTransfers && fits_output(count) && whole_bytes(count)))
        chunk_counts.push_back(count);
    }
  } else {
    chunk_counts.push_back(collective.chunks_per_npu);
    if (collective.chunks_per_npu > 1 && !whole_bytes(collective.chunks_per_npu)) {
      const std::uint64_t most = std::max<std::uint64_t>(1, collective.size_bytes / members.size());
      throw InputError("", "--chunks-per-npu",
                       std::to_string(collective.chunks_per_npu) + " chunks per NPU cut " +
                           format_size(collective.size_bytes) + " over " + std::to_string(members.size()) +
                           " members into chunks of less than a byte; use at most " + std::to_string(most) +
                           (most == 1 ? " chunk" : " chunks") + " per NPU");
    }
  }
  const double transfers = transfers_with(chunk_counts.back());
  if (transfers > kMaxTransfers) {
    throw InputError("", "--chunks-per-npu",
                     "the schedule would need about " + std::to_string(static_cast<long long>(transfers)) +
                         " transfers, more than tenet can hold (" +
                         std::to_string(static_cast<long long>(kMaxTransfers)) + ")" +
                         (chunk_counts.back() > 1 ? "; use fewer chunks per NPU" : ""));
  }
  if (static_cast<double>(members.size()) * chunk_counts.back() > 4e9) {
    throw InputError("", "--chunks-per-npu", "too many chunks (at most 4e9 in all)");
  }
  // Switch-native planning: the engine works on the topology itself. The paper's rule exists only
  // for point-to-point links, so --policy tacos means the paper's method, unwinding included.
  const bool switched = topology.switch_count() > 0;
  const bool single_switch = one_switch_only(topology);
  const bool native = switched && options.switches != SwitchPlanning::kUnwind && options.policy == SynthPolicy::kTenet;
  // Unwound candidates are ranked by their replay on the real switches, which their plans do not
  // predict, while they are small enough to route; then a switch-native portfolio holds them too
  // (on one small switch, unwinding into a full mesh is the direct algorithm, and can win).
  const bool rank_routed =
      switched && transfers_with(native ? chunk_counts.front() : chunk_counts.back()) <= kRankRoutedMax;
  const bool unwinding = switched && (!native || (rank_routed && options.switches == SwitchPlanning::kAuto));

  // The topologies the engines plan on: the input itself (no switches, or switch-native), and
  // one unwinding per degree.
  std::vector<std::uint32_t> degrees;
  std::vector<Topology> planned_on;
  if (!switched || native) {
    degrees.push_back(0);
    planned_on.push_back(topology);
  }
  const double largest_chunk = static_cast<double>(collective.size_bytes) / static_cast<double>(members.size()) /
                               static_cast<double>(chunk_counts.front());
  // tenet's rule with every shape of transfer allowed: aggregated, routed, in rounds.
  const bool any_shape = options.policy == SynthPolicy::kTenet && options.transfers == TransferPlanning::kAuto;
  const bool alphas_matter = alpha_matters(topology, largest_chunk, kAggregateAlphaShare);
  const bool aggregating = any_shape && alphas_matter;
  // The densest unwinding of the default degrees, when there are unwindings.
  std::size_t densest = 0;
  if (unwinding) {
    std::vector<std::uint32_t> wanted(std::begin(kDefaultDegrees), std::end(kDefaultDegrees));
    // Beside switch-native plans only the sparsest and densest unwindings: the sparsest (a ring
    // around each switch) wins on trees at one chunk, the densest (the direct algorithm per
    // switch) with many chunks; the ones between seldom win and routing them costs the most.
    if (native) wanted = {kDefaultDegrees[0], kDefaultDegrees[std::size(kDefaultDegrees) - 1]};
    if (options.unwind_degree != 0) wanted = {options.unwind_degree};
    std::vector<std::string> seen;
    for (std::uint32_t degree : wanted) {
      Topology candidate = unwind_switches(topology, static_cast<int>(degree), true);
      // Degrees past a switch group's size are capped by unwinding and may repeat an earlier
      // one; equal link counts alone do not make equal networks (bandwidth splits differ).
      std::string fingerprint = candidate.fingerprint();
      if (std::find(seen.begin(), seen.end(), fingerprint) != seen.end()) continue;
      seen.push_back(std::move(fingerprint));
      degrees.push_back(degree);
      planned_on.push_back(std::move(candidate));
    }
    densest = planned_on.size() - 1;
    // Where alphas matter, a network of one switch larger than the densest default degree reaches
    // is also unwound in full, a link from every NPU to every other: the direct algorithm, one
    // alpha where sparser unwindings pay several (a 16-NPU switch, all-gather of 1 MiB: 21.66 us
    // at degree 8, 20.66 in full, as direct; 32 NPUs 24.32 -> 21.32 us). Not where the switch is
    // one part of the network: there the full unwinding of a group never won and doubled the
    // search (mi250-2x16-ib all-gather of 4 KiB, its 32-NPU IB switch: 0.33 -> 0.73 s); nor past
    // kFullUnwindingNpus NPUs, where the express (routed) candidates plan direct transfers anyway.
    std::uint32_t full = 0;
    if (options.unwind_degree == 0 && aggregating && single_switch) {
      Topology candidate = unwind_switches(topology, static_cast<int>(kFullUnwindingNpus), true, &full);
      if (full > wanted.back() && full < kFullUnwindingNpus) {
        degrees.push_back(full);
        planned_on.push_back(std::move(candidate));
      }
    }
  }
  // With a file to write, where alphas matter on many members, the unwinding in a radix
  // (kUnwindRadix): few rounds over few peers, which a file can hold. Ranked by replay up to
  // kRankRoutedMax transfers, as the routed plans are. Not without a file: there the routed plans
  // win where it could (36 cases of ring-fc-switch-2x4x8, -2x4x16 and hammingmesh-hx2-4x4 at 4 KiB
  // to 16 MiB: 2 faster by 0.2% at most, synthesis 29.6 -> 58.4 s).
  std::optional<std::size_t> in_radix;
  if (unwinding && aggregating && options.file.estimate && options.unwind_degree == 0 &&
      members.size() > kRadixMembers) {
    std::uint32_t links_each = 0;
    Topology candidate = unwind_switches_in_radix(topology, kUnwindRadix, &links_each);
    in_radix = planned_on.size();
    degrees.push_back(links_each);
    planned_on.push_back(std::move(candidate));
  }
  // Where alphas matter, routed transfers (express.hpp): planned on a virtual link per pair of
  // members, cut through the NPUs (or switches) between.
  std::optional<std::size_t> express;
  const double express_share = members.size() <= kExpressCheapMembers ? kExpressAlphaShare : kExpressLargeAlphaShare;
  // And at every size for a few members with NPUs between them that only forward: there every
  // hop by hop transfer is stored and forwarded, paying each hop's serialization, where a routed
  // one pays it once (mesh-4x4-failed-7-9, members 0 and 15, all-reduce of 1 MiB: 41.6 us hop
  // by hop, 27.0 routed, as direct). Likewise for members on switches shared with NPUs outside:
  // there the unwindings split each port among every NPU of the switch and the switch-native
  // matching sends a chunk per port at a time, an alpha per step, where routed transfers all run
  // at once (fat-tree-8x4, members 0-7 on one leaf, all-gather of 1 MiB: 25.35 us, routed 19.35
  // as direct; all-reduce 45.7 -> 38.7 us). Over 108 sub-collectives of the shipped switched
  // networks (one box, one GPU a box, a rail; 1 MiB to 1 GiB) only those of fat-tree-8x4 changed,
  // all to direct's time, and synthesis took 15.7 -> 15.5 s in all. And on a network of one
  // switch at every size: there direct is the collective that meets the ingress bound, and past
  // kFullUnwindingNpus, or where alphas do not matter, nothing else plans it (switches of 16 to 72
  // NPUs, 16 MiB to 1 GiB: up to 3.4% behind direct before, now on it; 21 of 90 cases faster).
  const bool sub_collective = members.size() < topology.npu_count();
  if (any_shape && members.size() <= kExpressMembers &&
      ((aggregating && alpha_matters(topology, largest_chunk, express_share)) ||
       (sub_collective && members.size() <= kExpressForwardedMembers) ||
       (single_switch && options.switches == SwitchPlanning::kAuto))) {
    express = planned_on.size();
    degrees.push_back(0);
    // Where alphas do not matter, no routes through other members: the plan sees each pair's
    // virtual link as its own, but a route through a member shares that member's links with the
    // routes to and from it (mesh-8x8's four corners, all-gather of 16 MiB: 168.6 us routed
    // through the corners, 132.8 without, the ring along the edges 136.3; over 13 sub-collectives
    // x 3 collectives x 1, 16 and 256 MiB, 18 of 117 faster, none slower. At 1 MiB, where alphas
    // matter, cutting through stays faster: 13.99 us against 14.86).
    planned_on.push_back(synth::express_topology(topology, members, aggregating));
  }
  // Through switches, past kExpressCheapMembers members, the routed plans' reductions are replayed
  // ordered only: free they never ran faster (eight cases of 256 members, 4 and 64 KiB) and each
  // replay costs up to 9 s (hammingmesh of 4x4 boards of 4x4, all-reduce of 64 KiB).
  const bool free_express = !switched || members.size() <= kExpressCheapMembers;
  // On switched networks of several groups, the group overlay (group_overlay.hpp), scored by
  // its replay on the real switches like every unwinding. Not with --switches unwind, which is
  // the paper's method alone.
  std::optional<std::size_t> grouped;
  std::size_t overlay_groups = 0;
  if (native && unwinding && any_shape) {
    if (std::optional<synth::GroupOverlay> overlay = synth::group_overlay(topology, members)) {
      grouped = planned_on.size();
      degrees.push_back(0);
      planned_on.push_back(std::move(overlay->topology));
      overlay_groups = overlay->groups;
    }
  }
  std::vector<Topology> transposed;
  if (collective.kind != CollectiveKind::kAllGather) {
    for (const Topology& candidate : planned_on) transposed.push_back(synth::transpose(candidate));
  }

  // Families: what a candidate is apart from its chunk count. Every sender order for
  // switch-native plans on networks small enough to score many candidates; on larger ones the two
  // that are cheapest to run (on the 1,024-NPU ring-fc-switch all four give the same time, and the
  // unordered one takes three times as long).
  std::vector<Family> families;
  for (std::uint32_t restart = 0; restart < std::max<std::uint32_t>(1, options.restarts); ++restart) {
    const std::uint64_t seed = options.seed + restart;
    for (std::size_t d = 0; d < degrees.size(); ++d) {
      // The radix's unwinding is for aggregated transfers: a chunk at a time it is a ring's
      // store and forward over thinner links.
      if (d == express || d == grouped || d == in_radix) continue;
      if (!(switched && degrees[d] == 0)) {
        families.push_back({SenderOrder::kAny, d, options.policy, seed});
        continue;
      }
      for (SenderOrder order :
           {SenderOrder::kNearFirst, SenderOrder::kRingFirst, SenderOrder::kAny, SenderOrder::kFarFirst}) {
        const bool cheap = order == SenderOrder::kNearFirst || order == SenderOrder::kRingFirst;
        if (cheap || rank_routed) families.push_back({order, d, options.policy, seed});
      }
    }
  }
  // tenet's rule weighs each link's choice against faster paths, which serves sparse unwindings
  // well; on dense ones the paper's rule, which serves the cheapest link first, keeps more of
  // them busy (the 1,024-NPU ring-fc-switch: 760 us against 895 us at degree 8), and on small
  // switch groups it can win outright. So when unwinding, the default also runs the paper's
  // rule once, on the densest unwinding tried, and keeps whichever is faster.
  if (options.policy == SynthPolicy::kTenet && unwinding) {
    families.push_back({SenderOrder::kAny, densest, SynthPolicy::kTacos, options.seed});
  }
  // On point-to-point links of mixed speeds the paper's rule, cheapest link first, can keep the
  // slow links busier than tenet's weighing of faster paths does (the TACOS suite's heterogeneous
  // 5x5 mesh, 50/75 GiB/s: 8005 us against 9609 us), so it runs beside it there too.
  if (options.policy == SynthPolicy::kTenet && !switched && mixed_link_speeds(topology)) {
    families.push_back({SenderOrder::kAny, 0, SynthPolicy::kTacos, options.seed});
  }
  // Where alphas matter, aggregated transfers: on point-to-point links and their express
  // topology, on every unwinding tried (the sparsest, a ring around each switch, sends blocks
  // as the ring does: tree-4x8 all-reduce of 1 MiB 402 -> 326 us), and switch-native, in every
  // sender order the chunk-by-chunk search runs, at every cap (fat-tree-8x4 reduce-scatter of
  // 1 MiB 45.2 -> 36.7 us, at up to 8 chunks a transfer).
  std::vector<std::size_t> aggregated_on;
  if (aggregating && (!switched || native)) aggregated_on.push_back(0);
  if (express) aggregated_on.push_back(*express);
  for (std::size_t d = 0; d < degrees.size(); ++d) {
    if (aggregating && unwinding && (degrees[d] != 0 || d == grouped)) aggregated_on.push_back(d);
  }
  std::vector<Family> aggregated_families;
  // On large networks only the family that wins there (up to 8 chunks a transfer: mesh-32x32 and
  // torus-64x64 all-gather of 64 MiB), each run costing seconds.
  const bool few_aggregated = transfers_with(chunk_counts.front()) > kAggregatedFamiliesUpTo;
  // The caps below a whole link's worth tried beside it (none past kCappedAggregationChunks).
  std::vector<std::uint32_t> small_caps;
  if (chunk_counts.back() <= kCappedAggregationChunks) small_caps = {2, 4, 8};
  const std::uint32_t few_cap = small_caps.empty() ? kAggregateAll : small_caps.back();
  for (std::size_t d : aggregated_on) {
    if (switched && degrees[d] == 0 && d != express && d != grouped) {
      if (few_aggregated) {
        aggregated_families.push_back({SenderOrder::kNearFirst, d, SynthPolicy::kTenet, options.seed, few_cap, 0.0});
        continue;
      }
      for (SenderOrder order :
           {SenderOrder::kNearFirst, SenderOrder::kRingFirst, SenderOrder::kAny, SenderOrder::kFarFirst}) {
        const bool cheap = order == SenderOrder::kNearFirst || order == SenderOrder::kRingFirst;
        if (!cheap && !rank_routed) continue;
        aggregated_families.push_back({order, d, SynthPolicy::kTenet, options.seed, kAggregateAll, 0.0});
        for (std::uint32_t cap : small_caps)
          aggregated_families.push_back({order, d, SynthPolicy::kTenet, options.seed, cap, 0.0});
      }
      continue;
    }
    if (few_aggregated) {
      if (d != express)
        aggregated_families.push_back({SenderOrder::kAny, d, SynthPolicy::kTenet, options.seed, few_cap, 0.0});
      continue;
    }
    for (double wait : {0.0, kAggregateWait})
      aggregated_families.push_back({SenderOrder::kAny, d, SynthPolicy::kTenet, options.seed, kAggregateAll, wait});
    // Capped, a link leaves chunks for the in-links that free up next: more alphas, better balance
    // (torus-16x16 all-gather 16 MiB: 115.9 us chunk by chunk, 106.4 aggregated, 103.4 at 2 a
    // transfer and 2 chunks per NPU). Routed transfers are one chunk each anyway.
    if (d == express) continue;
    for (std::uint32_t cap : small_caps)
      aggregated_families.push_back({SenderOrder::kAny, d, SynthPolicy::kTenet, options.seed, cap, 0.0});
  }
  // Synchronous rounds (AllGatherProblem::rounds): on point-to-point networks, at every size,
  // where the aggregated families all run. Every link of a round starts together with all it can bring,
  // so the links of a regular network stay evenly loaded, as Swing's and bucket's steps do:
  // hypercube-6 all-gather of 1 MiB 7.43 -> 6.44 us (Swing 6.44), torus-8x8 all-gather of
  // 16 MiB 91.9 -> 87.9 us (bucket 89.6).
  std::vector<Family> round_families;
  if (!switched && any_shape && transfers_with(chunk_counts.front()) <= kAggregatedFamiliesUpTo) {
    round_families.push_back({SenderOrder::kAny, 0, SynthPolicy::kTenet, options.seed, kAggregateAll, 0.0, true});
  }
  // And on every unwinding tried, scored by their replay on the real switches like every unwound
  // candidate: tree-4x8 all-gather of 1 MiB 137.7 -> 117.3 us (ring 146.9).
  if (switched && unwinding && any_shape) {
    for (std::size_t d = 0; d < degrees.size(); ++d) {
      if ((degrees[d] != 0 && d != express) || d == grouped)
        round_families.push_back({SenderOrder::kAny, d, SynthPolicy::kTenet, options.seed, kAggregateAll, 0.0, true});
    }
  }
  // Their chunk counts: up to 16, and a member's in-degree where that is no power of two (within
  // the counts allowed): then each in-link of a round can carry the same share of every block,
  // as Swing's ports do (hypercube-6 and torus-4x4x4 at 1 MiB reach Swing's time at 6 chunks,
  // 1-2% behind at 4 or 8).
  std::vector<std::uint32_t> round_counts(
      chunk_counts.begin(),
      chunk_counts.begin() + static_cast<std::ptrdiff_t>(std::min(kSynchronousRounds, chunk_counts.size())));
  if (options.auto_chunks && !round_families.empty()) {
    std::uint32_t degree = 0;
    for (NodeId member : members) {
      degree = std::max(degree, topology.in_degree(member));
    }
    if (degree > 2 && !std::has_single_bit(degree) && degree < round_counts.back()) {
      round_counts.insert(std::upper_bound(round_counts.begin(), round_counts.end(), degree), degree);
    }
  }

  // Chunk by chunk, also the count at which the members' ingress splits best over their
  // in-links where that is no power of two (even_split.hpp): the TACOS suite's 4x2x3 mesh at 3
  // chunks per NPU, 19178 us against 19280 at the best power of two.
  std::vector<std::uint32_t> matching_counts = chunk_counts;
  if (options.auto_chunks && !switched) {
    const std::optional<std::uint32_t> even = synth::even_split_chunk_count(
        topology, members, collective.kind, static_cast<double>(collective.size_bytes), chunk_counts.back());
    if (even && !std::has_single_bit(*even))
      matching_counts.insert(std::upper_bound(matching_counts.begin(), matching_counts.end(), *even), *even);
  }

  // Chunk counts go in rounds, doubling: every family at the first, then the best few (a beam) at
  // each next count, until rounds stop finding anything faster or the schedule would grow too large.
  // Everything a round compares is deterministic, so the search is too.
  SynthResult result;
  double best_time = std::numeric_limits<double>::infinity();
  // What candidates are ranked by: their time, or their file's (run_round).
  double best_score = std::numeric_limits<double>::infinity();
  std::optional<Candidate> winner;
  std::uint32_t tried = 0;
  // A candidate's plan that did not fit in ticks, of the most chunks per NPU tried: what the user
  // hears if none fits. With one chunk it is a transfer past 20 hours ("more chunks"); where more
  // chunks were tried and did not fit either, it is their reason.
  std::exception_ptr too_long;
  std::uint32_t too_long_chunks = 0;
  // With a file to write on point-to-point links, where candidates are ranked by their plans, the
  // best after each search is kept, and the one whose file runs fastest wins: a faster plan of
  // blocks gathered from many NPUs can make a slower file, each block cut into a step per run
  // of contiguous chunks (torus-4x4 all-reduce of 1 MiB in rounds: 13.83 us planned, 15.64 us as
  // XML, where the matching's 14.49 us plan ran as 14.49).
  struct Finalist {
    Candidate candidate;
    Schedule schedule;
    double time_us;
    double plan_us;
    std::vector<LinkLoad> link_loads;
    double estimate_us = 0.0;  ///< a pipelined contender's estimate (SynthOptions::FileModel::pipelined)
  };
  // The winner so far as a finalist (a copy), and a finalist made the winner (the caller sets the
  // score it won by).
  const auto winner_so_far = [&] {
    return Finalist{*winner, result.schedule, best_time, result.plan_us, result.link_loads};
  };
  const auto adopt = [&](Finalist& finalist) {
    winner = finalist.candidate;
    best_time = finalist.time_us;
    result.schedule = std::move(finalist.schedule);
    result.plan_us = finalist.plan_us;
    result.link_loads = std::move(finalist.link_loads);
  };
  // The candidates whose files the runtime's pipelines of slices could make fastest, by estimate.
  std::vector<Finalist> pipelined;
  // Each search's own best too, kept (below) where the fastest plan so far cannot be written.
  // An estimate that only screens (an MSCCL++ plan's: the schedule's own time where its
  // threadblocks could fit) says little of how the file runs: more finalists, every one timed.
  const bool screened = options.file.estimate_screens;
  const double near_plan = screened ? kScreenedNearPlan : kNearPlan;
  const bool keeps_finalists = !switched && static_cast<bool>(options.file.estimate);
  // A finalist's file time; written where the runtime's pipeline could make it faster (`written`
  // then says so).
  const auto finalist_file_us = [&](const Schedule& schedule, bool* written = nullptr) {
    const double file_us = options.file.estimate(schedule);
    if (options.file.pipelined && options.file.written &&
        options.file.pipelined(schedule, file_us) < kPipelineGain * file_us) {
      if (written) *written = true;
      return std::min(file_us, options.file.written(schedule));
    }
    return file_us;
  };
  std::vector<Finalist> finalists;
  double kept_time = std::numeric_limits<double>::infinity();  // the fastest plan among the finalists
  std::optional<Finalist> search_best;
  bool search_led = false;  // the running search has found the best so far
  // Plans that lost narrowly (each round's best, and each best that a later round beat), kept as
  // finalists too where their files may run faster (kNearPlan).
  std::vector<Finalist> near;
  const auto keep_near = [&](const Candidate& candidate, Schedule& schedule, double time_us, double plan_us,
                             std::vector<LinkLoad>& link_loads) {
    if (!keeps_finalists || schedule.size() > kNearFinalistTransfers || !(time_us <= near_plan * best_time)) return;
    near.push_back({candidate, std::move(schedule), time_us, plan_us, std::move(link_loads)});
  };
  // One chunk count of `counts` per round, in order; `every_family`: no beam, every family at every
  // count (within the transfer budget).
  auto search = [&](const std::vector<Family>& start, int patience, std::size_t max_rounds, bool every_family,
                    const std::vector<std::uint32_t>& counts) {
    std::vector<Family> active = start;
    int rounds_without_gain = 0;
    search_led = false;
    double work = 0.0;  // transfers planned so far
    for (std::size_t round = 0; round < std::min(max_rounds, counts.size()) && !active.empty(); ++round) {
      const std::uint32_t chunks = counts[round];
      // Unwound plans are scored by routing them through the switches; beside switch-native ones
      // only while that stays affordable.
      const bool routable =
          transfers_with(chunks) <= (native ? kPortfolioRoutedMax : static_cast<double>(kRankRoutedMax));
      // Plans routed member to member, as the direct algorithm sends, up to 256 members through
      // switches (two-level-switch-32x8 all-gather of 4 KiB: 10.05 us switch-native, 2.08 routed,
      // direct's 2.06; all-reduce 21.09 -> 4.13 us), though routing 60,000 and more transfers
      // costs seconds.
      const bool express_routable = transfers_with(chunks) <= static_cast<double>(kRankRoutedMax);
      std::vector<Candidate> candidates;
      for (const Family& family : active) {
        const bool switch_native = switched && degrees[family.d] == 0 && family.d != express && family.d != grouped;
        const bool like_express = family.d == express || family.d == in_radix;
        if (native && !switch_native && !(like_express ? express_routable : routable)) continue;
        candidates.push_back({chunks, family.order, degrees[family.d], family.seed, family.policy,
                              &planned_on[family.d], transposed.empty() ? nullptr : &transposed[family.d],
                              switch_native, family.d == express, family.d == grouped, family,
                              alphas_matter && (family.d != express || free_express), family.d == in_radix});
      }
      if (candidates.empty()) break;
      tried += static_cast<std::uint32_t>(candidates.size());
      work += static_cast<double>(candidates.size()) * transfers_with(chunks);
      const bool replay_all = switched && (native || routable);
      const double pipelined_to_beat = pipelined.size() < kPipelinedContenders ? std::numeric_limits<double>::infinity()
                                                                               : pipelined.back().estimate_us;
      // Whether the next round's families come from this round's ranking (the beam, below).
      const bool still_every_family =
          every_family ||
          (round + 1 < counts.size() &&
           work + static_cast<double>(start.size()) * transfers_with(counts[round + 1]) <= kExhaustiveTransfers);
      // The last round of a search (or each, without a beam) uses only a best that beats the best so far.
      const bool last_round = !options.auto_chunks || round + 1 >= std::min(max_rounds, counts.size());
      const bool losers_unranked = !keeps_finalists && (still_every_family || last_round);
      RoundResult outcome = run_round(
          topology, collective, members, candidates, options, replay_all, !still_every_family, losers_unranked,
          switched ? std::numeric_limits<double>::infinity() : best_time, best_score, pipelined_to_beat);
      if (outcome.too_long && chunks > too_long_chunks) {
        too_long = outcome.too_long;
        too_long_chunks = chunks;
      }
      if (outcome.pipelined < candidates.size()) {
        // Kept in order of estimate (ties: the earlier), the fewest.
        if (pipelined.size() == kPipelinedContenders) pipelined.pop_back();
        Finalist contender{
            candidates[outcome.pipelined], std::move(outcome.pipelined_schedule),   outcome.pipelined_time_us,
            outcome.pipelined_plan_us,     std::move(outcome.pipelined_link_loads), outcome.pipelined_estimate_us};
        const auto at = std::upper_bound(pipelined.begin(), pipelined.end(), contender.estimate_us,
                                         [](double estimate, const Finalist& f) { return estimate < f.estimate_us; });
        pipelined.insert(at, std::move(contender));
      }
      const bool improved = outcome.best < candidates.size() && outcome.score < best_score;
      // A copy only while this search has not led (then its best is the winner, kept anyway).
      search_led = search_led || improved;
      if (keeps_finalists && !search_led && outcome.best < candidates.size() &&
          (!search_best || outcome.time_us < search_best->time_us)) {
        search_best =
            Finalist{candidates[outcome.best], outcome.schedule, outcome.time_us, outcome.plan_us, outcome.link_loads};
      }
      if (improved) {
        // The best so far, unless a finalist already holds it.
        if (winner && best_time != kept_time)
          keep_near(*winner, result.schedule, best_time, result.plan_us, result.link_loads);
        best_score = outcome.score;
        best_time = outcome.time_us;
        winner = candidates[outcome.best];
        result.schedule = std::move(outcome.schedule);
        result.plan_us = outcome.plan_us;
        result.link_loads = std::move(outcome.link_loads);
      } else if (outcome.best < candidates.size()) {
        keep_near(candidates[outcome.best], outcome.schedule, outcome.time_us, outcome.plan_us, outcome.link_loads);
      }
      // A round whose plans did not fit in ticks, before any fitted, costs no patience: more
      // chunks make shorter transfers (1 TiB over two NPUs at 1 MB/s fits at 8 chunks per NPU).
      const bool none_fit_yet = !winner && outcome.too_long && outcome.best == candidates.size();
      if (!none_fit_yet) rounds_without_gain = improved ? 0 : rounds_without_gain + 1;
      if (!options.auto_chunks || rounds_without_gain == patience) break;
      if (replay_all && !improved && outcome.best < candidates.size() && outcome.score > kHopelessRound * best_score)
        break;
      if (round + 1 < counts.size() &&
          work + static_cast<double>(std::min(active.size(), kBeam + 1)) * transfers_with(counts[round + 1]) >
              kSearchTransfers) {
        break;
      }
      if (still_every_family) continue;
      // The beam: the families of the fastest few of this round, and the fastest of each way of
      // planning on switches (native, unwound), fastest first (ties: earlier). Under branch and
      // bound (plans scored, not replays) which losers stopped early, and so which have a score,
      // depends on thread timing; only the winner's is certain. There the beam is the winner and
      // then the others in family order, so the search does not depend on the threads.
      std::vector<double> rank = outcome.scores;
      for (std::size_t i = 0; i < rank.size() && !replay_all; ++i) {
        if (i != outcome.best) rank[i] = std::numeric_limits<double>::infinity();
      }
      std::vector<std::size_t> order(candidates.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rank[a] < rank[b]; });
      active.clear();
      bool native_kept = false;
      bool unwound_kept = false;
      for (std::size_t i : order) {
        const bool first_of_kind = candidates[i].switch_native ? !native_kept : !unwound_kept;
        if (active.size() >= kBeam && !first_of_kind) continue;
        active.push_back(candidates[i].family);
        (candidates[i].switch_native ? native_kept : unwound_kept) = true;
      }
    }
  };
  auto keep_finalist = [&] {
    if (!keeps_finalists || !winner) return;
    if (best_time < kept_time) {
      finalists.push_back(winner_so_far());
      kept_time = best_time;
    } else if (search_best && !std::isfinite(options.file.estimate(finalists.back().schedule))) {
      // The fastest plan cannot be written, for one: hop by hop through NPUs outside the members,
      // which are no ranks. This search's best may be (routed transfers go member to member).
      finalists.push_back(std::move(*search_best));
    }
    search_best.reset();
  };
  // Aggregated and routed candidates search on their own, after: the search above stays what it
  // was (their rounds would crowd its beam and budgets), and on point-to-point links they stop as
  // soon as they pass its best. A few chunk counts, every family at each (which wins changes with
  // the count), until two in a row gain nothing.
  // On point-to-point networks too large for more than one round of either search (a single
  // aggregated family, few_aggregated), the aggregated one goes first: it wins there, and the
  // chunk-by-chunk run then stops as soon as it passes that time instead of holding its full trace
  // and schedule beside the aggregated run (mesh-128x128 all-gather of 64 MiB: 268 million
  // transfers). Both rounds run either way and the faster wins (an exact tie now goes to the
  // aggregated one), so only the cost changes.
  const bool aggregated_first = few_aggregated && !switched;
  if (!aggregated_first) {
    search(families, kPatience, matching_counts.size(), false, matching_counts);
    keep_finalist();
  }
  search(aggregated_families, 2, kAggregatedRounds, true, chunk_counts);
  keep_finalist();
  // On the group overlay, aggregated transfers at more chunk counts: there a block crosses the
  // fabric once per group and then spreads over the group's local links, and the count that evens
  // both out follows the groups, not the powers of two the search above stops at (fat-tree-8x4
  // all-gather of 64 MiB: 1336.9 us at 1 to 4 chunks, 1318.0 at 3, 6 and 12, a chunk per other
  // group; two 2x8 A100 boxes' reduce-scatter of 64 MiB: 231.9 us, 209.6 at 8 and 16). Counts up
  // to 16, as the synchronous rounds, where a chunk's alphas matter (kAggregateAlphaShare).
  if (grouped && any_shape && options.auto_chunks) {
    std::vector<Family> overlay_families{
        {SenderOrder::kAny, *grouped, SynthPolicy::kTenet, options.seed, kAggregateAll, 0.0}};
    for (std::uint32_t cap : small_caps)
      overlay_families.push_back({SenderOrder::kAny, *grouped, SynthPolicy::kTenet, options.seed, cap, 0.0});
    const std::size_t last = std::min(kSynchronousRounds, chunk_counts.size());
    std::vector<std::uint32_t> overlay_counts(chunk_counts.begin(),
                                              chunk_counts.begin() + static_cast<std::ptrdiff_t>(last));
    for (std::uint32_t count = static_cast<std::uint32_t>(overlay_groups - 1);
         count > 2 && !std::has_single_bit(count) && count < overlay_counts.back(); count *= 2) {
      overlay_counts.insert(std::upper_bound(overlay_counts.begin(), overlay_counts.end(), count), count);
    }
    // What the aggregated search ran already, and counts whose chunks are too large for alphas to matter.
    std::erase_if(overlay_counts, [&](std::uint32_t count) {
      const bool searched = aggregating && std::has_single_bit(count) && std::bit_width(count) <= kAggregatedRounds;
      return searched || !alpha_matters(topology, largest_chunk / count, kAggregateAlphaShare);
    });
    // With a file to write, a winner found here is written beside the one it displaces, and the
    // faster file stays: its finer chunks can need more transfers between a pair of ranks than
    // the runtime's lanes hold at once, which the estimate does not see (fat-tree-8x4 all-reduce
    // of 1 MiB: 8 chunks estimated ahead of the 1-chunk winner's 49.25 us ran 50.44 us).
    std::optional<Finalist> displaced;
    if (!overlay_counts.empty() && options.file.written && winner) displaced = winner_so_far();
    const double displaced_score = best_score;
    if (!overlay_counts.empty())
      search(overlay_families, static_cast<int>(overlay_counts.size()), overlay_counts.size(), true, overlay_counts);
    if (displaced && search_led && options.file.written(displaced->schedule) <= options.file.written(result.schedule)) {
      adopt(*displaced);
      best_score = displaced_score;
    }
  }
  if (aggregated_first) {
    search(families, kPatience, matching_counts.size(), false, matching_counts);
    keep_finalist();
  }
  // Synchronous rounds at every size, on 1 to 16 chunks per NPU, each count tried (within the
  // budgets): a round at 2 chunks can tie the best so far and 4 beat it (torus-4x4 at 16 MiB).
  search(round_families, static_cast<int>(round_counts.size()), round_counts.size(), true, round_counts);
  keep_finalist();
  if (!winner && too_long) std::rethrow_exception(too_long);
  if (!winner) throw std::logic_error("synthesize: no candidate finished");
  // The near plans go first, so that a tie goes to a finalist (the faster plan).
  std::erase_if(near, [&](const Finalist& f) { return !(f.time_us <= near_plan * best_time); });
  std::stable_sort(near.begin(), near.end(),
                   [](const Finalist& a, const Finalist& b) { return a.time_us < b.time_us; });
  const std::size_t near_finalists = screened ? kScreenedNearFinalists : kNearFinalists;
  if (near.size() > near_finalists) near.erase(near.begin() + static_cast<std::ptrdiff_t>(near_finalists), near.end());
  finalists.insert(finalists.begin(), std::make_move_iterator(near.begin()), std::make_move_iterator(near.end()));
  near.clear();
  std::optional<double> chosen_file_us;  // the chosen finalist's file time, where already known
  if (finalists.size() > 1) {
    // The one whose file is fastest (ties: the later one, its plan faster or alone writable). Files
    // estimated within kNearPlan of the fastest estimate are laid out and timed: the estimate does
    // not see how a layout's staging and threadblocks serialize.
    std::vector<double> file_us(finalists.size());
    std::vector<char> written(finalists.size(), 0);  // file_us already counts the file as written
    for (std::size_t i = 0; i < finalists.size(); ++i) {
      bool was_written = false;
      file_us[i] = finalist_file_us(finalists[i].schedule, &was_written);
      written[i] = was_written ? 1 : 0;
    }
    const double best_estimate = *std::min_element(file_us.begin(), file_us.end());
    std::vector<std::size_t> close;
    for (std::size_t i = 0; i < finalists.size(); ++i) {
      if ((screened ? std::isfinite(file_us[i]) : file_us[i] <= kNearPlan * best_estimate) &&
          finalists[i].schedule.size() <= kNearFinalistTransfers)
        close.push_back(i);
    }
    if (options.file.written && std::isfinite(best_estimate) && close.size() > 1) {
      // In order of estimate. Files seldom run faster than their estimates, so one estimated no
      // faster than a file already timed is not timed, and counts as no faster than that file
      // (its estimate alone would beat the file it could not beat). One estimated faster is
      // timed, however narrowly: skipped within kNearPlan, hypercube-6's all-reduce of 1 GiB at 2
      // chunks per NPU (estimated 7067 us, written 7067) lost to a file of 6 chunks timed at 7114.
      std::stable_sort(close.begin(), close.end(),
                       [&](std::size_t a, std::size_t b) { return file_us[a] < file_us[b]; });
      double fastest_file_us = std::numeric_limits<double>::infinity();
      std::vector<std::size_t> untimed;
      for (std::size_t i : close) {
        if (!screened && file_us[i] >= fastest_file_us) {
          untimed.push_back(i);
          continue;
        }
        if (!written[i]) file_us[i] = options.file.written(finalists[i].schedule);
        fastest_file_us = std::min(fastest_file_us, file_us[i]);
      }
      for (std::size_t i : untimed) file_us[i] = std::max(file_us[i], fastest_file_us);
    }
    std::size_t pick = finalists.size() - 1;
    for (std::size_t i = pick; i-- > 0;) {
      if (file_us[i] < file_us[pick]) pick = i;
    }
    const double pick_file_us = file_us[pick];
    chosen_file_us = pick_file_us;
    adopt(finalists[pick]);
  }
  // The second method: spanning trees packed to the cut bound's throughput, scored the same way:
  // with a file to write, by that file's time, on point-to-point networks too (the fastest tree
  // schedule of dgx1-8's all-reduce of 64 MiB, 256 chunks per NPU, has no MSCCL XML).
  std::optional<synth::TreeMethodResult> trees;
  const bool all_reduce = collective.kind == CollectiveKind::kAllReduce;
  const bool uneven_ingress = uneven_member_ingress(topology, members);
  // Where members take in different bandwidths the matching can fall short on point-to-point
  // links too, for all-gather and reduce-scatter: on a 2x8 mesh (corners on two links, the rest
  // on three) it ran an all-gather of 1 GiB 6.7% over the bound where the ring is on it; trees
  // run it 1.5% over. They are tried there up to kTreesAlwaysMembers members: on shipped meshes
  // of up to 64 NPUs (two collectives, 4 KiB to 1 GiB) they made 2 of 84 schedules 2-3% faster
  // for 1.7 s more synthesis in all; on mesh-10x10 they won nothing for 2 s.
  const bool trees_for_uneven_ingress = uneven_ingress && (all_reduce || members.size() <= kTreesAlwaysMembers);
  // The methods below choose their own chunk counts and their own routes through switches, so
  // only when the user left both to tenet, and only where blocks are large enough that the
  // pipelines' alphas do not matter and the matching is not at the bound already.
  const bool left_to_tenet = options.policy == SynthPolicy::kTenet && options.transfers == TransferPlanning::kAuto &&
                             options.auto_chunks && options.switches == SwitchPlanning::kAuto;
  const double bound_us =
      left_to_tenet ? lower_bound(topology, collective, compute_diameter(topology, members)).total_us : 0.0;
  const bool own_methods =
      left_to_tenet && best_time > (members.size() <= kTreeMembers ? kBoxGap : kLargeNetworkGap) * bound_us;
  const bool large_blocks = !alpha_matters(
      topology, static_cast<double>(collective.size_bytes) / static_cast<double>(members.size()), kTreeAlphaShare);
  // The third method first: boxes joined by rails (box_rails.hpp), on any number of members, where
  // link speeds show boxes, at sizes where its rail transfers are not mostly alpha (it decides).
  // Where it comes near the bound on more than kTreesAlwaysMembers members the trees, which take
  // seconds to a minute to pack there, are not tried; on fewer they still are, and win some by a
  // few tenths of a percent (h100-4x8-rail all-reduce of 1 GiB: 4179.7 us against 4196.7).
  std::optional<synth::BoxRails> boxes;
  std::optional<synth::BoxRailsResult> boxed;
  if (own_methods && options.box_rails) boxes = synth::find_box_rails(topology, members);
  if (boxes) {
    boxed = synth::synthesize_box_rails(topology, collective.kind, collective.size_bytes, members, *boxes,
                                        kBoxRailsTransfers, options.file.estimate);
    if (boxed && options.file.fits && !options.file.fits(boxed->schedule)) boxed.reset();
  }
  const bool boxes_near_bound =
      boxed && members.size() > kTreesAlwaysMembers && boxed->replay.time_us <= kLargeNetworkGap * bound_us;
  if (own_methods && best_time > kTreeGap * bound_us && large_blocks && !boxes_near_bound &&
      members.size() <= kTreeMembers && (switched || mixed_link_speeds(topology) || trees_for_uneven_ingress)) {
    // Without a file the trees must beat the matching's time and the boxes' (see the end).
    const double to_beat = std::min(best_score, boxed ? boxed->score_us : std::numeric_limits<double>::infinity());
    // What the trees can gain is the distance of that time from the bound, no more than the
    // matching's and never taken below the gap at which trees run.
    const double gap = std::max(std::min(best_time, to_beat) / bound_us - 1.0, kTreeGap - 1.0);
    const auto replay_work = static_cast<std::uint64_t>(std::min(kTreeReplayWorkPerGap * gap, 1e18));
    trees = synth::synthesize_with_trees(topology, collective.kind, collective.size_bytes, members, kTreeTransfers,
                                         options.file.estimate, all_reduce && uneven_ingress, options.file.written,
                                         replay_work, options.file.transfers_per_rank, to_beat);
  }
  // A file the runtime pipelines in slices, where it runs faster than the search's winner's (that
  // one's estimate where clearly slower, else its file: two-level-switch-8x4 reduce-scatter of
  // 1 GiB, one chunk per NPU written at 4.192 ms, the winner estimated and written at 4.155) and
  // could beat the trees'.
  const double trees_score = trees ? trees->score_us : std::numeric_limits<double>::infinity();
  // The winner's estimate runs fast too: where the best pipeline's estimate comes near it, the
  // winner's own file is written and stands in for it (fat-tree-8x4 all-gather of 1 GiB: the
  // winner estimated at 20.87 ms ran 21.80 as a file, a one-chunk file pipelined 20.92).
  std::optional<double> winner_file_us;
  if (!pipelined.empty() && trees_score >= best_score && pipelined.front().estimate_us >= kPipelineGain * best_score &&
      pipelined.front().estimate_us < kPipelineNear * best_score)
    winner_file_us = options.file.written(result.schedule);
  const double winner_us = winner_file_us ? *winner_file_us : best_score;
  Finalist* piped = nullptr;
  double piped_file_us = std::numeric_limits<double>::infinity();
  for (Finalist& contender : pipelined) {
    if (contender.estimate_us >= kPipelineGain * std::min({winner_us, trees_score, piped_file_us})) break;
    const double file_us = options.file.written(contender.schedule);
    if (file_us < piped_file_us) {
      piped = &contender;
      piped_file_us = file_us;
    }
  }
  if (piped && (piped_file_us < winner_us || (!winner_file_us && piped_file_us < kFileEstimateDoubt * best_score &&
                                              piped_file_us < options.file.written(result.schedule)))) {
    adopt(*piped);
    best_score = piped_file_us;
    winner_file_us = piped_file_us;
  }
  // What the trees must beat: on switched networks the candidates were scored by their file
  // already; on point-to-point ones the chosen finalist's file.
  // Where the incumbent's file was written above, that file's time, not the estimate.
  double incumbent_score = winner_file_us ? *winner_file_us : best_score;
  if (trees && keeps_finalists) incumbent_score = chosen_file_us ? *chosen_file_us : finalist_file_us(result.schedule);
  result.time_us = best_time;
  result.unwind_degree = winner->degree;
  result.unwind_radix = winner->in_radix ? kUnwindRadix : 0;
  result.switch_native = winner->switch_native;
  result.chunks_per_npu = winner->chunks;
  result.seed = winner->seed;
  result.policy = winner->policy;
  result.sender_order = winner->order;
  result.max_chunks_per_transfer = winner->family.aggregate == kAggregateAll ? 0 : winner->family.aggregate;
  result.routed = winner->routed;
  result.rounds = winner->family.rounds;
  result.grouped = winner->grouped;
  result.candidates = tried;
  bool trees_win = trees && trees->score_us < incumbent_score;
  if (trees && (trees->rerouted || trees->written) && options.file.written && std::isfinite(trees->score_us) &&
      std::isfinite(incumbent_score) &&
      std::max(trees->score_us, incumbent_score) <= kFileEstimateDoubt * std::min(trees->score_us, incumbent_score)) {
    const double trees_file = trees->written ? trees->score_us : options.file.written(trees->schedule);
    // Files seldom run faster than their estimates (msccl_expected_time_us), so the matching's is
    // written only where its estimate beats the trees' file.
    trees_win = trees_file < incumbent_score || (!winner_file_us && trees_file < options.file.written(result.schedule));
  }
  // The box-and-rail schedule, where it beats the standing winner; with a file to write, as written.
  const double standing_us = trees_win ? trees->score_us : incumbent_score;
  if (boxed && boxed->score_us < standing_us && options.file.written)
    boxed->score_us = options.file.written(boxed->schedule);
  if (boxed && boxed->score_us < standing_us) {
    adopt_replayed(result, std::move(boxed->schedule), boxed->replay, boxed->units * boxed->pieces, 0);
    result.candidates += (trees ? trees->tried : 0) + boxed->tried;
    result.box_rails = BoxRailsSummary{static_cast<std::uint32_t>(boxes->boxes.size()), boxes->positions(),
                                       boxed->units, boxed->pieces, boxed->groups};
    return result;
  }
  if (boxed) result.candidates += boxed->tried;
  if (trees_win) {
    adopt_replayed(result, std::move(trees->schedule), trees->replay, trees->units.per_member * trees->pieces, 1);
    result.candidates += trees->tried;
    result.trees =
        TreeSummary{trees->units.per_member, trees->units.unit_GBps, trees->units.share, trees->pieces, trees->trees};
    return result;
  }
  if (winner->in_radix) {
    result.schedule.notes.push_back("switches unwound in radix " + std::to_string(kUnwindRadix) + ", " +
                                    std::to_string(winner->degree) + " links per NPU");
  } else if (winner->degree != 0) {
    result.schedule.notes.push_back("switches unwound at degree " + std::to_string(winner->degree));
  }
  return result;
}

}  // namespace tenet
