// SPDX-License-Identifier: MIT
#include "tree_method.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <vector>

#include "coupled_trees.hpp"
#include "schedule_assembly.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/sim/runtime_routes.hpp"
#include "tree_schedule.hpp"

namespace tenet::synth {
namespace {

/// Chunks per member tried (a unit's pieces are these over the units per member): the pipeline's
/// fill costs (depth - 1) pieces' time and each piece an alpha; the replay picks. 256 wins where
/// units are many (mi250-2x16-ib reduce-scatter of 1 GiB, 5 units: 3493.4 -> 3397.0 us at 51
/// pieces a unit; 102 replayed slower) and on small switches (ring-fc-switch-2x4x2 all-reduce of
/// 1 GiB 3823.6 -> 3771.6 us).
constexpr std::uint32_t kChunkCounts[] = {16, 32, 64, 128, 256};
/// Tried too when the result is scored as a file (SynthOptions::FileModel::estimate): MSCCL XML holds about
/// 4,000 steps per rank, which 64 ranks pass at 16 chunks per member.
constexpr std::uint32_t kFewerChunkCounts[] = {4, 8};
/// The two fewest chunk counts are tried past the caller's transfer budget, up to this many
/// transfers: at 128 members an all-reduce of 16 pieces is 520,000 transfers, and without it
/// the trees never ran there (ring-fc-switch-2x4x16 all-reduce of 1 GiB: 1.237 -> 1.054 of its
/// bound with 32 pieces, 0.6 -> 4.7 s of synthesis).
constexpr double kFewestPiecesTransfers = 1.1e6;
constexpr std::size_t kFewestPieceCounts = 2;

/// Pieces whose pipeline step is more than this share alpha are not tried, but for each packing's
/// fewest pieces: measured on eight switched networks at 16 and 64 MiB, every such trial lost to
/// fewer, larger pieces (winners paid 20% to 50%), and they are the largest schedules to replay
/// (fat-tree-8x4 all-reduce of 16 MiB: 128 pieces, 0.61 alpha, 810 us against 710, 10.7 s of its
/// 23 s synthesis).
constexpr double kMaxPieceAlphaShare = 0.55;

/// Trials planned more than this over the fastest plan of fewer pieces are not replayed (below).
constexpr double kPlannedPastFastest = 1.05;

/// Without a file, the trees matter only where they beat the time to beat (synthesize_with_trees'
/// `to_beat_us`). A trial's variants (below) move the same bytes over the same links, so one whose
/// busiest link alone needs longer is skipped with them (SimOptions::skip_slower_than_us); a
/// variant's replay stops once it provably ends later (SimOptions::stop_once_slower_than_us). A
/// trial's own replay stops only past this factor of it, as its variants can be that much faster
/// (measured over 17 networks x 3 collectives x 1 MiB to 1 GiB: two pieces in flight up to 1.39x,
/// a100-2x8-ib all-gather of 16 MiB 108.9 -> 78.4 us; 1.36x on its reduce-scatter).
constexpr double kTrialReach = 1.5;

/// Reducing trials also replayed with their senders keeping pace (tree_schedule): the best few,
/// all-reduces only up to this many transfers. Their replays cost the most and pacing gains them
/// little at that size: two-level-switch-8x4 all-reduce of 1 GiB (127,000 transfers) 8247.9 ->
/// 8152.5 us for 0.7 -> 2.4 s of synthesis; mi250-2x16-ib 6749 -> 6660 us, 3.3 -> 4.0 s.
/// The best of them is also paced by its mirrored replay (tree_schedule's MirrorTimes): that
/// won mi250-2x16-ib reduce-scatter of 1 GiB (3397.0 -> 3343.9 us) and 256 MiB and a few
/// all-reduces (two-level-switch-8x4 16 MiB 151.8 -> 149.1 us, dgx1-8 1 MiB 22.1 -> 21.1 us),
/// and lost elsewhere (a100-4x8-ib reduce-scatter of 1 GiB:
/// 4475 step-paced, 4721 mirrored). Its two replays cost 92.8 instead of 81.5 s of synthesis
/// over the switched reduce-scatters and all-reduces of 16 MiB to 1 GiB; pacing only the best
/// trial by steps to pay for it lost ring-fc-switch-2x4x2 all-reduce of 16 MiB 70.4 -> 73.5 us.
constexpr std::size_t kPacedTrials = 2;
/// With the file to be written (synthesize_with_trees' written_file_time), the trials estimated
/// within this factor of the best, at most this many, are written and timed. The deepest pipeline
/// is estimated best and its file serializes where the runtime's lanes run out: all-reduce of
/// 1 GiB on h100-4x8-rail at 32 pieces estimated 4179.7 us, its file ran 4857.0 (4220.3 written
/// with every channel count searched, MscclWriteOptions), at 16 pieces 4237.9 and 4237.9;
/// a100-4x8-ib all-reduce of 64 MiB: 637.1 and 715.7 at 32, 637.4 and 637.4 at 16.
constexpr std::size_t kWrittenTrials = 2;
constexpr double kWrittenEstimateDoubt = 1.2;
constexpr std::size_t kPacedAllReduceTransfers = 1 << 16;

/// reductions_beside: the broadcasts' share of their rate searched from here up, in this many
/// bisection steps, and also tried this far below the balance found.
constexpr double kLowestBroadcastShare = 0.3;
constexpr int kBalanceBisections = 10;
constexpr double kBelowBalance = 0.92;

/// Units per member of the all-reduce trees used both ways (coupled_trees.hpp). One tree per
/// member won or came within 3% on every mesh measured (mesh-3x3 to mesh-10x10 and
/// hypercube3d-4x4x4, 16 MiB and 1 GiB); two per member gained up to 3% (mesh-6x6 all-reduce of
/// 16 MiB: 249.6 -> 241.4 us) for half as much synthesis time again.
constexpr std::uint32_t kCoupledUnits = 1;
/// With a file to write, trees used both ways are also packed fewer, each carrying this many
/// members' data as one chain.
constexpr std::uint32_t kChainedUnits[] = {2, 4};

/// The trees of one choice of units, for each direction the collective needs.
struct Packed {
  TreeUnits units;
  std::optional<TreePacking> gather;
  std::optional<TreePacking> reduce;
  /// Reductions packed beside the broadcasts (reductions_beside), or trees used both ways
  /// (coupled_trees.hpp). Their trials get the budget of the fewest pieces at every count: their
  /// pipelines gain from depth (mesh-8x8 all-reduce of 1 GiB: 18.60 ms at 32 pieces, 16.09 at
  /// 128; synthesis 0.9 -> 2.5 s).
  bool beside = false;
};

/// What is left of each link when `gather`'s trees run at `fraction` of their units' bandwidth.
Topology left_by(const Topology& topology, const TreePacking& gather, double fraction) {
  std::vector<double> used(topology.link_count(), 0.0);
  for (const PackedTree& tree : gather.trees) {
    for (const TreeEdge& edge : tree.edges) {
      for (LinkId link : gather.routes[edge.route]) used[link] += tree.units * gather.units.unit_GBps * fraction;
    }
  }
  Topology left(topology.npu_count(), topology.switch_names());
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    Link link = topology.link(id);
    // A link the broadcasts fill keeps a sliver, so that link ids stay those of `topology`.
    link.bandwidth_GBps = std::max(link.bandwidth_GBps - used[id], link.bandwidth_GBps * 1e-9);
    left.add_link(link);
  }
  return left;
}

/// `topology` where switches reach members only through one switch: a link between two switches
/// keeps a sliver of its bandwidth (no unit fits it), so that link ids stay those of `topology`.
/// Trees packed there route every edge member -> switch -> member, the route the network itself
/// takes between two members on one switch; through a fabric of switches the packing picks routes
/// by max-flow that no runtime takes (h100-4x8-rail: up a rail switch, across both spines and back
/// down), and MSCCL files and MSCCL++ plans name no routes (runtime_routes.hpp). Empty where no
/// link joins two switches.
std::optional<Topology> one_switch_routes(const Topology& topology) {
  Topology leaf(topology.npu_count(), topology.switch_names());
  bool cut = false;
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    Link link = topology.link(id);
    if (topology.is_switch(link.src) && topology.is_switch(link.dst)) {
      link.bandwidth_GBps *= 1e-9;
      cut = true;
    }
    leaf.add_link(link);
  }
  if (!cut) return std::nullopt;
  return leaf;
}

/// All-reduce trees whose reductions run beside their broadcasts: on networks whose NPUs take in
/// unequal bandwidth (a mesh's corners have two links, its inner NPUs four), the broadcasts fill
/// the corners' links in and the reductions their links out, and the inner links have room for
/// both. Packing each on the whole network makes both fill the same inner links, and the
/// all-reduce takes their sum. Instead the broadcast trees run at a fraction f of their rate and
/// the reduction trees are packed on what they leave, at the largest f where the reductions keep
/// pace (found by bisection), and a little below it, where the replays ran faster (mesh-8x8,
/// 1 GiB: 15.9 ms at 0.65, 16.1 at 0.6, against a balance near 0.7).
std::vector<Packed> reductions_beside(const Topology& topology, const std::vector<NodeId>& members,
                                      const Packed& packed, double optimal) {
  const TreePacking& gather = *packed.gather;
  const std::uint32_t k = gather.units.per_member;
  auto reductions_at = [&](double fraction) {
    return units_of_count(transpose(left_by(topology, gather, fraction)), members, k, optimal);
  };
  // The reductions' units at the lowest share that keeps pace so far.
  double low = kLowestBroadcastShare;
  double high = 1.0;
  std::optional<TreeUnits> at_low = reductions_at(low);
  if (!at_low || at_low->unit_GBps < low * gather.units.unit_GBps) return {};
  for (int step = 0; step < kBalanceBisections; ++step) {
    const double middle = 0.5 * (low + high);
    std::optional<TreeUnits> units = reductions_at(middle);
    if (units && units->unit_GBps >= middle * gather.units.unit_GBps) {
      low = middle;
      at_low = units;
    } else {
      high = middle;
    }
  }
  std::vector<Packed> found;
  for (double fraction : {low, kBelowBalance * low}) {
    const std::optional<TreeUnits> units = fraction == low ? at_low : reductions_at(fraction);
    if (!units) continue;
    std::optional<TreePacking> reduce = pack_trees(transpose(left_by(topology, gather, fraction)), members, *units);
    if (reduce) found.push_back({packed.units, gather, std::move(reduce), true});
  }
  return found;
}

/// The most transfers any node sends and receives per piece (in a file, each is a step or ops at
/// both ends): every tree edge carries each of its tree's units once a piece.
std::uint64_t most_transfers_per_piece(const Packed& choice, std::size_t nodes) {
  std::vector<std::uint64_t> steps(nodes, 0);
  for (const std::optional<TreePacking>* part : {&choice.gather, &choice.reduce}) {
    if (!*part) continue;
    for (const PackedTree& tree : (*part)->trees) {
      for (const TreeEdge& edge : tree.edges) {
        steps[edge.parent] += tree.units;
        steps[edge.child] += tree.units;
      }
    }
  }
  return steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end());
}

/// Indices 0..count-1, the costliest first (ties by index): replays take seconds each, and on
/// few cores the costliest started last would end alone (tree-4x8 all-reduce of 16 MiB: trials
/// of 0.4, 1.1 and 2.4 s end at 2.8 s in index order, at 2.4 s this way).
template <typename Cost>
std::vector<std::size_t> costliest_first(std::size_t count, const Cost& cost) {
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> costs(count);
  for (std::size_t i = 0; i < count; ++i) costs[i] = cost(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  return order;
}

}  // namespace

std::optional<TreeMethodResult> synthesize_with_trees(
    const Topology& topology, CollectiveKind kind, std::uint64_t size_bytes, const std::vector<NodeId>& members,
    double max_transfers, const std::function<double(const Schedule&)>& file_time, bool reductions_alongside,
    const std::function<double(const Schedule&)>& written_file_time, std::uint64_t max_replay_work,
    std::uint64_t file_transfers_per_rank, double to_beat_us) {
  const bool gathers = kind != CollectiveKind::kReduceScatter;
  const bool reduces = kind != CollectiveKind::kAllGather;
  const Topology transposed = transpose(topology);
  const double optimal = optimal_rate_GBps(topology, kind, members);
  // Every choice of units on `on` (its transpose given), packed for each direction needed.
  auto pack_on = [&](const Topology& on, const Topology& on_transposed) {
    const std::vector<TreeUnits> offered =
        gathers ? choose_tree_units(on, reduces ? &on_transposed : nullptr, members, optimal)
                : choose_tree_units(on_transposed, nullptr, members, optimal);
    std::vector<Packed> packings(offered.size());
    parallel_for(std::size_t{0}, offered.size(), [&](std::size_t i) {
      packings[i].units = offered[i];
      if (gathers) packings[i].gather = pack_trees(on, members, offered[i]);
      if (reduces) packings[i].reduce = pack_trees(on_transposed, members, offered[i]);
    });
    return packings;
  };
  auto packs_every_direction = [&](const std::vector<Packed>& packings) {
    return std::any_of(packings.begin(), packings.end(),
                       [&](const Packed& p) { return (!gathers || p.gather) && (!reduces || p.reduce); });
  };
  // Trees packed for each direction: every choice of units, on the network and on the routes a
  // runtime takes where the packing could leave them, and for an all-reduce also with the
  // reductions beside the broadcasts. Where the trees pack on the runtime's routes
  // (one_switch_routes), the packing on the whole fabric is not tried: on rail-optimized servers
  // its trees cross the spines, which no file takes, and they lost every time (h100-4x8-rail, 3
  // collectives x 64 MiB to 1 GiB: 9 of 9; 16 such servers, 128 GPUs: all-gather of 256 MiB
  // 726.6 us on the fabric, 693.7 on the runtime's routes), while packing there took 8.8 of 17.4
  // s of synthesis on the 128 GPUs. Where those routes do not join every member (trees of
  // switches, whose leaves meet only through switches above), the fabric's packing runs as before.
  auto pack_each_direction = [&] {
    std::vector<Packed> packed;
    const std::optional<Topology> leaf = one_switch_routes(topology);
    std::vector<Packed> on_leaf;
    if (leaf) on_leaf = pack_on(*leaf, transpose(*leaf));
    if (!packs_every_direction(on_leaf)) packed = pack_on(topology, transposed);
    std::move(on_leaf.begin(), on_leaf.end(), std::back_inserter(packed));
    if (kind == CollectiveKind::kAllReduce && reductions_alongside) {
      std::vector<std::vector<Packed>> beside(packed.size());
      parallel_for(std::size_t{0}, packed.size(), [&](std::size_t i) {
        if (packed[i].gather) beside[i] = reductions_beside(topology, members, packed[i], optimal);
      });
      for (std::vector<Packed>& more : beside) std::move(more.begin(), more.end(), std::back_inserter(packed));
    }
    return packed;
  };
  // Where an all-reduce's trees used both ways pack (coupled_trees.hpp), they take the place of
  // those: over meshes of 9 to 128 NPUs, hypercube3d-4x4x4, random networks and two mixed-speed
  // ones, 16 MiB to 1 GiB, they gave the same all-reduce in 43 of 46 cases and at most 0.2% slower
  // in three (a random mixed-speed network of 48 NPUs at 64 MiB and 1 GiB, mesh-4x4-failed-7-9 at
  // 1 GiB, where the reductions beside the broadcasts were that much faster), in half the
  // synthesis time (mesh-8x8 at 1 GiB 2.55 -> 1.21 s, hypercube3d-4x4x4 2.81 -> 1.44 s).
  std::optional<CoupledTrees> coupled;
  if (kind == CollectiveKind::kAllReduce && reductions_alongside)
    coupled = pack_coupled_trees(topology, members, kCoupledUnits, optimal);
  std::vector<Packed> packed;
  if (coupled) {
    packed.push_back({coupled->gather.units, std::move(coupled->gather), std::move(coupled->reduce), true});
    // A file holds a few thousand steps a rank (about 4 x chunks on a mesh's trees), so its
    // pipelines are short; fewer trees, each carrying several members' data as one chain, make
    // the same chunks deeper pipelines (tree_packing.hpp's `chained`).
    if (file_time) {
      for (std::uint32_t per_tree : kChainedUnits) {
        if (members.size() % per_tree != 0 || members.size() / per_tree < 2) continue;
        const auto tree_count = static_cast<std::uint32_t>(members.size() / per_tree);
        std::optional<CoupledTrees> few = pack_coupled_trees(topology, members, kCoupledUnits, optimal, tree_count);
        if (few) packed.push_back({few->gather.units, std::move(few->gather), std::move(few->reduce), true});
      }
    }
  } else {
    packed = pack_each_direction();
  }

  // Every packing that worked, at every chunk count within the transfer budget.
  struct Trial {
    const Packed* packed;
    std::uint32_t pieces;
  };
  std::vector<Trial> trials;
  const double phases = gathers && reduces ? 2.0 : 1.0;
  const double members_count = static_cast<double>(members.size());
  for (const Packed& choice : packed) {
    if ((gathers && !choice.gather) || (reduces && !choice.reduce)) continue;
    const std::uint32_t units = choice.units.per_member;
    std::uint32_t previous = 0;
    std::size_t budgeted = 0;  // chunk counts of this packing within a budget so far
    std::vector<std::uint32_t> counts(std::begin(kChunkCounts), std::end(kChunkCounts));
    // With a file to write: not past the transfers a rank of it holds, and where that is short of
    // the counts above, the deepest pipeline that fits too (mesh-8x8 all-reduce of 1 GiB: 13
    // pieces). Where the file holds deeper ones their files run slower than estimated (threadblocks
    // serialize them), and the written finalists below decide among the counts above.
    std::uint32_t most_pieces = std::numeric_limits<std::uint32_t>::max();
    if (file_time) {
      counts.insert(counts.begin(), std::begin(kFewerChunkCounts), std::end(kFewerChunkCounts));
      const std::uint64_t per_piece = most_transfers_per_piece(choice, topology.node_count());
      if (file_transfers_per_rank != 0 && per_piece != 0) {
        most_pieces =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(file_transfers_per_rank / per_piece, most_pieces));
        if (most_pieces == 0) continue;
        const std::uint32_t most_chunks = most_pieces * units;
        if (most_chunks < kChunkCounts[0] && std::find(counts.begin(), counts.end(), most_chunks) == counts.end()) {
          counts.push_back(most_chunks);
          std::sort(counts.begin(), counts.end());
        }
      }
    }
    for (std::uint32_t chunks : counts) {
      const std::uint32_t pieces = std::max<std::uint32_t>(1, chunks / units);
      if (pieces > most_pieces) break;
      const double budget = budgeted < kFewestPieceCounts || choice.beside
                                ? std::max(max_transfers, kFewestPiecesTransfers)
                                : max_transfers;
      if (pieces == previous || phases * units * pieces * members_count * (members_count - 1.0) > budget) continue;
      ++budgeted;
      const double piece_bytes = static_cast<double>(size_bytes) / members_count / (units * pieces);
      const TreeStep step = tree_step(topology, choice.gather ? &*choice.gather : nullptr,
                                      choice.reduce ? &*choice.reduce : nullptr, piece_bytes);
      if (previous != 0 && step.alpha_us > kMaxPieceAlphaShare * step.time_us) continue;
      trials.push_back({&choice, pieces});
      previous = pieces;
    }
  }
  if (trials.empty()) return std::nullopt;
  SimOptions replay_options;
  replay_options.record_times = true;
  auto build_trial = [&](const Trial& trial, const TreePacing& pacing) {
    const Packed& choice = *trial.packed;
    return tree_schedule(topology, kind, size_bytes, members, choice.gather ? &*choice.gather : nullptr,
                         choice.reduce ? &*choice.reduce : nullptr, trial.pieces, pacing);
  };
  auto mirror_of = [&](const Trial& trial) {
    const Schedule forward = tree_schedule(transposed, CollectiveKind::kAllGather, size_bytes, members,
                                           &*trial.packed->reduce, nullptr, trial.pieces);
    SimResult replay = simulate(transposed, forward, replay_options);
    return MirrorTimes{std::move(replay.start_us), std::move(replay.end_us), replay.time_us};
  };
  // Only a schedule faster than this can matter. With a file to write, schedules are scored by
  // their files, which can run faster than their replays: none is cut short then.
  const bool by_replay = !file_time && !written_file_time;
  const double to_beat = by_replay ? to_beat_us : std::numeric_limits<double>::infinity();
  // `rerouted`: the caller found transfers off the runtime's routes and wants them on those.
  // `skip_slower_than_us`: a replay that provably ends later is skipped (scored by that floor);
  // `stop_once_slower_than_us`: one that provably ends later stops when that shows.
  auto replay_trial = [&](const Trial& trial, Schedule schedule, bool rerouted = false,
                          double skip_slower_than_us = std::numeric_limits<double>::infinity(),
                          double stop_once_slower_than_us = std::numeric_limits<double>::infinity()) {
    const Packed& choice = *trial.packed;
    TreeMethodResult result;
    result.schedule = std::move(schedule);
    // A file names no routes: written to one, the trees run on the runtime's (runtime_routes.hpp).
    if (rerouted || (file_time && transfers_off_runtime_routes(result.schedule, topology) > 0)) {
      result.schedule.forget_links();
      result.rerouted = true;
    }
    SimOptions options = replay_options;
    options.skip_slower_than_us = skip_slower_than_us;
    options.long_from_route_hops = 0.0;
    options.max_refill_work = max_replay_work;
    options.stop_once_slower_than_us = stop_once_slower_than_us;
    result.replay = simulate(topology, result.schedule, options);
    result.score_us = result.replay.time_us;
    // Skipped as slower, or too costly to replay: not a contender.
    if (!result.replay.simulated) result.score_us = std::numeric_limits<double>::infinity();
    if (file_time && result.replay.simulated) {
      result.schedule.retime(result.replay.start_us, result.replay.end_us);
      result.score_us = file_time(result.schedule);
      if (!std::isfinite(result.score_us)) result.schedule = Schedule();
    }
    result.units = choice.units;
    result.pieces = trial.pieces;
    result.trees =
        (choice.gather ? choice.gather->trees.size() : 0) + (choice.reduce ? choice.reduce->trees.size() : 0);
    return result;
  };
  std::vector<Schedule> built(trials.size());
  parallel_for(std::size_t{0}, trials.size(), [&](std::size_t i) { built[i] = build_trial(trials[i], {}); });
  // A packing's trials come in increasing pieces. On switches, where a replay shares every port
  // and costs seconds, those planned well past the fastest plan of fewer pieces replayed slower
  // too on every network measured, so they are not replayed (tree-4x8 all-reduce of 16 MiB:
  // planned 3525.8 us at 64 pieces and 3865.2 at 128, replayed 2740.3 and 2782.4 in 5.9 and
  // 10.6 s; fat-tree-8x4 all-gather of 16 MiB: 580.5 at 32, 662.8 at 64, replayed 371.1 and
  // 418.0). Just past it they can still replay faster (tree-2x2x4 all-reduce of 16 MiB: planned
  // 3489.8 at 32, 3618.2 at 64, replayed 2688.0 and 2682.8), and point-to-point networks replay
  // them all: there the plan says less (dragonfly-4x5 all-reduce of 256 MiB: planned 613.3 at
  // 32 pieces and 677.9 at 128, replayed 546.2 and 541.8, the fastest).
  std::vector<char> replayed(trials.size(), 1);
  const double past_fastest =
      topology.switch_count() > 0 ? kPlannedPastFastest : std::numeric_limits<double>::infinity();
  double fewest_planned = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (i == 0 || trials[i].packed != trials[i - 1].packed) fewest_planned = std::numeric_limits<double>::infinity();
    const double planned = built[i].planned_time_us();
    replayed[i] = planned <= past_fastest * fewest_planned;
    fewest_planned = std::min(fewest_planned, planned);
  }
  std::vector<TreeMethodResult> results(trials.size());
  const std::vector<std::size_t> trial_order = costliest_first(
      trials.size(), [&](std::size_t i) { return replayed[i] ? static_cast<double>(built[i].size()) : 0.0; });
  parallel_for(std::size_t{0}, trials.size(), [&](std::size_t k) {
    const std::size_t i = trial_order[k];
    if (replayed[i]) {
      results[i] = replay_trial(trials[i], std::move(built[i]), false, to_beat, kTrialReach * to_beat);
    } else {
      results[i].score_us = std::numeric_limits<double>::infinity();
    }
    built[i] = Schedule();
  });
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (std::isfinite(results[i].score_us)) ranked.push_back(i);
  }
  if (ranked.empty()) return std::nullopt;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](std::size_t a, std::size_t b) { return results[a].score_us < results[b].score_us; });
  // Variants of the best trials, each replayed and kept where faster. Reductions paced by their
  // senders (tree_schedule) win some networks and lose others by a few percent
  // (hammingmesh-hx2-4x4 reduce-scatter of 1 GiB: 5650 us free, 5724 paced), so the best few
  // free trials are replayed paced too; the best of them also paced by its mirrored replay
  // (tree_schedule's MirrorTimes), and with two pieces in flight on each edge, free and paced.
  struct Variant {
    std::size_t trial;
    TreePacing pacing;
    bool mirrored = false;
  };
  std::vector<Variant> variants;
  std::vector<std::size_t> chosen;
  for (std::size_t k = 0; k < std::min(ranked.size(), kPacedTrials); ++k) {
    if (kind != CollectiveKind::kAllReduce || results[ranked[k]].schedule.size() <= kPacedAllReduceTransfers)
      chosen.push_back(ranked[k]);
  }
  for (std::size_t i : chosen) {
    if (reduces) variants.push_back({i, {.senders_keep_pace = true}});
  }
  if (!chosen.empty() && reduces) variants.push_back({chosen.front(), {.senders_keep_pace = true}, true});
  if (!chosen.empty() && chosen.front() == ranked.front()) {
    variants.push_back({chosen.front(), {.in_flight = 2}});
    if (reduces) variants.push_back({chosen.front(), {.senders_keep_pace = true, .in_flight = 2}});
  }
  std::vector<TreeMethodResult> varied(variants.size());
  // A variant matters only where it beats the best trial too.
  const double variant_to_beat = by_replay ? std::min(to_beat, results[ranked.front()].score_us) : to_beat;
  // A mirrored variant replays twice (its mirror, then itself).
  const std::vector<std::size_t> variant_order = costliest_first(variants.size(), [&](std::size_t k) {
    return static_cast<double>(results[variants[k].trial].schedule.size()) * (variants[k].mirrored ? 2.0 : 1.0);
  });
  parallel_for(std::size_t{0}, variants.size(), [&](std::size_t j) {
    const std::size_t k = variant_order[j];
    const Trial& trial = trials[variants[k].trial];
    if (!variants[k].mirrored) {
      varied[k] = replay_trial(trial, build_trial(trial, variants[k].pacing), false, variant_to_beat, variant_to_beat);
      return;
    }
    const MirrorTimes mirror = mirror_of(trial);
    TreePacing pacing = variants[k].pacing;
    pacing.mirror = &mirror;
    varied[k] = replay_trial(trial, build_trial(trial, pacing), false, variant_to_beat, variant_to_beat);
  });
  for (std::size_t k = 0; k < variants.size(); ++k) {
    const std::size_t trial = variants[k].trial;
    if (varied[k].score_us < results[trial].score_us) results[trial] = std::move(varied[k]);
  }
  std::size_t best = ranked.front();
  for (std::size_t i : ranked) {
    if (results[i].score_us < results[best].score_us) best = i;
  }
  // The estimate misses the steps a deep pipeline keeps waiting in the runtime's threadblocks, so
  // with a file to write the best few by estimate are written and timed (side by side: a file
  // takes as long as several replays), and the fastest file wins.
  if (written_file_time) {
    std::vector<std::size_t> finalists = ranked;
    std::stable_sort(finalists.begin(), finalists.end(),
                     [&](std::size_t a, std::size_t b) { return results[a].score_us < results[b].score_us; });
    const double doubt = kWrittenEstimateDoubt * results[finalists.front()].score_us;
    std::size_t kept = 1;
    while (kept < std::min(finalists.size(), kWrittenTrials) && results[finalists[kept]].score_us <= doubt) ++kept;
    finalists.resize(kept);
    parallel_for(std::size_t{0}, finalists.size(), [&](std::size_t k) {
      TreeMethodResult& finalist = results[finalists[k]];
      finalist.score_us = written_file_time(finalist.schedule);
      finalist.written = true;
    });
    best = finalists.front();
    for (std::size_t i : finalists) {
      if (results[i].score_us < results[best].score_us) best = i;
    }
    if (!std::isfinite(results[best].score_us)) return std::nullopt;
  }
  // And the winner on the routes the network takes by itself, where its trees were packed on
  // others: routes that spread a tree's edges over more links can crowd links that other trees
  // share (boxes of GPU pairs behind shared PCIe switches: 479.2 us on the packing's routes, 443.6
  // on the runtime's). With a file to write every trial runs on those already. Where some link
  // of the runtime's routes alone needs longer than the winner the replay is skipped
  // (hammingmesh-hx2-4x4 at 256 MiB: 1-13% longer).
  if (!file_time && transfers_off_runtime_routes(results[best].schedule, topology) > 0) {
    const double to_improve = std::min(results[best].score_us, to_beat);
    TreeMethodResult rerouted = replay_trial(trials[best], results[best].schedule, true, to_improve, to_improve);
    if (rerouted.score_us < results[best].score_us) results[best] = std::move(rerouted);
  }
  TreeMethodResult& winner = results[best];
  if (!file_time) winner.schedule.retime(winner.replay.start_us, winner.replay.end_us);  // else done above
  winner.replay.start_us = {};
  winner.replay.end_us = {};
  winner.tried = static_cast<std::uint32_t>(std::count(replayed.begin(), replayed.end(), 1));
  return std::move(winner);
}

}  // namespace tenet::synth
