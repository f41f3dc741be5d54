// SPDX-License-Identifier: MIT
// `tenet compare`: the synthesized algorithm and every applicable baseline, simulated with one
// congestion-aware model on one topology, at one size or a sweep of sizes.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

#include "best_output.hpp"
#include "cli_support.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/evaluate/evaluate.hpp"
#include "tenet/io/plot.hpp"
#include "tenet/io/result.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/topology/analysis.hpp"

namespace tenet::cli {
namespace {

struct CompareOptions {
  CollectiveOptions collective;
  std::string sizes;
  std::string algorithms = "all";
  std::uint64_t seed = 1;
  PlanningOptions planning;
  bool json = false;
  bool csv = false;
  std::string plot;
  std::string heatmap;
  std::string heatmap_algorithm = "synth";
  ScheduleOutput output;
  int threads = 0;
};

/// The sizes a sweep may hold: a table row each, at every one a synthesis.
constexpr std::size_t kMostSizes = 64;

/// `--sizes`: a comma-separated list of sizes and FROM:TO ranges (every power of two from the
/// first size to the last), smallest first, each size once.
std::vector<std::uint64_t> parse_sweep(const std::string& text) {
  const std::string option = "--sizes";
  std::vector<std::uint64_t> sizes;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, comma - begin);
    if (item.empty()) throw InputError("", option, "'" + text + "' has an empty item; separate sizes by one comma");
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) {
      sizes.push_back(parse_size(item, option));
    } else {
      const std::uint64_t low = parse_size(item.substr(0, colon), option);
      const std::uint64_t high = parse_size(item.substr(colon + 1), option);
      if (high < low) throw InputError("", option, "'" + item + "': the last size is smaller than the first");
      for (std::uint64_t size = low; size <= high && sizes.size() <= kMostSizes; size *= 2) sizes.push_back(size);
    }
    if (sizes.size() > kMostSizes) {
      throw InputError("", option, "'" + text + "' holds more than " + std::to_string(kMostSizes) + " sizes");
    }
    if (comma == text.size()) break;
    begin = comma + 1;
  }
  std::sort(sizes.begin(), sizes.end());
  const auto twice = std::adjacent_find(sizes.begin(), sizes.end());
  if (twice != sizes.end()) {
    throw InputError("", option, "'" + text + "' holds the size " + format_size(*twice) + " twice");
  }
  return sizes;
}

std::vector<std::string> parse_algorithms(const std::string& text) {
  std::vector<std::string> known = baseline_names();
  known.insert(known.begin(), "synth");
  if (text == "all") return known;
  return parse_name_list(text, known, "--algorithms", "algorithm",
                         "expected all or a comma-separated list of synth, ring, direct, rhd, swing, swing-latency, "
                         "bucket, circulant");
}

/// One algorithm at one size: its result, for the heat map per-link bytes, and for -o its schedule.
struct Row {
  CollectiveResult result;
  std::vector<double> link_bytes;
  Schedule schedule;
};

/// `slower_than_us`: the fastest time so far (evaluate_baseline skips long simulations of
/// baselines that provably take longer).
Row run_one(const std::string& algorithm, const Topology& topology, const Collective& collective,
            const LowerBound& bound, const SynthOptions& synth_options, bool heatmap, bool keep_schedule,
            double slower_than_us, const std::function<void(double)>& progress) {
  Evaluation evaluation = algorithm == "synth" ? evaluate_synth(topology, collective, synth_options, bound, heatmap)
                                               : evaluate_baseline(algorithm, topology, collective, bound,
                                                                   "--algorithms", slower_than_us, progress);
  Row row{std::move(evaluation.result), {}, {}};
  for (const LinkLoad& load : evaluation.link_loads) row.link_bytes.push_back(load.bytes);
  if (keep_schedule) row.schedule = std::move(evaluation.schedule);
  return row;
}

/// The line on stderr that says which algorithm compare is working on, and how far a long
/// simulation of it has come: a 1,024-NPU run takes long enough to look hung without it.
class CompareProgress {
 public:
  explicit CompareProgress(std::size_t total) : total_(total) {}

  /// Announces the next run: "compare: 3/9 swing (12.3 s)", with its size in a sweep (size > 0).
  void show(const std::string& algorithm, std::uint64_t size) {
    ++done_;
    label_ = "compare: " + std::to_string(done_) + "/" + std::to_string(total_) + " " + algorithm;
    if (size > 0) label_ += " at " + format_size(size);
    line_.show(label_);
  }
  /// SimOptions::progress of the run announced last: "compare: 3/9 direct 12% (41.0 s)".
  std::function<void(double)> simulation() { return simulation_progress(line_, label_); }
  /// SynthOptions::progress (called by one worker at a time): "compare: 1/9 synth 40% matched".
  std::function<void(double)> matching() {
    return [this](double done) {
      line_.show(label_ + " " + std::to_string(static_cast<int>(done * 100.0)) + "% matched");
    };
  }
  void clear() { line_.clear(); }

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  std::string label_;
  ProgressLine line_;
};

/// -o: the verified algorithm whose file runs fastest, written.
BestWritten write_best_of(const CompareOptions& options, const std::vector<std::string>& algorithms,
                          const std::vector<Row>& rows, const Topology& topology) {
  std::vector<BestCandidate> candidates;
  for (std::size_t a = 0; a < algorithms.size(); ++a) {
    const Row& row = rows[a];
    if (row.result.timed() && row.result.verified)
      candidates.push_back({algorithms[a], &row.schedule, row.result.time_us});
  }
  return write_best(options.output, candidates, topology);
}

std::string file_kind(const ScheduleOutput& output) {
  if (output.plan()) return "MSCCL++ plan";
  if (output.xml()) return "MSCCL XML";
  return "schedule";
}

void run_compare(const CompareOptions& options) {
  if (options.json && options.csv) throw InputError("", "--csv", "give --json or --csv, not both");
  check_svg_output(options.plot, "--plot", {options.collective.topology});
  check_svg_output(options.heatmap, "--heatmap", {options.collective.topology});
  if (!options.plot.empty() && !options.heatmap.empty() && same_output_path(options.plot, options.heatmap)) {
    throw InputError("", "--heatmap", "'" + options.heatmap + "' is also the --plot file; give each its own name");
  }
  auto thread_limit = limit_threads(options.threads);
  const std::vector<std::string> algorithms = parse_algorithms(options.algorithms);
  std::vector<std::uint64_t> sizes =
      options.sizes.empty() ? std::vector{parse_size(options.collective.size, "--size")} : parse_sweep(options.sizes);
  const bool write = !options.output.path.empty();
  check_schedule_output(options.output, {options.collective.topology});
  if (write && sizes.size() > 1) {
    throw InputError("", "--output", "writes the best algorithm of one size; give --size, not a sweep of --sizes");
  }
  LoadedCollective loaded = load_collective(options.collective);
  SynthOptions synth_options = synth_options_for(loaded, options.planning);
  synth_options.seed = options.seed;
  const Topology& topology = loaded.topology;
  if (options.output.xml())
    fit_synthesis_to_msccl_xml(synth_options, topology, loaded.collective.participants(topology).size(),
                               msccl_write_options(options.output.msccl));
  if (options.output.plan())
    fit_synthesis_to_mscclpp_plan(synth_options, topology, mscclpp_write_options(options.output.mscclpp));
  const Diameter diameter = compute_diameter(topology, loaded.collective.members);
  // The binding cut does not depend on the size: found once for the whole sweep.
  const CutBound cut = collective_cut_bound(topology, loaded.collective);
  if (!options.heatmap.empty() &&
      std::find(algorithms.begin(), algorithms.end(), options.heatmap_algorithm) == algorithms.end()) {
    throw InputError("", "--heatmap-algorithm",
                     "'" + options.heatmap_algorithm + "' is not among the compared algorithms");
  }

  std::vector<std::vector<Row>> table(sizes.size());
  std::vector<LowerBound> bounds(sizes.size());
  CompareProgress progress(algorithms.size() * sizes.size());
  synth_options.progress = progress.matching();
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    Collective collective = loaded.collective;
    collective.size_bytes = sizes[s];
    bounds[s] = lower_bound(topology, collective, diameter, cut);
    // With -o every algorithm's file is timed (the fastest file counts, not the fastest schedule),
    // so nothing may be skipped.
    double fastest = std::numeric_limits<double>::infinity();
    for (const std::string& algorithm : algorithms) {
      progress.show(algorithm, sizes.size() > 1 ? sizes[s] : 0);
      table[s].push_back(run_one(algorithm, topology, collective, bounds[s], synth_options, !options.heatmap.empty(),
                                 write, write ? std::numeric_limits<double>::infinity() : fastest,
                                 progress.simulation()));
      const CollectiveResult& result = table[s].back().result;
      if (result.timed() && result.verified) fastest = std::min(fastest, result.time_us);
    }
  }
  progress.clear();

  // -o: every verified algorithm is written in the file's format and timed as that file; the
  // time that counts (DESIGN.md) is then the file's, so the table ranks files.
  std::optional<BestWritten> written;
  if (write) {
    written = write_best_of(options, algorithms, table.front(), topology);
    for (std::size_t a = 0, c = 0; a < algorithms.size(); ++a) {
      CollectiveResult& result = table.front()[a].result;
      if (!result.timed() || !result.verified) continue;
      const BestFileTime& file = written->candidates[c++];
      if (!options.output.xml() && !options.output.plan()) continue;
      result.extra["schedule_time_us"] = result.time_us;
      result.extra["file_format"] = file_kind(options.output);
      if (file.reason.empty()) {
        result.time_us = file.file_time_us;
      } else {
        result.extra["not_written"] = file.reason;
      }
    }
  }

  nlohmann::json results = nlohmann::json::array();
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    double best = INFINITY;
    for (const Row& row : table[s]) {
      if (row.result.timed() && row.result.verified && !row.result.extra.contains("not_written")) {
        best = std::min(best, row.result.time_us);
      }
    }
    for (const Row& row : table[s]) {
      nlohmann::json object = result_to_json(row.result);
      // Ranked among files, one that was not written has no place (its time_us is its schedule's).
      if (row.result.time_at_least_us || row.result.extra.contains("not_written")) {
        object["slowdown_vs_best"] = nullptr;
        object["winner"] = false;
      } else if (row.result.applicable) {
        object["slowdown_vs_best"] = row.result.time_us / best;
        // Times a rounding apart tie (a synthesized schedule that reaches Swing's on a torus).
        object["winner"] = row.result.verified && row.result.time_us <= best * (1.0 + kTieTolerance);
      }
      results.push_back(object);
    }
  }

  if (!options.plot.empty()) {
    std::vector<PlotSeries> series;
    for (std::size_t a = 0; a < algorithms.size(); ++a) {
      PlotSeries line{algorithms[a], {}};
      for (std::size_t s = 0; s < sizes.size(); ++s) {
        const CollectiveResult& result = table[s][a].result;
        if (result.timed() && result.verified) line.points.emplace_back(sizes[s], result.algbw_GBps());
      }
      if (!line.points.empty()) series.push_back(line);
    }
    write_file_atomically(options.plot, bandwidth_plot_svg(series, collective_name(loaded.collective.kind) + " on " +
                                                                       topology.name + ": algorithm bandwidth"));
  }
  if (!options.heatmap.empty()) {
    const std::size_t a = static_cast<std::size_t>(
        std::find(algorithms.begin(), algorithms.end(), options.heatmap_algorithm) - algorithms.begin());
    const Row& row = table.back()[a];
    if (!row.result.applicable) {
      throw InputError("", "--heatmap-algorithm", options.heatmap_algorithm + " does not apply: " + row.result.reason);
    }
    write_file_atomically(
        options.heatmap,
        link_heatmap_svg(topology, row.link_bytes,
                         options.heatmap_algorithm + " " + collective_name(loaded.collective.kind) + " of " +
                             format_size(sizes.back()) + " on " + topology.name + ": bytes per link"));
  }

  if (options.json) {
    nlohmann::json document = {
        {"topology", topology.name}, {"collective", collective_name(loaded.collective.kind)}, {"results", results}};
    if (written) document["output"] = best_written_json(options.output.path, *written);
    print_json(document);
    return;
  }
  if (options.csv) {
    std::cout << "algorithm,collective,npus,size_bytes,applicable,time_us,algbw_GBps,lower_bound_us,lower_bound_term,"
                 "ingress_bound_us,cut_bound_us,cut_bandwidth_bound_us,groups_bound_us,latency_bound_us,cut_exact,"
                 "time_over_lower_bound,slowdown_vs_best,winner,verified,reason\n";
    for (const nlohmann::json& r : results) {
      const bool applicable = r["applicable"].get<bool>();
      std::cout << r["algorithm"].get<std::string>() << "," << r["collective"].get<std::string>() << "," << r["npus"]
                << "," << r["size_bytes"] << "," << (applicable ? "true" : "false") << ",";
      if (applicable) {
        const nlohmann::json& terms = r["lower_bound_terms"];
        // Not simulated: no time, no bandwidth, no ratios; the reason says why.
        auto number = [](const nlohmann::json& value) { return value.is_null() ? std::string() : value.dump(); };
        std::cout << number(r["time_us"]) << "," << number(r["algbw_GBps"]) << "," << r["lower_bound_us"] << ","
                  << r["lower_bound_term"].get<std::string>() << "," << terms["ingress_us"] << "," << terms["cut_us"]
                  << "," << terms["cut_bandwidth_us"] << "," << terms["groups_us"] << "," << terms["latency_us"] << ","
                  << terms["cut_exact"] << "," << number(r.value("time_over_lower_bound", nlohmann::json())) << ","
                  << number(r["slowdown_vs_best"]) << "," << r["winner"] << "," << r["verified"] << ",";
        if (r.contains("not_simulated"))
          std::cout << "\"not simulated, at least " << r["time_at_least_us"]
                    << " us: " << r["not_simulated"].get<std::string>() << "\"";
      } else {
        std::cout << ",,,,,,,,,,,,,false,\"" << r["reason"].get<std::string>() << "\"";
      }
      std::cout << "\n";
    }
    return;
  }
  std::cout << collective_name(loaded.collective.kind) << " on " << topology.name << " ("
            << loaded.collective.participants(topology).size() << " NPUs"
            << (topology.layout.is_grid() ? ", layout: " + topology.layout.describe() : std::string())
            << "); * marks the fastest verified algorithm";
  if (written && (options.output.xml() || options.output.plan())) {
    std::cout << "; times are each algorithm's " << file_kind(options.output) << " as the runtime runs it";
  }
  std::cout << "\n";
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const LowerBound& bound = bounds[s];
    std::cout << "\n"
              << format_size(sizes[s]) << ": lower bound " << format_time_us(bound.total_us) << ", "
              << bound.binding_name() << " binds; " << bound_terms_text(bound) << "\n";
    Table out({"algorithm", "time", "algbw GB/s", "time/bound", "vs best", "verified"});
    std::vector<std::string> reasons;
    std::vector<std::string> skipped;
    for (std::size_t a = 0; a < algorithms.size(); ++a) {
      const nlohmann::json& r = results[s * algorithms.size() + a];
      if (!r["applicable"].get<bool>()) {
        out.add_row({"  " + algorithms[a], "n/a", "", "", "", ""});
        reasons.push_back(algorithms[a] + ": " + r["reason"].get<std::string>());
        continue;
      }
      if (r.contains("time_at_least_us")) {
        const double at_least = r["time_at_least_us"].get<double>();
        out.add_row({"  " + algorithms[a], ">= " + format_time_us(at_least), "", "", "",
                     r["verified"].get<bool>() ? "yes" : "NO"});
        skipped.push_back(algorithms[a] + ": " + r["not_simulated"].get<std::string>());
        continue;
      }
      if (r.contains("not_written")) {
        // The times are files' here, and this one has none: its schedule's time is in the table
        // of files below, beside the reason.
        out.add_row({"  " + algorithms[a], "no file", "", "", "", r["verified"].get<bool>() ? "yes" : "NO"});
        continue;
      }
      out.add_row({std::string(r["winner"].get<bool>() ? "* " : "  ") + algorithms[a],
                   format_time_us(r["time_us"].get<double>()), fixed(r["algbw_GBps"].get<double>(), 2),
                   fixed(r["time_over_lower_bound"].get<double>(), 3),
                   fixed(r["slowdown_vs_best"].get<double>(), 2) + "x", r["verified"].get<bool>() ? "yes" : "NO"});
    }
    std::cout << out.render();
    for (const std::string& reason : reasons) std::cout << "  n/a " << reason << "\n";
    for (const std::string& reason : skipped) std::cout << "  >= " << reason << "\n";
  }
  if (written) {
    std::cout << "\nwrote " << options.output.path << ": " << written->algorithm << ", the fastest "
              << file_kind(options.output) << " (" << format_time_us(written->file_time_us) << ")\n";
    Table files({"algorithm", "schedule", "file", "file/schedule"});
    std::vector<std::string> unwritten;
    for (const BestFileTime& time : written->candidates) {
      const bool chosen = time.algorithm == written->algorithm;
      if (!time.reason.empty()) {
        files.add_row({"  " + time.algorithm, format_time_us(time.schedule_time_us), "not written", ""});
        unwritten.push_back(time.algorithm + ": " + time.reason);
        continue;
      }
      files.add_row({std::string(chosen ? "* " : "  ") + time.algorithm, format_time_us(time.schedule_time_us),
                     format_time_us(time.file_time_us), fixed(time.file_time_us / time.schedule_time_us, 3)});
    }
    std::cout << files.render();
    for (const std::string& reason : unwritten) std::cout << "  not written " << reason << "\n";
  }
  if (!options.plot.empty()) std::cout << "\nwrote " << options.plot << "\n";
  if (!options.heatmap.empty()) std::cout << "wrote " << options.heatmap << "\n";
}

}  // namespace

void register_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Which algorithm wins on this topology, and by how much: the synthesized one and every applicable\n"
      "baseline (ring, direct, rhd, swing, swing-latency, bucket, circulant), all verified and simulated\n"
      "with one congestion-aware model, at --size or over --sizes 32B:1GiB (powers of two)");
  add_collective_options(compare, options->collective, true);
  compare
      ->add_option("--sizes", options->sizes,
                   "Sizes to compare at: FROM:TO (every power of two between), a list, or both, e.g. 32B:1GiB or "
                   "1MiB,16MiB,64MiB:1GiB")
      ->excludes("--size");
  compare->add_option("--algorithms", options->algorithms, "all (default) or a list, e.g. synth,ring,swing");
  compare->add_option("--seed", options->seed, "Synthesis seed (default 1)")->check(not_negative());
  add_planning_options(compare, options->planning);
  compare->add_flag("--json", options->json, "Print one JSON document");
  compare->add_flag("--csv", options->csv, "Print CSV");
  compare->add_option("--plot", options->plot, "Write algorithm bandwidth versus size as SVG")->check(non_empty_path());
  compare->add_option("--heatmap", options->heatmap, "Write the per-link load of one algorithm (largest size) as SVG")
      ->check(non_empty_path());
  compare->add_option("--heatmap-algorithm", options->heatmap_algorithm, "The algorithm of --heatmap (default synth)");
  add_schedule_output_options(compare, options->output);
  add_threads_option(compare, options->threads);
  compare->callback([options] { run_compare(*options); });
}

}  // namespace tenet::cli
