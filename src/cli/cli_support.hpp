// SPDX-License-Identifier: MIT
#pragma once
// Helpers shared by the subcommands: the only place (with main.cpp) that knows about CLI11.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "mscclpp_cli.hpp"
#include "tenet/collective.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/io/result.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/schedule/schedule.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::cli {

/// Prints one JSON document on stdout, pretty-printed, with a final newline.
void print_json(const nlohmann::json& document);

/// A plain-text table with right-aligned numeric columns, for stdout.
class Table {
 public:
  /// With `numbers` the columns after the first are right-aligned; without, every column is text.
  explicit Table(std::vector<std::string> headers, bool numbers = true)
      : headers_(std::move(headers)), numbers_(numbers) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  bool numbers_;
};

/// printf-style number formatting without the iostream dance: fixed(3.14159, 2) == "3.14".
std::string fixed(double value, int decimals);

/// The "lower bound" row of a facts table: "3.844 ms, cut binds (time / bound 1.514)"; `time_label`
/// names the time set against the bound.
std::string bound_summary(const LowerBound& bound, double time_us, const std::string& time_label = "time");
/// The "bound terms" row: "ingress 3.81 ms, cut 3.84 ms (bandwidth 3.84 ms), latency 2 us", and
/// the cut's coverage when it is not exact ("; cut bound over 64 of 1024 members").
std::string bound_terms_text(const LowerBound& bound);

/// Thrown by a subcommand that finished but must exit non-zero (e.g. a schedule did not verify).
struct Exit {
  int code;
};

/// Adds `--threads N` (0 = all cores) to a subcommand.
void add_threads_option(CLI::App* command, int& threads);

/// Caps the worker threads for the lifetime of the returned object (nothing when threads == 0).
ThreadLimit limit_threads(int threads);

/// The options every collective-running subcommand shares.
struct CollectiveOptions {
  std::string topology;
  std::string collective = "allreduce";
  std::string size = "64MiB";
  std::string chunks_per_npu = "auto";
  std::string members;
};

/// Adds -t/--topology, -c/--collective, --size, --members and (when `chunks`) --chunks-per-npu.
void add_collective_options(CLI::App* command, CollectiveOptions& options, bool chunks);

/// The topology and the collective the options describe; InputError for anything wrong.
struct LoadedCollective {
  Topology topology;
  Collective collective;  ///< chunks_per_npu is 1 when auto_chunks
  bool auto_chunks = false;
};
LoadedCollective load_collective(const CollectiveOptions& options);

/// The synthesis options every synthesizing command takes, as typed.
struct PlanningOptions {
  std::string switches = "auto";
  std::uint32_t unwind_degree = 0;
  std::string transfers = "auto";
};

/// Adds --switches (native or unwind), --unwind-degree and --transfers.
void add_planning_options(CLI::App* command, PlanningOptions& options);

/// The synthesizer's options that every synthesizing command shares, from the loaded collective
/// (automatic chunk count) and the planning options.
SynthOptions synth_options_for(const LoadedCollective& loaded, const PlanningOptions& planning);

/// Refuses a switch unwinding degree above what any switch group allows (its NPUs - 1), which would
/// otherwise be capped silently and reported as asked.
void check_unwind_degree(const Topology& topology, std::uint32_t degree, const std::string& option);

/// A comma-separated list of names, each one of `known` (an unknown one is an InputError naming
/// `option`, with a suggestion and `expected`). Empty entries are skipped.
std::vector<std::string> parse_name_list(const std::string& text, const std::vector<std::string>& known,
                                         const std::string& option, const std::string& what,
                                         const std::string& expected);

/// How schedules written as MSCCL XML are laid out: --proto, --channels, --out-of-place.
struct MscclOutputOptions {
  std::string proto = "Simple";
  std::string channels = "auto";
  bool out_of_place = false;
};

/// Adds --proto, --channels and --out-of-place; `files` says which files they shape ("the .xml").
void add_msccl_options(CLI::App* command, MscclOutputOptions& options, const std::string& files);

/// The writer's options; an unknown protocol is an InputError naming --proto.
MscclWriteOptions msccl_write_options(const MscclOutputOptions& options);

/// An InputError's messages joined by "; " (a writer's reason, inside another message).
std::string problem_messages(const InputError& error);

/// -o/--output (a schedule .json, an MSCCL algorithm .xml or an MSCCL++ plan .plan.json) and the
/// options of the last two.
struct ScheduleOutput {
  std::string path;  ///< empty: write nothing
  MscclOutputOptions msccl;
  MscclppOutputOptions mscclpp;
  bool xml() const;
  bool plan() const { return is_plan_path(path); }
};

/// Adds -o/--output and the MSCCL options of the .xml.
void add_schedule_output_options(CLI::App* command, ScheduleOutput& output);

/// What can be refused before any work: an extension tenet does not write, an unknown protocol, and
/// what check_output_path refuses (`inputs`: the files the command reads).
void check_schedule_output(const ScheduleOutput& output, const std::vector<std::string>& inputs = {});

/// Refuses, before any work, a file tenet would write (given by `option`) that is one of `inputs`
/// (the same file by any path or link: it would be replaced while still needed) or whose folder
/// does not exist. An empty path is allowed here (it means "not asked"); non_empty_path refuses
/// `-o ""` at parsing.
void check_output_path(const std::string& path, const std::string& option, const std::vector<std::string>& inputs);

/// check_output_path for a plot: the name must end in .svg (any case), the one format tenet draws.
void check_svg_output(const std::string& path, const std::string& option, const std::vector<std::string>& inputs);

/// Whether two output names are one file (both may not exist yet: compared as canonical paths).
bool same_output_path(const std::string& a, const std::string& b);

/// A CLI11 check for options that name a file to write: `-o ""` is an error, not "write nothing".
CLI::Validator non_empty_path();

/// A CLI11 check for unsigned options: without it "-1" parses as 18446744073709551615.
CLI::Validator not_negative();

/// Synthesis for an MSCCL XML file: candidates on switched networks ranked by what their file
/// would cost (msccl_expected_time_us: steps that fit the runtime's reader, transfers in flight
/// between two ranks cut to what its channels hold), so the spanning trees can win with fewer
/// pieces rather than fail to be written; no chunk count that cannot fit `members` ranks.
/// `topology` (what the synthesis runs on) must outlive `options`. The trees and the matching's
/// best are decided between by their files, written with `write_options`.
void fit_synthesis_to_msccl_xml(SynthOptions& options, const Topology& topology, std::size_t members,
                                const MscclWriteOptions& write_options = {});

/// The same for an MSCCL++ plan written with `plan_options`: candidates whose plan would exceed the
/// SPEC's limits (threadblocks a rank runs at once) are not chosen, and the trees and the
/// matching's best are decided between by their plans' times. `topology` must outlive `options`.
void fit_synthesis_to_mscclpp_plan(SynthOptions& options, const Topology& topology, const MscclppOptions& plan_options);

/// Where transfers of `schedule` took routes of their own (runtime_routes.hpp): their count
/// (`transfers_off_runtime_routes`) and the schedule's time on the runtime's routes
/// (`runtime_routes_time_us`, simulated with `options`) added to `extra`; nothing otherwise.
void add_runtime_routes_facts(nlohmann::json& extra, const Schedule& schedule, const Topology& topology,
                              const SimOptions& options = {});
/// Those facts as a sentence for a summary table; empty without them.
std::string runtime_routes_text(const nlohmann::json& extra);

/// What write_schedule wrote.
struct WrittenFile {
  /// "MSCCL XML" or "MSCCL++ plan": a file a runtime runs, with a time of its own; empty for a
  /// schedule (.json), whose time is the schedule's.
  std::string runtime;
  double time_us = 0.0;
  /// What the XML writer chose ("687.1 us on the runtime (1.000x the schedule), 1 channel, ...").
  std::string layout;
  nlohmann::json facts;  ///< the same for --json (msccl_* fields)
};

/// Writes the schedule to output.path atomically, as JSON, MSCCL XML or an MSCCL++ plan (`seed`
/// goes into the XML's comment), and times what it wrote as its runtime runs it. When the schedule
/// cannot be written in that format, the InputError names --output with the writer's reason, and
/// nothing is written.
WrittenFile write_schedule(const ScheduleOutput& output, const Schedule& schedule, const Topology& topology,
                           std::optional<std::uint64_t> seed = std::nullopt);

/// The time contract (DESIGN.md): when the command wrote a file a runtime runs, the result's time
/// is that file's; the schedule's goes to extra["schedule_time_us"].
void apply_written_file(CollectiveResult& report, const WrittenFile& file);

/// The rows synth and baseline print for a written file ("time" is printed by the caller).
void add_written_rows(Table& facts, const WrittenFile& file, double schedule_time_us);

/// Peak resident memory of this process so far, MiB.
double peak_memory_MiB();

/// True when stderr is a terminal: progress lines are redrawn in place only then.
bool stderr_is_terminal();

/// A line on stderr redrawn in place while a long run works, when stderr is a terminal. clear()
/// (or the destructor) removes it, so that the table and any error start on a clean line. Into a
/// file or a pipe, a run past a minute writes the line once a minute instead, each on its own: a
/// script's log then shows that an exact simulation of half an hour (direct on mesh-32x32) is
/// working, and a run of seconds (every test) writes nothing.
class ProgressLine {
 public:
  ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { clear(); }

  /// Draws `text` followed by the time since construction, " (12.3 s)".
  void show(std::string text);
  void clear();
  double seconds() const;

  static constexpr double kLogEverySeconds = 60.0;

 private:
  bool terminal_;
  std::size_t shown_ = 0;  ///< width of the line on screen, 0 when none
  double next_log_ = kLogEverySeconds;
  std::chrono::steady_clock::time_point started_;
};

/// SimOptions::progress that shows "`label` 12%" on `line`, at most five times a second.
std::function<void(double)> simulation_progress(ProgressLine& line, std::string label);

/// Registers the subcommands of each file.
void register_topo_command(CLI::App& app);
void register_synth_command(CLI::App& app);
void register_verify_command(CLI::App& app);
void register_batch_command(CLI::App& app);
void register_compare_command(CLI::App& app);
void register_simulate_command(CLI::App& app);
void register_baseline_command(CLI::App& app);

}  // namespace tenet::cli
