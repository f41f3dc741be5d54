// The synthesis driver: run the all-gather engine for every candidate (chunk count x matching
// variant x unwinding degree x seed) in parallel, score each by its time on the real network, keep
// the fastest, and assemble the requested collective from it.

#include "tenet/synth/synthesizer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <mutex>
#include <optional>

#include <tbb/parallel_for.h>

#include "all_gather_engine.hpp"
#include "schedule_assembly.hpp"
#include "switch_native.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/random.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet {
namespace {

/// Degrees tried when the user fixes none: from a ring to moderately dense; beyond 8 a switch's
/// port is cut into slivers whose alphas dominate.
constexpr std::uint32_t kDefaultDegrees[] = {1, 2, 3, 4, 6, 8};

/// More transfers than this would not fit in this machine's memory as a Schedule.
constexpr double kMaxTransfers = 4e8;

/// Chunk counts tried with --chunks-per-npu auto, as long as a schedule stays under
/// kAutoChunkTransfers transfers (one chunk is always tried).
constexpr std::uint32_t kAutoChunkCounts[] = {1, 2, 4, 8};
constexpr double kAutoChunkTransfers = 4e6;

/// Unwound candidates are each routed through the real switches to be ranked while they have at
/// most this many transfers; larger ones are ranked by their plans and only the winner is routed
/// (routed flows share switch ports: simulating millions of them takes minutes).
constexpr std::size_t kRankRoutedMax = 250000;

struct Candidate {
  std::uint32_t chunks = 1;
  SenderOrder order = SenderOrder::kAny;  ///< switch-native variant (run_switch_all_gather)
  std::uint32_t degree = 0;
  std::uint64_t seed = 0;
  SynthPolicy policy = SynthPolicy::kTenet;
  const Topology* topology = nullptr;
  const Topology* transposed = nullptr;
  bool switch_native = false;  ///< planned on the input's switches (routes, port order)
};

struct Outcome {
  std::optional<synth::AllGatherTrace> reduce_scatter;  ///< on the transpose
  std::optional<synth::AllGatherTrace> all_gather;
  synth::Tick total = 0;
  bool abandoned = false;  ///< a phase stopped early: it could not have won
};

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
  if (collective.chunks_per_npu == 0 && !options.auto_chunks) throw InputError("", "--chunks-per-npu", "must be at least 1");
  const double phases = collective.kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  auto transfers_with = [&](double chunks_per_npu) {
    return phases * static_cast<double>(members.size()) * chunks_per_npu * (static_cast<double>(topology.npu_count()) - 1.0);
  };
  std::vector<std::uint32_t> chunk_counts;
  if (options.auto_chunks) {
    for (std::uint32_t count : kAutoChunkCounts) {
      if (count == 1 || transfers_with(count) <= kAutoChunkTransfers) chunk_counts.push_back(count);
    }
  } else {
    chunk_counts.push_back(collective.chunks_per_npu);
  }
  const double transfers = transfers_with(chunk_counts.back());
  if (transfers > kMaxTransfers) {
    throw InputError("", "--chunks-per-npu",
                     "the schedule would need about " + std::to_string(static_cast<long long>(transfers)) +
                         " transfers, more than tenet can hold (" + std::to_string(static_cast<long long>(kMaxTransfers)) +
                         ")" + (chunk_counts.back() > 1 ? "; use fewer chunks per NPU" : ""));
  }
  if (static_cast<double>(members.size()) * chunk_counts.back() > 4e9) {
    throw InputError("", "--chunks-per-npu", "too many chunks (at most 4e9 in all)");
  }
  // Switch-native planning: the engine works on the topology itself. The paper's rule exists only
  // for point-to-point links, so --policy tacos means the paper's method, unwinding included.
  const bool switched = topology.switch_count() > 0;
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
  if (unwinding) {
    std::vector<std::uint32_t> wanted(std::begin(kDefaultDegrees), std::end(kDefaultDegrees));
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
  }
  std::vector<Topology> transposed;
  if (collective.kind != CollectiveKind::kAllGather) {
    for (const Topology& candidate : planned_on) transposed.push_back(synth::transpose(candidate));
  }

  std::vector<Candidate> candidates;
  auto add = [&](std::uint32_t chunks, SenderOrder order, std::size_t d, std::uint64_t seed, SynthPolicy policy) {
    candidates.push_back({chunks, order, degrees[d], seed, policy, &planned_on[d],
                          transposed.empty() ? nullptr : &transposed[d], switched && degrees[d] == 0});
  };
  for (std::uint32_t restart = 0; restart < std::max<std::uint32_t>(1, options.restarts); ++restart) {
    for (std::size_t d = 0; d < degrees.size(); ++d) {
      const bool switch_native = switched && degrees[d] == 0;
      for (std::uint32_t chunks : chunk_counts) {
        // Unwinding already slices every port d ways: beside switch-native plans it is tried at
        // the smallest chunk count only.
        if (native && !switch_native && chunks != chunk_counts.front()) continue;
        if (!switch_native) {
          add(chunks, SenderOrder::kAny, d, options.seed + restart, options.policy);
          continue;
        }
        // Every sender order on networks small enough to score many candidates; on larger ones
        // the two that are cheapest to run (on the 1,024-NPU ring-fc-switch all four give the same
        // time, and the unordered one takes three times as long).
        for (SenderOrder order : {SenderOrder::kNearFirst, SenderOrder::kRingFirst, SenderOrder::kAny, SenderOrder::kFarFirst}) {
          const bool cheap = order == SenderOrder::kNearFirst || order == SenderOrder::kRingFirst;
          if (cheap || rank_routed) add(chunks, order, d, options.seed + restart, options.policy);
        }
      }
    }
  }
  // tenet's rule weighs each link's choice against faster paths, which serves sparse unwindings
  // well; on dense ones the paper's rule, which serves the cheapest link first, keeps more of
  // them busy (the 1,024-NPU ring-fc-switch: 760 us against 895 us at degree 8), and on small
  // switch groups it can win outright. So when unwinding, the default also runs the paper's
  // rule once, on the densest unwinding tried, and keeps whichever is faster.
  if (options.policy == SynthPolicy::kTenet && unwinding) {
    add(chunk_counts.front(), SenderOrder::kAny, degrees.size() - 1, options.seed, SynthPolicy::kTacos);
  }
  // Branch and bound stops a run that can no longer win on its planned time: only sound when
  // every candidate is ranked by its planned time (point-to-point, or unwinding too large to route).
  const bool branch_and_bound = !native && !rank_routed;

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
  // never be the winner (its total would exceed another's), so the result does not.
  std::atomic<synth::Tick> best_total{std::numeric_limits<synth::Tick>::max()};
  std::vector<std::atomic<std::size_t>> phases_left(candidates.size());
  for (std::atomic<std::size_t>& left : phases_left) left.store(phases_per_candidate);
  tbb::parallel_for(std::size_t{0}, tasks, [&](std::size_t task) {
    const std::function<void(double)> progress = options.progress ? std::function<void(double)>(progress_of(task))
                                                                  : std::function<void(double)>();
    const std::size_t index = task / phases_per_candidate;
    const Candidate& candidate = candidates[index];
    Outcome& outcome = outcomes[index];
    const bool reduce = reduce_phase && task % phases_per_candidate == 0;
    const double chunk_bytes = static_cast<double>(collective.size_bytes) / (static_cast<double>(members.size()) * candidate.chunks);
    const synth::AllGatherProblem problem{reduce ? candidate.transposed : candidate.topology, members, candidate.chunks,
                                          chunk_bytes, options.log_block_bits};
    const std::uint64_t seed = mix_seed(candidate.seed, reduce ? 1 : 2);
    // A switch-native candidate is ranked by its replay, which can beat its plan: every one must
    // finish, or which ones stopped (a matter of timing) could change the winner.
    synth::AllGatherTrace trace =
        candidate.switch_native ? synth::run_switch_all_gather(problem, seed, candidate.order, progress, nullptr)
               : synth::run_all_gather(problem, candidate.policy, seed, progress, branch_and_bound ? &best_total : nullptr);
    done[task].store(1.0, std::memory_order_relaxed);
    (reduce ? outcome.reduce_scatter : outcome.all_gather) = std::move(trace);
    if (phases_left[index].fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // The last phase of this candidate to finish sees the other's trace (acq_rel above).
    for (const std::optional<synth::AllGatherTrace>* phase : {&outcome.reduce_scatter, &outcome.all_gather}) {
      if (!*phase) continue;
      outcome.abandoned = outcome.abandoned || (*phase)->abandoned;
      outcome.total += (*phase)->finish;
    }
    if (outcome.abandoned) return;
    synth::Tick best = best_total.load(std::memory_order_relaxed);
    while (outcome.total < best && !best_total.compare_exchange_weak(best, outcome.total, std::memory_order_relaxed)) {
    }
  });
  // Turns a candidate's traces into its schedule (consuming them).
  auto assemble = [&](std::size_t index) {
    const Candidate& candidate = candidates[index];
    Outcome& outcome = outcomes[index];
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
  };

  // Every candidate that can be scored on the real network is: a switch-native plan made
  // executable as planned (port order) and replayed through the switches; an unwound one with its
  // transfers routed through them. The fastest replay wins (ties: the earlier candidate).
  SynthResult result;
  std::size_t best = outcomes.size();
  SimOptions replay_options;
  replay_options.record_times = true;
  SimResult replay;
  if (native || (switched && rank_routed)) {
    std::vector<SimResult> replays(outcomes.size());
    std::vector<std::optional<Schedule>> schedules(outcomes.size());
    tbb::parallel_for(std::size_t{0}, outcomes.size(), [&](std::size_t i) {
      Schedule schedule = assemble(i);
      if (candidates[i].switch_native) {
        schedule = synth::with_port_order(schedule, topology);
      } else {
        schedule.forget_links();
      }
      replays[i] = simulate(topology, schedule, replay_options);
      schedules[i] = std::move(schedule);
    });
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      if (best == outcomes.size() || replays[i].time_us < replays[best].time_us) best = i;
    }
    result.schedule = std::move(*schedules[best]);
    replay = std::move(replays[best]);
  } else {
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      if (outcomes[i].abandoned) continue;
      if (best == outcomes.size() || outcomes[i].total < outcomes[best].total) best = i;
    }
    result.schedule = assemble(best);
    result.time_us = static_cast<double>(outcomes[best].total) / synth::kTicksPerUs;
    result.plan_us = result.time_us;
    if (topology.switch_count() > 0) {
      result.schedule.forget_links();
      replay = simulate(topology, result.schedule, replay_options);
    }
  }
  // On switches the schedule's times become those of its replay on the real network: the one
  // time that counts. On point-to-point links the plan is its own replay (each transfer alone on
  // its link), which the tests check.
  if (topology.switch_count() > 0) {
    result.plan_us = static_cast<double>(outcomes[best].total) / synth::kTicksPerUs;
    result.schedule.retime(replay.start_us, replay.end_us);
    result.time_us = replay.time_us;
    result.link_loads = std::move(replay.links);
  }
  const Candidate& winner = candidates[best];
  result.unwind_degree = winner.degree;
  result.switch_native = winner.switch_native;
  result.chunks_per_npu = winner.chunks;
  result.seed = winner.seed;
  result.policy = winner.policy;
  result.candidates = static_cast<std::uint32_t>(candidates.size());
  if (winner.degree != 0) {
    result.schedule.notes.push_back("switches unwound at degree " + std::to_string(winner.degree));
  }
  result.sender_order = winner.order;
  return result;
}

}  // namespace tenet
