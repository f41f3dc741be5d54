// SPDX-License-Identifier: MIT
// verify_schedule: runs the passes of verify_internal.hpp and reports the first problem in replay
// order.

#include "tenet/verify/verifier.hpp"

#include <charconv>
#include <cstdint>
#include <string>

#include "verify_internal.hpp"

namespace tenet {
namespace verify_detail {

std::string format_number(double value) {
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (error != std::errc{}) return std::to_string(value);
  return std::string(buffer, end);
}

std::string transfer_label(const Topology& topology, const Schedule& schedule, TransferId id) {
  const Transfer& transfer = schedule.transfer(id);
  std::string label =
      cat("transfer ", id, " (", topology.node_label(transfer.src), " -> ", topology.node_label(transfer.dst));
  if (transfer.chunk_count == 1) {
    label += cat(", chunk ", schedule.chunks_of(transfer)[0]);
  } else if (transfer.chunk_count > 1) {
    label += cat(", ", transfer.chunk_count, " chunks");
  }
  label += ")";
  return label;
}

std::string transfer_label(const Topology& topology, const Schedule& schedule, TransferId id, ChunkId chunk) {
  const Transfer& transfer = schedule.transfer(id);
  return cat("transfer ", id, " (", topology.node_label(transfer.src), " -> ", topology.node_label(transfer.dst),
             ", chunk ", chunk, ")");
}

}  // namespace verify_detail

namespace {

using namespace verify_detail;

/// Above this many word operations the exact overlap sweep runs only when the fast replay already
/// failed (to name the true first problem); below it, it runs on every schedule. About 0.2 s.
constexpr std::uint64_t kAlwaysSweepWork = std::uint64_t{1} << 28;

/// Refuse schedules whose slots alone would need more than this (bytes).
constexpr double kMaxSlotBytes = 64.0 * (1ull << 30);

}  // namespace

VerifyResult verify_schedule(const Topology& topology, const Schedule& schedule) {
  VerifyResult result;
  auto fail = [&result](std::string message) {
    result.ok = false;
    result.error = std::move(message);
    return result;
  };
  const Survey survey = survey_schedule(topology, schedule);
  if (!survey.problem.empty()) return fail(survey.problem);

  const bool all_gather = schedule.collective() == CollectiveKind::kAllGather;
  const double slots = static_cast<double>(survey.rows.rows) * schedule.chunk_count();
  const double slot_bytes = slots * (all_gather ? 4.0 : 20.0);
  if (slot_bytes > kMaxSlotBytes) {
    return fail(cat("the schedule is too large to verify: ", survey.rows.rows, " NPUs x ", schedule.chunk_count(),
                    " chunks would need ", slot_bytes / (1ull << 30), " GiB of slots"));
  }

  const ReplayOrder order(schedule, survey);
  ReplayOutcome outcome = all_gather ? replay_all_gather(topology, schedule, order, survey)
                                     : replay_reductions(topology, schedule, order, survey);
  result.transfers_checked = outcome.transfers_checked;
  result.redundant_copies = outcome.redundant_copies;

  // All-gather moves whole chunks only, so its sets cannot overlap; reductions get the exact sweep
  // whenever it is cheap, and always to pin down a failure (an undetected overlap earlier in the
  // replay may be the real cause).
  if (!all_gather && (!outcome.error.empty() || survey.chunk_entries * words_per_set(schedule) <= kAlwaysSweepWork)) {
    const Overlap overlap = find_first_overlap(schedule, order, survey.rows, outcome.position);
    if (overlap.found) {
      return fail(cat(transfer_label(topology, schedule, overlap.transfer, overlap.chunk), ": adds contributions ",
                      topology.node_label(schedule.transfer(overlap.transfer).dst),
                      " already holds (a contribution counted twice)"));
    }
  }
  if (!outcome.error.empty()) return fail(std::move(outcome.error));
  return result;
}

}  // namespace tenet
