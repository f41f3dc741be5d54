// SPDX-License-Identifier: MIT
#pragma once
// The tree packing (tree_packing.hpp) as one of the synthesizer's methods: pack, lay the
// collective on the trees at a few pipeline depths, replay each on the real network, keep the
// fastest. Private to src/synth.

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/sim/simulator.hpp"
#include "tree_packing.hpp"

namespace tenet::synth {

struct TreeMethodResult {
  Schedule schedule;  ///< retimed by its replay
  SimResult replay;
  TreeUnits units;
  std::uint32_t pieces = 0;
  std::size_t trees = 0;    ///< distinct trees packed (both directions for all-reduce)
  std::uint32_t tried = 0;  ///< schedules built and replayed
  double score_us = 0.0;    ///< what it was chosen by: its file time, or its replay's
  /// Scored by its file: its trees were packed on routes other than the runtime's, so it was
  /// replayed on the runtime's, which its pipeline was not paced for.
  bool rerouted = false;
  /// score_us is the time of its file as written (written_file_time), not an estimate.
  bool written = false;
};

/// The fastest tree schedule of `kind` (by `file_time` of the retimed schedule when set, else by
/// its replay), or std::nullopt where trees cannot be packed (see pack_trees), would need too
/// many transfers at the fewest pieces (`max_transfers`, raised for the two fewest counts: see
/// tree_method.cpp), or no schedule has a finite file time. `reductions_alongside` (all-reduce):
/// also try reduction trees packed on what the broadcast trees leave (tree_method.cpp).
/// `written_file_time` (with `file_time`): the time of the file as written; the best few by
/// file_time are written and timed, and the fastest file wins. `max_replay_work` (0: none): a
/// trial whose replay needs more refill work than this (SimOptions::max_refill_work) drops out.
/// `file_transfers_per_rank` (with `file_time`, 0: none): the transfers, sent and received, a rank
/// of the file holds (SynthOptions::FileModel::transfers_per_rank); trials with more on some node
/// are not built, and the most pieces that fit are tried. `to_beat_us` (without a file): the time
/// the trees must beat to matter; replays that provably end later stop early (tree_method.cpp), and
/// where none could beat it the result may be std::nullopt.
std::optional<TreeMethodResult> synthesize_with_trees(
    const Topology& topology, CollectiveKind kind, std::uint64_t size_bytes, const std::vector<NodeId>& members,
    double max_transfers, const std::function<double(const Schedule&)>& file_time = {},
    bool reductions_alongside = false, const std::function<double(const Schedule&)>& written_file_time = {},
    std::uint64_t max_replay_work = 0, std::uint64_t file_transfers_per_rank = 0,
    double to_beat_us = std::numeric_limits<double>::infinity());

}  // namespace tenet::synth
