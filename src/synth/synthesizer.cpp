// The synthesis driver: unwind switches, run the all-gather engine for every candidate (unwinding
// degree x seed) in parallel, keep the fastest, and assemble the requested collective from it.

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
#include "tenet/common/error.hpp"
#include "tenet/common/random.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet {
namespace {

/// Degrees tried when the user fixes none: from a ring to moderately dense; beyond 8 a switch's
/// port is cut into slivers whose alphas dominate.
constexpr std::uint32_t kDefaultDegrees[] = {1, 2, 3, 4, 6, 8};

/// More transfers than this would not fit in this machine's memory as a Schedule.
constexpr double kMaxTransfers = 4e8;

struct Candidate {
  std::uint32_t degree = 0;
  std::uint64_t seed = 0;
  SynthPolicy policy = SynthPolicy::kTenet;
  const Topology* topology = nullptr;
  const Topology* transposed = nullptr;
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
  if (collective.chunks_per_npu == 0) throw InputError("", "--chunks-per-npu", "must be at least 1");
  const double chunks = static_cast<double>(members.size()) * collective.chunks_per_npu;
  const double phases = collective.kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  const double transfers = phases * chunks * (static_cast<double>(topology.npu_count()) - 1.0);
  if (transfers > kMaxTransfers) {
    throw InputError("", "--chunks-per-npu",
                     "the schedule would need about " + std::to_string(static_cast<long long>(transfers)) +
                         " transfers, more than tenet can hold (" + std::to_string(static_cast<long long>(kMaxTransfers)) +
                         "); use fewer chunks per NPU");
  }
  if (chunks > 4e9) throw InputError("", "--chunks-per-npu", "too many chunks (at most 4e9 in all)");

  // Switch-free topologies to synthesize on, one per unwinding degree.
  std::vector<std::uint32_t> degrees;
  std::vector<Topology> unwound;
  if (topology.switch_count() == 0) {
    degrees.push_back(0);
    unwound.push_back(topology);
  } else {
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
      unwound.push_back(std::move(candidate));
    }
  }
  std::vector<Topology> transposed;
  if (collective.kind != CollectiveKind::kAllGather) {
    for (const Topology& candidate : unwound) transposed.push_back(synth::transpose(candidate));
  }

  std::vector<Candidate> candidates;
  for (std::size_t d = 0; d < degrees.size(); ++d) {
    for (std::uint32_t restart = 0; restart < std::max<std::uint32_t>(1, options.restarts); ++restart) {
      candidates.push_back({degrees[d], options.seed + restart, options.policy, &unwound[d],
                            transposed.empty() ? nullptr : &transposed[d]});
    }
  }
  // tenet's rule weighs each link's choice against faster paths, which serves sparse unwindings
  // best; with many parallel slices of a switch port the paper's chunk-first order keeps more of
  // them busy (the 1,024-NPU ring-fc-switch: 760 us against 895 us at degree 8), and on small
  // switch groups it can win outright. So on switched networks the default also runs the paper's
  // rule once, on the densest unwinding tried, and keeps whichever is faster.
  if (options.policy == SynthPolicy::kTenet && topology.switch_count() > 0) {
    candidates.push_back({degrees.back(), options.seed, SynthPolicy::kTacos, &unwound.back(),
                          transposed.empty() ? nullptr : &transposed.back()});
  }

  const double chunk_bytes = static_cast<double>(collective.size_bytes) / chunks;
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
    const synth::AllGatherProblem problem{reduce ? candidate.transposed : candidate.topology, members,
                                          collective.chunks_per_npu, chunk_bytes, options.log_block_bits};
    synth::AllGatherTrace trace =
        synth::run_all_gather(problem, candidate.policy, mix_seed(candidate.seed, reduce ? 1 : 2), progress, &best_total);
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
  std::size_t best = outcomes.size();
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].abandoned) continue;
    if (best == outcomes.size() || outcomes[i].total < outcomes[best].total) best = i;
  }

  const Candidate& winner = candidates[best];
  Outcome& outcome = outcomes[best];
  SynthResult result;
  result.unwind_degree = winner.degree;
  result.seed = winner.seed;
  result.policy = winner.policy;
  result.time_us = static_cast<double>(outcome.total) / synth::kTicksPerUs;
  result.schedule = Schedule(collective.kind, collective.size_bytes, members, collective.chunks_per_npu, "synth");
  std::size_t expected = 0;
  if (outcome.reduce_scatter) expected += outcome.reduce_scatter->transfers.size();
  if (outcome.all_gather) expected += outcome.all_gather->transfers.size();
  result.schedule.reserve(expected, expected, expected + chunks);
  std::vector<std::vector<TransferId>> ready;
  synth::Tick offset = 0;
  if (outcome.reduce_scatter) {
    ready = synth::append_reduce_scatter(result.schedule, *winner.topology, *outcome.reduce_scatter);
    offset = outcome.reduce_scatter->finish;
    outcome.reduce_scatter.reset();
  }
  if (outcome.all_gather) synth::append_all_gather(result.schedule, *winner.topology, *outcome.all_gather, offset, ready);
  if (winner.degree != 0) {
    result.schedule.notes.push_back("switches unwound at degree " + std::to_string(winner.degree));
  }
  result.synthesis_topology = *winner.topology;
  return result;
}

}  // namespace tenet
