// SPDX-License-Identifier: MIT
// write_best: every candidate written in the requested format and timed as that file; the fastest
// file is written.

#include "best_output.hpp"

#include <nlohmann/json.hpp>

#include "mscclpp_cli.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/sim/simulator.hpp"

namespace tenet::cli {
namespace {

/// The candidate's file and its time; empty text with `reason` when it cannot be written.
std::string file_of(const ScheduleOutput& output, const BestCandidate& candidate, const Topology& topology,
                    BestFileTime& time) {
  const Schedule& schedule = *candidate.schedule;
  try {
    if (output.plan()) {
      TimedMscclppPlan plan = schedule_to_timed_mscclpp_plan(schedule, topology, mscclpp_write_options(output.mscclpp));
      time.file_time_us = plan.time_us;
      return std::move(plan.text);
    }
    if (output.xml()) {
      MscclWritten written = write_msccl_xml(schedule, topology, msccl_write_options(output.msccl));
      time.file_time_us = written.time_us;
      return std::move(written.text);
    }
    time.file_time_us = candidate.schedule_time_us;
    return schedule_to_text(schedule, topology);
  } catch (const InputError& error) {
    time.reason = problem_messages(error);
    time.file_time_us = 0.0;
    return {};
  }
}

}  // namespace

BestWritten write_best(const ScheduleOutput& output, const std::vector<BestCandidate>& candidates,
                       const Topology& topology) {
  BestWritten best;
  std::string best_text;
  for (const BestCandidate& candidate : candidates) {
    BestFileTime time;
    time.algorithm = candidate.algorithm;
    time.schedule_time_us = candidate.schedule_time_us;
    std::string text = file_of(output, candidate, topology, time);
    // A tie, times a rounding apart, goes to the first (synth, then the baselines in order).
    if (!text.empty() && (best_text.empty() || time.file_time_us < best.file_time_us * (1.0 - kTieTolerance))) {
      best.algorithm = candidate.algorithm;
      best.file_time_us = time.file_time_us;
      best_text = std::move(text);
    }
    best.candidates.push_back(std::move(time));
  }
  if (best_text.empty()) {
    std::string reasons;
    for (const BestFileTime& time : best.candidates)
      reasons += (reasons.empty() ? "" : "; ") + time.algorithm + ": " + time.reason;
    if (candidates.empty()) reasons = "no algorithm applies and verifies";
    throw InputError("", "--output",
                     "'" + output.path + "': no compared algorithm can be written in this format (" + reasons + ")");
  }
  write_file_atomically(output.path, best_text);
  return best;
}

nlohmann::json best_written_json(const std::string& path, const BestWritten& written) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const BestFileTime& time : written.candidates) {
    nlohmann::json object = {{"algorithm", time.algorithm}, {"schedule_time_us", time.schedule_time_us}};
    if (time.reason.empty())
      object["file_time_us"] = time.file_time_us;
    else
      object["reason"] = time.reason;
    candidates.push_back(std::move(object));
  }
  return {{"path", path},
          {"algorithm", written.algorithm},
          {"file_time_us", written.file_time_us},
          {"candidates", candidates}};
}

}  // namespace tenet::cli
