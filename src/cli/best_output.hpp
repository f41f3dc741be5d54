// SPDX-License-Identifier: MIT
#pragma once
// "Write the best algorithm you know": among verified schedules, the one whose written file runs
// fastest. The file, not the schedule, is what the user runs, so each candidate is written in the
// requested format and timed as that file: a schedule (.json) by its simulated time, MSCCL XML by
// the runtime model (msccl_to_schedule), an MSCCL++ plan by its plan model.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli_support.hpp"

namespace tenet::cli {

/// Times within this relative difference are a tie: rounding, not speed (a synthesized schedule
/// that reaches Swing's time on a torus, its file 1e-15 slower).
constexpr double kTieTolerance = 1e-9;

struct BestCandidate {
  std::string algorithm;
  const Schedule* schedule = nullptr;
  double schedule_time_us = 0.0;  ///< simulated on the real network
};

struct BestFileTime {
  std::string algorithm;
  double schedule_time_us = 0.0;
  double file_time_us = 0.0;  ///< 0 when the file could not be written
  std::string reason;         ///< why not
};

struct BestWritten {
  std::string algorithm;  ///< the one written
  double file_time_us = 0.0;
  std::vector<BestFileTime> candidates;  ///< every candidate, in the order given
};

/// Writes the candidate whose file runs fastest to output.path (atomically) and says which, with
/// every candidate's file time. Ties (kTieTolerance) go to the earlier candidate. InputError naming --output when
/// no candidate can be written in that format.
BestWritten write_best(const ScheduleOutput& output, const std::vector<BestCandidate>& candidates,
                       const Topology& topology);

/// The JSON object of a BestWritten ("output" of compare --json).
nlohmann::json best_written_json(const std::string& path, const BestWritten& written);

}  // namespace tenet::cli
