// SPDX-License-Identifier: MIT
#include "cli_support.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/mscclpp/mscclpp_plan.hpp"
#include "tenet/sim/runtime_routes.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet::cli {

void print_json(const nlohmann::json& document) { std::cout << document.dump(2) << '\n'; }

std::string Table::render() const {
  std::vector<std::size_t> width(headers_.size(), 0);
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string padding(width[c] - cell.size(), ' ');
      if (c == 0) {
        line += cell + padding;
      } else {
        line += numbers_ ? "  " + padding + cell : "  " + cell + padding;
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string text = render_row(headers_);
  for (const auto& row : rows_) text += render_row(row);
  return text;
}

std::string bound_summary(const LowerBound& bound, double time_us, const std::string& time_label) {
  std::string text = format_time_us(bound.total_us) + ", " + bound.binding_name() + " binds";
  if (bound.total_us > 0.0) text += " (" + time_label + " / bound " + fixed(time_us / bound.total_us, 3) + ")";
  return text;
}

std::string bound_terms_text(const LowerBound& bound) {
  std::string text = "ingress " + format_time_us(bound.ingress_us) + ", cut " + format_time_us(bound.cut_us) +
                     " (bandwidth " + format_time_us(bound.cut_bandwidth_us) + ")";
  if (bound.groups.groups != 0) {
    text += ", groups " + format_time_us(bound.groups_us) + " (" + std::to_string(bound.groups.groups) + " groups, " +
            fixed(bound.groups.bandwidth_GBps, 2) + " GB/s)";
  }
  text += ", latency " + format_time_us(bound.latency_us);
  if (!bound.cut.exact) text += "; " + cut_coverage_note(bound.cut);
  return text;
}

void add_threads_option(CLI::App* command, int& threads) {
  command->add_option("--threads", threads, "Worker threads (0: all cores); results do not depend on it")
      ->check(CLI::Range(0, 1024))
      ->default_val(0);
}

ThreadLimit limit_threads(int threads) { return ThreadLimit(threads > 0 ? static_cast<std::size_t>(threads) : 0); }

void add_collective_options(CLI::App* command, CollectiveOptions& options, bool chunks) {
  command->add_option("-t,--topology", options.topology, "Topology file (JSON)")->required();
  command->add_option("-c,--collective", options.collective,
                      "allgather, reducescatter or allreduce (default allreduce)");
  command->add_option("--size", options.size, "Collective size n, e.g. 64MiB or 1GB (default 64MiB)");
  command->add_option("--members", options.members,
                      "Run a sub-collective among these NPUs (file ids), e.g. 0-3,8; the others only forward");
  if (chunks) {
    command->add_option("--chunks-per-npu", options.chunks_per_npu,
                        "Chunks each NPU's block is cut into: auto (default: 1, 2, 4, ... up to 64 while larger counts "
                        "keep paying off; the fastest wins) or 1 to 65536");
  }
}

void add_planning_options(CLI::App* command, PlanningOptions& options) {
  command->add_option(
      "--switches", options.switches,
      "How switches are planned on: auto (default: switch-native plans, and unwound ones small enough\n"
      "to score, the fastest on the real switches wins), native (on the physical links only) or unwind\n"
      "(the TACOS paper's point-to-point unwinding, for comparison)");
  command
      ->add_option(
          "--unwind-degree", options.unwind_degree,
          "With --switches unwind: the unwinding degree; 0 (default) tries 1, 2, 3, 4, 6, 8 and keeps the best")
      ->check(CLI::Range(0u, 4096u));
  command->add_option(
      "--transfers", options.transfers,
      "What a transfer may be: auto (default: one chunk hop by hop, and where alphas matter also\n"
      "aggregated ones, several chunks for one alpha, and routed ones, straight between members through\n"
      "the NPUs between; the fastest wins) or chunk (one chunk hop by hop: the TACOS paper's model)");
}

SynthOptions synth_options_for(const LoadedCollective& loaded, const PlanningOptions& planning) {
  const std::string& switches = planning.switches;
  const std::uint32_t unwind_degree = planning.unwind_degree;
  SynthOptions options;
  if (planning.transfers == "auto") {
    options.transfers = TransferPlanning::kAuto;
  } else if (planning.transfers == "chunk") {
    options.transfers = TransferPlanning::kChunk;
  } else {
    std::string message = "unknown transfers '" + planning.transfers + "'";
    const std::string suggestion = closest_match(planning.transfers, {"auto", "chunk"});
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    throw InputError("", "--transfers", message + "; expected auto (the default) or chunk");
  }
  options.auto_chunks = loaded.auto_chunks;
  if (switches == "auto") {
    options.switches = SwitchPlanning::kAuto;
  } else if (switches == "native") {
    options.switches = SwitchPlanning::kNative;
  } else if (switches == "unwind") {
    options.switches = SwitchPlanning::kUnwind;
  } else {
    std::string message = "unknown switch planning '" + switches + "'";
    const std::string suggestion = closest_match(switches, {"auto", "native", "unwind"});
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    throw InputError("", "--switches", message + "; expected auto (the default), native or unwind");
  }
  if (unwind_degree != 0 && options.switches != SwitchPlanning::kUnwind) {
    throw InputError("", "--unwind-degree", "applies to --switches unwind only");
  }
  check_unwind_degree(loaded.topology, unwind_degree, "--unwind-degree");
  options.unwind_degree = unwind_degree;
  return options;
}

void check_unwind_degree(const Topology& topology, std::uint32_t degree, const std::string& option) {
  if (degree <= 1 || topology.switch_count() == 0) return;
  std::uint32_t applied = 0;
  unwind_switches(topology, static_cast<int>(std::min<std::uint32_t>(degree, 1u << 30)), true, &applied);
  if (applied < degree) {
    throw InputError("", option,
                     std::to_string(degree) +
                         " is more links than an NPU can get: the largest switch "
                         "group has " +
                         std::to_string(applied + 1) + " NPUs, so the degree goes up to " + std::to_string(applied));
  }
}

LoadedCollective load_collective(const CollectiveOptions& options) {
  Collective collective;
  collective.kind = parse_collective(options.collective, "--collective");
  collective.size_bytes = parse_size(options.size, "--size");
  bool auto_chunks = options.chunks_per_npu == "auto";
  collective.chunks_per_npu = 1;
  if (!auto_chunks) {
    const std::string& text = options.chunks_per_npu;
    const bool digits = !text.empty() && text.size() <= 6 && text.find_first_not_of("0123456789") == std::string::npos;
    const unsigned long value = digits ? std::stoul(text) : 0;
    if (value < 1 || value > kMaxChunksPerNpu) {
      throw InputError("", "--chunks-per-npu",
                       "'" + text + "' is not a chunk count; expected auto or a whole number from 1 to " +
                           std::to_string(kMaxChunksPerNpu));
    }
    collective.chunks_per_npu = static_cast<std::uint32_t>(value);
  }
  Topology topology = load_topology(options.topology);
  if (!options.members.empty()) collective.members = parse_members(options.members, topology, "--members");
  return {std::move(topology), std::move(collective), auto_chunks};
}

std::vector<std::string> parse_name_list(const std::string& text, const std::vector<std::string>& known,
                                         const std::string& option, const std::string& what,
                                         const std::string& expected) {
  std::vector<std::string> names;
  std::string current;
  for (char c : text + ",") {
    if (c != ',') {
      current += c;
      continue;
    }
    if (current.empty()) continue;
    if (std::find(known.begin(), known.end(), current) == known.end()) {
      std::string message = "unknown " + what + " '" + current + "'";
      const std::string suggestion = closest_match(current, known);
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      throw InputError("", option, message + "; " + expected);
    }
    if (std::find(names.begin(), names.end(), current) != names.end()) {
      throw InputError("", option, "'" + text + "' lists " + what + " " + current + " twice");
    }
    names.push_back(current);
    current.clear();
  }
  if (names.empty()) throw InputError("", option, "'" + text + "' names no " + what + "; " + expected);
  return names;
}

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void add_msccl_options(CLI::App* command, MscclOutputOptions& options, const std::string& files) {
  command->add_option("--proto", options.proto, "MSCCL protocol of " + files + ": Simple (default), LL or LL128");
  command->add_option("--channels", options.channels,
                      "MSCCL channels each connection's steps are dealt over in " + files +
                          ": auto (default: 1, 2 or 4, whichever runs fastest) or 1..32");
  command->add_flag("--out-of-place", options.out_of_place,
                    "Write " + files + " for out-of-place calls (default: in-place; the runtime picks files by this)");
}

/// "auto" is 0 (the writer chooses); otherwise 1..32.
std::uint32_t parse_channels(const std::string& text) {
  if (text == "auto") return 0;
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 1 || value > 32) {
    throw InputError("", "--channels",
                     "'" + text + "': auto or a whole number of channels from 1 to 32 (the runtime's channels)");
  }
  return value;
}

MscclWriteOptions msccl_write_options(const MscclOutputOptions& options) {
  MscclWriteOptions write;
  write.protocol = parse_msccl_protocol(options.proto, "--proto");
  write.in_place = !options.out_of_place;
  write.channels = parse_channels(options.channels);
  return write;
}

bool ScheduleOutput::xml() const { return ends_with(path, ".xml"); }

void add_schedule_output_options(CLI::App* command, ScheduleOutput& output) {
  command
      ->add_option("-o,--output", output.path,
                   "Write the schedule (.json), an MSCCL algorithm (.xml) or an MSCCL++ execution plan (.plan.json)")
      ->check(non_empty_path());
  add_msccl_options(command, output.msccl, "the .xml");
  add_mscclpp_options(command, output.mscclpp, "the .plan.json");
}

void check_schedule_output(const ScheduleOutput& output, const std::vector<std::string>& inputs) {
  if (!output.path.empty() && !output.xml() && !ends_with(output.path, ".json")) {
    throw InputError(
        "", "--output",
        "'" + output.path +
            "': tenet writes schedules as .json, MSCCL algorithms as .xml and MSCCL++ plans as .plan.json");
  }
  msccl_write_options(output.msccl);
  mscclpp_write_options(output.mscclpp);
  check_output_path(output.path, "--output", inputs);
}

std::string problem_messages(const InputError& error) {
  std::string text;
  for (const InputProblem& problem : error.problems()) {
    if (!text.empty()) text += "; ";
    text += problem.message;
  }
  return text;
}

void check_output_path(const std::string& path, const std::string& option, const std::vector<std::string>& inputs) {
  if (path.empty()) return;
  std::error_code code;
  for (const std::string& input : inputs) {
    // equivalent() sees through relative paths, symbolic and hard links; false when either is missing.
    if (!input.empty() && std::filesystem::equivalent(path, input, code)) {
      throw InputError(
          "", option,
          "'" + path + "' is the input file " + input + "; tenet does not overwrite its input (choose another name)");
    }
  }
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder, code)) {
    throw InputError("", option, "'" + path + "': the folder " + folder.string() + " does not exist");
  }
}

void check_svg_output(const std::string& path, const std::string& option, const std::vector<std::string>& inputs) {
  if (path.empty()) return;
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension != ".svg") throw InputError("", option, "'" + path + "': tenet draws plots as SVG only (name it .svg)");
  check_output_path(path, option, inputs);
}

bool same_output_path(const std::string& a, const std::string& b) {
  // Absolute first: weakly_canonical leaves a relative path whose first part does not exist as is.
  std::error_code code;
  const std::filesystem::path first = std::filesystem::weakly_canonical(std::filesystem::absolute(a, code), code);
  if (code) return a == b;
  const std::filesystem::path second = std::filesystem::weakly_canonical(std::filesystem::absolute(b, code), code);
  if (code) return a == b;
  return first == second;
}

CLI::Validator not_negative() {
  return CLI::Validator(
      [](const std::string& value) {
        const std::size_t first = value.find_first_not_of(" \t");
        return first != std::string::npos && value[first] == '-' ? "must be 0 or more (got " + value + ")"
                                                                 : std::string();
      },
      "");
}

CLI::Validator non_empty_path() {
  return CLI::Validator([](const std::string& value) { return value.empty() ? std::string("must name a file") : ""; },
                        "FILE");
}

void fit_synthesis_to_msccl_xml(SynthOptions& options, const Topology& topology, std::size_t members,
                                const MscclWriteOptions& write_options) {
  const Topology* on = &topology;
  options.file.estimate = [on](const Schedule& schedule) { return msccl_expected_time_us(schedule, *on); };
  // Chunks larger than the runtime's slice run as a pipeline of slices, which the estimate misses.
  options.file.pipelined = [on, protocol = write_options.protocol](const Schedule& schedule, double file_us) {
    return msccl_pipelined_time_us(schedule, *on, protocol, file_us);
  };
  MscclWriteOptions ranking = write_options;
  ranking.search_channels_when_serialized = false;
  ranking.verify = false;
  options.file.written = [on, ranking](const Schedule& schedule) {
    try {
      return write_msccl_xml(schedule, *on, ranking).time_us;
    } catch (const InputError&) {
      return std::numeric_limits<double>::infinity();
    }
  };
  // The estimate does not lay the file out, so it misses the limits of its threadblocks (a
  // 144-GPU switch's direct all-reduce: 143 awaited threadblocks where a dependency can name 128).
  options.file.fits = [written = options.file.written](const Schedule& schedule) {
    return msccl_threadblocks_surely_fit(schedule) || std::isfinite(written(schedule));
  };
  options.max_transfers_per_member = std::max<std::uint64_t>(1, msccl_step_room(members));
  options.file.transfers_per_rank = options.max_transfers_per_member;
}

void fit_synthesis_to_mscclpp_plan(SynthOptions& options, const Topology& topology,
                                   const MscclppOptions& plan_options) {
  const Topology* on = &topology;
  // Ranking: a candidate whose threadblocks could fit, at the lesser of its times on its own routes
  // and on the runtime's. A plan names no routes, but it keeps only the orders its ranks observe,
  // and the replay on the runtime's routes can be far slower than the plan (mi250-2x16-ib
  // reduce-scatter of 64 MiB, switch-native: 270.7 us planned, 662.8 on the runtime's routes, its
  // plan 379.1; ranked by the latter, a plan of 415.3 us was chosen). Fitting every candidate's
  // plan exactly took 25 s on two-level-switch-8x4 (all-reduce of 64 MiB), so only each round's
  // best is (SynthOptions::FileModel::fits).
  options.file.estimate = [on, plan_options](const Schedule& schedule) {
    if (!mscclpp_threadblocks_suffice(schedule, *on, plan_options)) return std::numeric_limits<double>::infinity();
    if (transfers_off_runtime_routes(schedule, *on) == 0) return schedule.planned_time_us();
    return std::min(schedule.planned_time_us(), on_runtime_routes(schedule, *on).planned_time_us());
  };
  options.file.fits = [on, plan_options](const Schedule& schedule) {
    return mscclpp_plan_fits(schedule, *on, plan_options);
  };
  options.file.estimate_screens = true;
  options.file.transfers_per_rank = mscclpp_transfer_room(plan_options);
  options.file.written = [on, plan_options](const Schedule& schedule) {
    try {
      return mscclpp_plan_time_us(schedule, *on, plan_options);
    } catch (const InputError&) {
      return std::numeric_limits<double>::infinity();
    }
  };
}

void add_runtime_routes_facts(nlohmann::json& extra, const Schedule& schedule, const Topology& topology,
                              const SimOptions& options) {
  if (schedule.route_count() == 0) return;
  const std::size_t off_route = transfers_off_runtime_routes(schedule, topology);
  if (off_route == 0) return;
  Schedule routed = schedule;
  routed.forget_links();
  extra["transfers_off_runtime_routes"] = off_route;
  extra["runtime_routes_time_us"] = simulate(topology, routed, options).time_us;
}

std::string runtime_routes_text(const nlohmann::json& extra) {
  if (!extra.contains("transfers_off_runtime_routes")) return "";
  return std::to_string(extra["transfers_off_runtime_routes"].get<std::size_t>()) +
         " transfers on routes the runtime does not take by itself (an MSCCL file or MSCCL++ plan names no routes; "
         "on the runtime's the schedule takes " +
         format_time_us(extra["runtime_routes_time_us"].get<double>()) + ")";
}

namespace {

std::string written_layout(const MscclWritten& written, double schedule_time_us, std::uint64_t slices) {
  std::string text = std::to_string(written.channels) + (written.channels == 1 ? " channel" : " channels");
  if (written.peer_threadblocks)
    text += ", a threadblock per peer for its sends and receives";
  else
    text += written.fused ? ", forwards fused into receives" : ", separate send and receive threadblocks";
  if (written.chunk_split > 1)
    text += ", each chunk cut into " + std::to_string(written.chunk_split) + " pieces on channels of their own";
  if (written.chunks_renumbered) text += ", each member's chunks renumbered so that a transfer's lie side by side";
  if (written.calls_side_by_side)
    text += ", transfers larger than a runtime call cut into transfers side by side on channels of their own";
  if (written.schedule_order) text += ", sends in the planned order";
  text += "; " + fixed(written.time_us / schedule_time_us, 3) + "x the schedule";
  // Scratch is allocated for the file's whole size range (maxBytes), so a large share is worth knowing.
  if (written.loop_chunks > 0 && written.scratch_chunks > written.loop_chunks) {
    text += "; scratch of " + fixed(static_cast<double>(written.scratch_chunks) / written.loop_chunks, 2) +
            "x the buffer per rank (" + std::to_string(written.scratch_chunks) + " chunks of " +
            std::to_string(written.loop_chunks) + ")";
  }
  // Why a file can run faster than its schedule: the runtime pipelines the slices of its chunks.
  if (slices > 1) {
    text += "; the runtime runs it in " + std::to_string(slices) + " slices of each " +
            (written.chunk_split > 1 ? "piece" : "chunk") + ", pipelined";
  }
  if (written.off_route_transfers > 0) {
    text += "; " + std::to_string(written.off_route_transfers) +
            " transfer(s) were planned on routes other than the runtime's, and a file names none (on the "
            "runtime's routes the schedule takes " +
            format_time_us(written.runtime_routes_us) + ")";
  }
  if (written.serialized_lanes > 0) {
    text += "; the runtime's channels and threadblocks hold " + std::to_string(written.serialized_lanes) +
            " transfer(s) at a time between a pair of ranks, fewer than the schedule has in flight (serialized: " +
            format_time_us(written.serialized_schedule_us) + ")";
  }
  return text;
}

}  // namespace

WrittenFile write_schedule(const ScheduleOutput& output, const Schedule& schedule, const Topology& topology,
                           std::optional<std::uint64_t> seed) {
  WrittenFile file;
  if (output.plan()) {
    std::string reason;
    const std::optional<TimedMscclppPlan> plan =
        schedule_to_timed_mscclpp_plan(schedule, topology, mscclpp_write_options(output.mscclpp), reason);
    if (!plan)
      throw InputError("", "--output",
                       "'" + output.path + "': the schedule cannot be written as an MSCCL++ plan: " + reason);
    file.runtime = "MSCCL++ plan";
    file.time_us = plan->time_us;
    write_file_atomically(output.path, plan->text);
    return file;
  }
  if (!output.xml()) {
    write_file_atomically(output.path, [&](std::ostream& out) { write_schedule_text(out, schedule, topology); });
    return file;
  }
  MscclWriteOptions options = msccl_write_options(output.msccl);
  options.seed = seed;
  MscclWritten written;
  try {
    written = write_msccl_xml(schedule, topology, options);
  } catch (const InputError& error) {
    // The writer names the limit; the user needs to know which of their options ran into it.
    throw InputError("", "--output",
                     "'" + output.path + "': the schedule cannot be written as MSCCL XML: " + problem_messages(error));
  }
  write_file_atomically(output.path, written.text);
  file.runtime = "MSCCL XML";
  file.time_us = written.time_us;
  const double schedule_time_us = simulate(topology, schedule).time_us;
  // The file's chunks: the schedule's, each cut into chunk_split pieces.
  const std::uint64_t chunks =
      std::uint64_t{schedule.chunks_per_member()} * schedule.members().size() * written.chunk_split;
  const std::uint64_t slices =
      msccl_runtime_slices(schedule, options.protocol)
          ? msccl_runtime_model(options.protocol, static_cast<int>(chunks), schedule.size_bytes()).iterations
          : 1;
  file.layout = written_layout(written, schedule_time_us, slices);
  file.facts = {{"msccl_channels", written.channels},
                {"msccl_fused_forwards", written.fused},
                {"msccl_port_order", written.schedule_order},
                {"msccl_slices", slices},
                {"msccl_chunk_split", written.chunk_split},
                {"msccl_chunks_renumbered", written.chunks_renumbered},
                {"msccl_calls_side_by_side", written.calls_side_by_side}};
  if (written.off_route_transfers > 0) {
    file.facts["msccl_off_route_transfers"] = written.off_route_transfers;
    file.facts["msccl_runtime_routes_schedule_us"] = written.runtime_routes_us;
  }
  if (written.serialized_lanes > 0) {
    file.facts["msccl_serialized_lanes"] = written.serialized_lanes;
    file.facts["msccl_serialized_schedule_us"] = written.serialized_schedule_us;
  }
  return file;
}

void apply_written_file(CollectiveResult& report, const WrittenFile& file) {
  if (file.runtime.empty()) return;
  report.extra["schedule_time_us"] = report.time_us;
  report.extra["file_format"] = file.runtime;
  if (file.facts.is_object()) report.extra.update(file.facts);
  report.time_us = file.time_us;
}

void add_written_rows(Table& facts, const WrittenFile& file, double schedule_time_us) {
  if (file.runtime.empty()) return;
  facts.add_row({"schedule", format_time_us(schedule_time_us) + " on the real network; the time above is its " +
                                 file.runtime + " as the runtime runs it"});
  if (!file.layout.empty()) facts.add_row({"msccl layout", file.layout});
}

double peak_memory_MiB() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

ProgressLine::ProgressLine() : terminal_(stderr_is_terminal()), started_(std::chrono::steady_clock::now()) {}

double ProgressLine::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void ProgressLine::show(std::string text) {
  if (!terminal_) {
    const double now = seconds();
    if (now < next_log_) return;
    next_log_ = now + kLogEverySeconds;
    std::cerr << text << " (" << fixed(now, 1) << " s)" << std::endl;
    return;
  }
  text += " (" + fixed(seconds(), 1) + " s)";
  // Pads over a longer previous line instead of clearing it first: no flicker.
  const std::size_t width = std::max(text.size(), shown_);
  shown_ = text.size();
  text.resize(width, ' ');
  std::cerr << "\r" << text << std::flush;
}

void ProgressLine::clear() {
  if (!terminal_ || shown_ == 0) return;
  std::cerr << "\r" << std::string(shown_, ' ') << "\r" << std::flush;
  shown_ = 0;
}

std::function<void(double)> simulation_progress(ProgressLine& line, std::string label) {
  return [&line, label = std::move(label), last = std::chrono::steady_clock::time_point{}](double done) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(200)) return;
    last = now;
    line.show(label + " " + std::to_string(static_cast<int>(done * 100.0)) + "%");
  };
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace tenet::cli
