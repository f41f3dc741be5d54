// SPDX-License-Identifier: MIT
// `tenet batch` and `tenet batch merge`: failure sweeps, sharded across machines if needed.

#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "best_output.hpp"
#include "cli_support.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/batch/batch.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/msccl/msccl.hpp"

namespace tenet::cli {
namespace {

struct BatchCommandOptions {
  CollectiveOptions collective;
  std::string scenarios;
  std::string baselines = "all";
  std::uint64_t seed = 1;
  std::string policy = "tenet";
  PlanningOptions planning;
  std::string shard = "0/1";
  std::string out_dir;
  bool force = false;
  bool xml = false;
  MscclOutputOptions msccl;
  bool mscclpp = false;
  MscclppOutputOptions mscclpp_options;
  bool best = false;
  bool json = false;
  bool csv = false;
  int threads = 0;
};

struct MergeOptions {
  std::vector<std::string> folders;
  std::string out_dir;
  bool json = false;
  bool csv = false;
};

std::vector<std::string> parse_baseline_list(const std::string& text) {
  if (text == "none") return {};
  if (text == "all") return baseline_names();
  return parse_name_list(text, baseline_names(), "--baselines", "baseline",
                         "expected a comma-separated list, all or none");
}

/// A file name from a scenario name: letters, digits, '-', '_' and '.' kept, the rest '_'.
std::string file_stem(const std::string& name) {
  std::string stem;
  for (char c : name) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    stem += safe ? c : '_';
  }
  return stem.empty() || stem[0] == '.' ? "scenario" + stem : stem;
}

/// The file stem of every scenario's schedule, by index over the whole sweep (so every shard agrees):
/// file_stem of its name, unless that is "summary" (the summary's own files) or an earlier
/// scenario's stem, compared ignoring case for case-insensitive file systems ("a/b" and "a_b" both
/// give "a_b"); then "-INDEX" is appended until it is neither.
std::vector<std::string> scenario_file_stems(const std::vector<Scenario>& scenarios) {
  std::vector<std::string> stems;
  std::set<std::string> taken = {"summary"};
  auto lower = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    std::string stem = file_stem(scenarios[i].name);
    while (taken.count(lower(stem))) {
      stem += '-';
      stem += std::to_string(i);
    }
    taken.insert(lower(stem));
    stems.push_back(stem);
  }
  return stems;
}

/// The output folder, new or empty; with --force, the .json, .xml and .csv files an earlier sweep
/// left in it are removed first (other files stay), so no schedule of another sweep is mixed in.
void prepare_out_dir(const std::string& folder, bool force, const std::vector<std::string>& inputs) {
  std::error_code code;
  if (std::filesystem::exists(folder, code) && !std::filesystem::is_directory(folder, code)) {
    throw InputError(folder, "", "--out-dir: is a file, not a folder");
  }
  if (std::filesystem::is_directory(folder, code) && !std::filesystem::is_empty(folder, code)) {
    if (!force) {
      throw InputError(folder, "",
                       "--out-dir: the folder is not empty (an earlier sweep's files would mix with this "
                       "one's); give a new or empty folder, or --force to remove its .json, .xml and "
                       ".csv files first");
    }
    std::vector<std::filesystem::path> stale;
    for (const auto& entry : std::filesystem::directory_iterator(folder, code)) {
      const std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file() || (extension != ".json" && extension != ".xml" && extension != ".csv")) continue;
      for (const std::string& input : inputs) {
        if (!input.empty() && std::filesystem::equivalent(entry.path(), input, code)) {
          throw InputError(
              folder, "",
              "--out-dir: the folder holds the input file " + input + "; --force would remove it, give another folder");
        }
      }
      stale.push_back(entry.path());
    }
    for (const auto& path : stale) std::filesystem::remove(path, code);
  }
  std::filesystem::create_directories(folder, code);
  if (code) throw InputError(folder, "", "cannot create the folder: " + code.message());
}

/// Writes the schedule as MSCCL XML to `path` and sets `time_us` to the file's time on the
/// runtime's model; when MSCCL cannot express it, removes what an earlier run left there and
/// returns why, for the scenario's row.
std::string write_msccl_xml(const std::string& path, const Schedule& schedule, const Topology& topology,
                            const MscclWriteOptions& options, double& time_us) {
  MscclWritten written;
  try {
    written = tenet::write_msccl_xml(schedule, topology, options);
  } catch (const InputError& error) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    return "no MSCCL XML: " + problem_messages(error);
  }
  write_file_atomically(path, written.text);
  time_us = written.time_us;
  return "";
}

/// The same for an MSCCL++ plan.
std::string write_plan(const std::string& path, const Schedule& schedule, const Topology& topology,
                       const MscclppOptions& options, double& time_us) {
  std::string reason;
  const std::optional<TimedMscclppPlan> plan = schedule_to_timed_mscclpp_plan(schedule, topology, options, reason);
  if (!plan) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    return "no MSCCL++ plan: " + reason;
  }
  write_file_atomically(path, plan->text);
  time_us = plan->time_us;
  return "";
}

/// --best: the fastest file of the synthesized and the baseline schedules, in the format of
/// `output.path`; "" or a note saying which algorithm went into the file (or why none could).
std::string write_best_file(const ScheduleOutput& output, const Schedule& synthesized, double synth_time_us,
                            const std::vector<NamedSchedule>& baselines, const Topology& topology, double& time_us) {
  std::vector<BestCandidate> candidates{{"synth", &synthesized, synth_time_us}};
  for (const NamedSchedule& baseline : baselines)
    candidates.push_back({baseline.algorithm, &baseline.schedule, baseline.time_us});
  const std::string file = output.path.substr(output.path.find_last_of('/') + 1);
  try {
    const BestWritten written = write_best(output, candidates, topology);
    time_us = written.file_time_us;
    return written.algorithm == "synth" ? "" : file + " holds " + written.algorithm + " (fastest file)";
  } catch (const InputError& error) {
    std::error_code ignored;
    std::filesystem::remove(output.path, ignored);
    return file + ": " + (error.problems().empty() ? std::string("not written") : error.problems().front().message);
  }
}

void print_summary_table(const nlohmann::json& summary) {
  const nlohmann::json& batch = summary["batch"];
  std::cout << "batch " << batch["collective"].get<std::string>() << " of "
            << format_size(batch["size_bytes"].get<std::uint64_t>()) << " on " << batch["topology"].get<std::string>()
            << ": " << summary["scenarios"].size() << " scenario(s), worst first\n";
  Table table({"scenario", "status", "NPUs", "time", "algbw GB/s", "bound", "binds", "time/bound", "slowdown",
               "best baseline", "speedup", "verified"});
  for (const nlohmann::json& row : summary["scenarios"]) {
    if (row["status"] != "ok") {
      table.add_row({row["scenario"], row["status"], "", "", "", "", "", "", "", "", "", ""});
      continue;
    }
    const bool has_baseline = !row["best_baseline"].is_null();
    const double bound = row.value("lower_bound_us", 0.0);
    table.add_row({row["scenario"], "ok", std::to_string(row["npus"].get<std::uint32_t>()),
                   format_time_us(row["time_us"].get<double>()), fixed(row["algbw_GBps"].get<double>(), 2),
                   format_time_us(bound), row.value("lower_bound_term", std::string("-")),
                   bound > 0.0 ? fixed(row["time_us"].get<double>() / bound, 3) : "-",
                   fixed(row["slowdown"].get<double>(), 3),
                   has_baseline ? row["best_baseline"].get<std::string>() : "-",
                   has_baseline ? fixed(row["speedup_over_best_baseline"].get<double>(), 2) + "x" : "-",
                   row["verified"].get<bool>() ? "yes" : "NO"});
  }
  std::cout << table.render();
  for (const nlohmann::json& row : summary["scenarios"]) {
    if (!row.contains("note")) continue;
    std::cout << "note: " << row["scenario"].get<std::string>() << ": " << row["note"].get<std::string>() << "\n";
  }
}

void emit(const nlohmann::json& summary, bool json, bool csv) {
  if (json) {
    print_json(summary);
  } else if (csv) {
    std::cout << summary_csv(summary);
  } else {
    print_summary_table(summary);
  }
}

void run_batch_command(const BatchCommandOptions& options) {
  if (options.collective.topology.empty())
    throw InputError("", "--topology", "is required (the healthy topology file)");
  if (options.scenarios.empty()) throw InputError("", "--scenarios", "is required, e.g. all-npus");
  if (options.json && options.csv) throw InputError("", "--csv", "give --json or --csv, not both");
  if (options.xml && options.out_dir.empty())
    throw InputError("", "--xml", "needs --out-dir, the folder the .xml files go to");
  if (options.mscclpp && options.out_dir.empty()) {
    throw InputError("", "--mscclpp", "needs --out-dir, the folder the .plan.json files go to");
  }
  if (options.best && options.out_dir.empty())
    throw InputError("", "--best", "needs --out-dir, the folder the files go to");
  if (options.best && options.baselines == "none")
    throw InputError("", "--best", "compares with the baselines; --baselines none leaves none");
  MscclWriteOptions msccl = msccl_write_options(options.msccl);
  msccl.seed = options.seed;
  const MscclppOptions plan_options = mscclpp_write_options(options.mscclpp_options);
  auto thread_limit = limit_threads(options.threads);
  BatchOptions batch;
  parse_shard(options.shard, "--shard", batch.shard_index, batch.shard_count);
  batch.baselines = parse_baseline_list(options.baselines);
  batch.keep_baseline_schedules = options.best;
  const LoadedCollective loaded = load_collective(options.collective);
  batch.synth = synth_options_for(loaded, options.planning);
  batch.synth.seed = options.seed;
  batch.synth.policy = parse_synth_policy(options.policy, "--policy");
  if (!loaded.collective.members.empty()) {
    throw InputError("", "--members", "batch takes members per scenario, in a scenarios .json file");
  }
  batch.collective = loaded.collective;
  const Topology& healthy = loaded.topology;
  // Each scenario's synthesis ranks its candidates by the file it will write, on its own network,
  // as synth -o does; with both files, by the MSCCL XML (the plan is written where it fits).
  if (options.xml) {
    batch.fit_synthesis = [msccl](SynthOptions& synth, const Topology& degraded, const Collective& collective) {
      fit_synthesis_to_msccl_xml(synth, degraded, collective.participants(degraded).size(), msccl);
    };
  } else if (options.mscclpp) {
    batch.fit_synthesis = [plan_options](SynthOptions& synth, const Topology& degraded, const Collective&) {
      fit_synthesis_to_mscclpp_plan(synth, degraded, plan_options);
    };
  }
  const std::vector<Scenario> scenarios = make_scenarios(options.scenarios, healthy, "--scenarios");
  if (options.force && options.out_dir.empty())
    throw InputError("", "--force", "needs --out-dir, the folder it clears");
  if (!options.out_dir.empty()) {
    const bool scenario_file =
        options.scenarios.size() > 5 && options.scenarios.compare(options.scenarios.size() - 5, 5, ".json") == 0;
    prepare_out_dir(options.out_dir, options.force,
                    {options.collective.topology, scenario_file ? options.scenarios : std::string()});
  }
  const std::vector<std::string> stems = scenario_file_stems(scenarios);

  ScheduleSink sink;
  std::mutex notes_mutex;
  std::map<std::size_t, std::string> notes;  // by scenario index
  // The written files' times on their runtime's model, by scenario index.
  std::map<std::size_t, nlohmann::json> file_times;
  if (!options.out_dir.empty()) {
    sink = [&](const ScenarioOutcome& outcome, const Topology& degraded, const Schedule& schedule,
               const std::vector<NamedSchedule>& baselines) {
      const std::string stem = options.out_dir + "/" + stems[outcome.index];
      std::string note;
      const auto add_note = [&](const std::string& more) {
        if (!more.empty()) note += (note.empty() ? "" : "; ") + more;
      };
      double unused = 0.0;
      double xml_us = 0.0;
      double plan_us = 0.0;
      if (options.best) {
        ScheduleOutput output;
        output.msccl = options.msccl;
        output.mscclpp = options.mscclpp_options;
        output.path = stem + ".json";
        add_note(write_best_file(output, schedule, outcome.synth.time_us, baselines, degraded, unused));
        output.path = stem + ".xml";
        if (options.xml)
          add_note(write_best_file(output, schedule, outcome.synth.time_us, baselines, degraded, xml_us));
        output.path = stem + ".plan.json";
        if (options.mscclpp)
          add_note(write_best_file(output, schedule, outcome.synth.time_us, baselines, degraded, plan_us));
      } else {
        write_file_atomically(stem + ".json", [&](std::ostream& out) { write_schedule_text(out, schedule, degraded); });
        if (options.xml) add_note(write_msccl_xml(stem + ".xml", schedule, degraded, msccl, xml_us));
        if (options.mscclpp) add_note(write_plan(stem + ".plan.json", schedule, degraded, plan_options, plan_us));
      }
      nlohmann::json times = nlohmann::json::object();
      if (xml_us > 0.0) times["xml_time_us"] = xml_us;
      if (plan_us > 0.0) times["plan_time_us"] = plan_us;
      std::lock_guard<std::mutex> lock(notes_mutex);
      if (!note.empty()) notes[outcome.index] = note;
      if (!times.empty()) file_times[outcome.index] = std::move(times);
    };
  }
  const bool show_progress = stderr_is_terminal();
  auto progress = [&](std::size_t done, std::size_t total) {
    if (show_progress) std::cerr << "\rbatch: " << done << "/" << total << " scenarios" << std::flush;
  };
  const std::vector<ScenarioOutcome> outcomes = run_batch(healthy, scenarios, batch, sink, progress);
  if (show_progress) std::cerr << "\r" << std::string(40, ' ') << "\r" << std::flush;

  BatchIdentity identity;
  identity.topology = healthy.name;
  identity.fingerprint = healthy.fingerprint();
  identity.collective = collective_name(batch.collective.kind);
  identity.size_bytes = batch.collective.size_bytes;
  identity.chunks_per_npu = loaded.auto_chunks ? "auto" : std::to_string(batch.collective.chunks_per_npu);
  identity.switches = options.planning.switches;
  identity.transfers = options.planning.transfers;
  identity.seed = options.seed;
  identity.policy = options.policy;
  identity.scenarios = options.scenarios;
  identity.scenario_count = scenarios.size();
  identity.baselines = batch.baselines;
  nlohmann::json rows = nlohmann::json::array();
  for (const ScenarioOutcome& outcome : outcomes) {
    rows.push_back(scenario_row(outcome, healthy));
    // A name that had to be told apart from another says where its schedule went.
    if (!options.out_dir.empty() && stems[outcome.index] != file_stem(outcome.scenario.name)) {
      rows.back()["file"] = stems[outcome.index] + ".json";
    }
    const auto note = notes.find(outcome.index);
    if (note != notes.end()) rows.back()["note"] = note->second;
    const auto times = file_times.find(outcome.index);
    if (times != file_times.end()) rows.back().update(times->second);
  }
  const std::string shard_label = batch.shard_count == 1 ? "all" : options.shard;
  const nlohmann::json summary = batch_summary(identity, shard_label, rows);
  if (!options.out_dir.empty()) {
    write_file_atomically(options.out_dir + "/summary.json", summary.dump(2) + "\n");
    write_file_atomically(options.out_dir + "/summary.csv", summary_csv(summary));
  }
  if (options.json) {
    // The documented result objects carry synthesis wall time; the summary files leave it out.
    nlohmann::json document = summary;
    for (nlohmann::json& row : document["scenarios"]) {
      for (const ScenarioOutcome& outcome : outcomes) {
        if (outcome.index == row["index"].get<std::size_t>() && outcome.synth.synthesis_ms) {
          row["synthesis_ms"] = *outcome.synth.synthesis_ms;
        }
      }
    }
    print_json(document);
  } else {
    emit(summary, false, options.csv);
  }
}

void run_merge(const MergeOptions& options) {
  if (options.json && options.csv) throw InputError("", "--csv", "give --json or --csv, not both");
  const nlohmann::json merged = merge_batch_summaries(options.folders);
  if (!options.out_dir.empty()) {
    std::error_code code;
    std::filesystem::create_directories(options.out_dir, code);
    if (code) throw InputError(options.out_dir, "", "cannot create the folder: " + code.message());
    write_file_atomically(options.out_dir + "/summary.json", merged.dump(2) + "\n");
    write_file_atomically(options.out_dir + "/summary.csv", summary_csv(merged));
  }
  emit(merged, options.json, options.csv);
}

}  // namespace

void register_batch_command(CLI::App& app) {
  auto options = std::make_shared<BatchCommandOptions>();
  CLI::App* batch =
      app.add_subcommand("batch",
                         "Synthesize, verify and simulate a collective over many failure scenarios (in parallel), and\n"
                         "report what each costs against the healthy topology and the best classic algorithm");
  batch->add_option("-t,--topology", options->collective.topology, "Healthy topology file (JSON)");
  batch->add_option("-c,--collective", options->collective.collective,
                    "allgather, reducescatter or allreduce (default allreduce)");
  batch->add_option("--size", options->collective.size, "Collective size n, e.g. 64MiB (default 64MiB)");
  batch->add_option("--chunks-per-npu", options->collective.chunks_per_npu,
                    "Chunks per NPU: auto (default: 1, 2, 4, ... up to 64 while larger counts keep paying off; the "
                    "fastest wins) or 1 to 65536");
  batch->add_option("--scenarios", options->scenarios,
                    "all-npus | all-links | random-links:K:M[:SEED] | random-npus:K:M[:SEED] | FILE.json");
  batch->add_option("--baselines", options->baselines,
                    "Baselines simulated per scenario: a list, all (default) or none");
  add_planning_options(batch, options->planning);
  batch->add_option("--seed", options->seed, "Synthesis seed (default 1)")->check(not_negative());
  batch->add_option("--policy", options->policy, "Matching rule: tenet (default) or tacos");
  batch->add_option("--shard", options->shard, "Run only slice I of N (every N-th scenario), e.g. 2/8 (default 0/1)");
  batch->add_option("--out-dir", options->out_dir, "Write each scenario's schedule and summary.json/summary.csv here");
  batch->add_flag("--force", options->force,
                  "With --out-dir: use a folder that is not empty, removing the .json, .xml and .csv files of an "
                  "earlier sweep first");
  batch->add_flag(
      "--xml", options->xml,
      "With --out-dir, also write each scenario's schedule as an MSCCL algorithm (SCENARIO.xml); a schedule "
      "MSCCL cannot express gets a note in its summary row instead");
  add_msccl_options(batch, options->msccl, "the --xml files");
  batch->add_flag(
      "--mscclpp", options->mscclpp,
      "With --out-dir, also write each scenario's schedule as an MSCCL++ execution plan (SCENARIO.plan.json); a "
      "schedule that does not fit MSCCL++'s limits gets a note in its summary row instead");
  add_mscclpp_options(batch, options->mscclpp_options, "the --mscclpp files");
  batch->add_flag(
      "--best", options->best,
      "With --out-dir, each scenario's files (.json, and .xml / .plan.json when asked) hold the algorithm whose "
      "file runs fastest there, synthesized or baseline; the summary row notes when that is a baseline");
  batch->add_flag("--json", options->json, "Print the summary as one JSON document");
  batch->add_flag("--csv", options->csv, "Print the summary as CSV");
  add_threads_option(batch, options->threads);

  auto merge_options = std::make_shared<MergeOptions>();
  CLI::App* merge = batch->add_subcommand(
      "merge", "Combine the --out-dir folders of shards 0/N..N-1/N into the summary of the whole sweep");
  merge->add_option("FOLDERS", merge_options->folders, "Shard output folders")->required();
  merge->add_option("--out-dir", merge_options->out_dir, "Write the merged summary.json and summary.csv here");
  merge->add_flag("--json", merge_options->json, "Print the merged summary as JSON");
  merge->add_flag("--csv", merge_options->csv, "Print the merged summary as CSV");
  merge->callback([merge_options] { run_merge(*merge_options); });

  batch->callback([options, batch] {
    if (batch->got_subcommand("merge")) return;
    run_batch_command(*options);
  });
}

}  // namespace tenet::cli
