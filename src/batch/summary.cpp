// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>
#include <set>

#include "tenet/batch/batch.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/topology/topology_json.hpp"

namespace tenet {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "tenet-batch-summary";

json identity_json(const BatchIdentity& identity) {
  return {{"topology", identity.topology},
          {"topology_fingerprint", identity.fingerprint},
          {"collective", identity.collective},
          {"size_bytes", identity.size_bytes},
          {"chunks_per_npu", identity.chunks_per_npu},
          {"switches", identity.switches},
          {"transfers", identity.transfers},
          {"seed", identity.seed},
          {"policy", identity.policy},
          {"scenarios", identity.scenarios},
          {"scenario_count", identity.scenario_count},
          {"baselines", identity.baselines}};
}

/// Worst first: scenarios that could not run, then the largest slowdown, then scenario order.
void sort_rows(json& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    const bool a_ok = a["status"] == "ok";
    const bool b_ok = b["status"] == "ok";
    if (a_ok != b_ok) return !a_ok;
    if (a_ok && a["slowdown"].get<double>() != b["slowdown"].get<double>()) {
      return a["slowdown"].get<double>() > b["slowdown"].get<double>();
    }
    return a["index"].get<std::size_t>() < b["index"].get<std::size_t>();
  });
}

std::string csv_field(const json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) {
      if (c == '"') quoted += '"';
      quoted += c;
    }
    return quoted + "\"";
  }
  return value.dump();
}

}  // namespace

json scenario_row(const ScenarioOutcome& outcome, const Topology& healthy) {
  json failed_npus = json::array();
  for (NodeId npu : outcome.scenario.failed_npus) failed_npus.push_back(healthy.original_npu_id(npu));
  json failed_links = json::array();
  for (const auto& [a, b] : outcome.scenario.failed_cables) {
    auto label = [&](NodeId node) -> json {
      if (healthy.is_npu(node)) return healthy.original_npu_id(node);
      return healthy.switch_name(node);
    };
    failed_links.push_back({label(a), label(b)});
  }
  json row = {{"index", outcome.index},
              {"scenario", outcome.scenario.name},
              {"failed", {{"npus", failed_npus}, {"links", failed_links}}},
              {"status", outcome.status}};
  if (!outcome.scenario.members.empty()) {
    json members = json::array();
    for (NodeId npu : outcome.scenario.members) members.push_back(healthy.original_npu_id(npu));
    row["members"] = members;
  }
  if (outcome.status != "ok") return row;
  json synth = result_to_json(outcome.synth);
  for (auto it = synth.begin(); it != synth.end(); ++it) row[it.key()] = it.value();
  // Wall-clock time differs run to run: kept out so merged shards equal a single run.
  row.erase("synthesis_ms");
  row["slowdown"] = outcome.slowdown;
  row["best_baseline"] = outcome.best_baseline.empty() ? json() : json(outcome.best_baseline);
  row["speedup_over_best_baseline"] = outcome.best_baseline.empty() ? json() : json(outcome.speedup_over_best_baseline);
  json baselines = json::array();
  for (const CollectiveResult& baseline : outcome.baselines) baselines.push_back(result_to_json(baseline));
  row["baselines"] = baselines;
  return row;
}

json batch_summary(const BatchIdentity& identity, const std::string& shard, json rows) {
  sort_rows(rows);
  return {
      {"format", kFormat}, {"version", 1}, {"batch", identity_json(identity)}, {"shard", shard}, {"scenarios", rows}};
}

std::string summary_csv(const json& summary) {
  std::string text =
      "scenario,status,failed_npus,failed_links,npus,time_us,algbw_GBps,lower_bound_us,lower_bound_term,"
      "time_over_lower_bound,slowdown,verified,best_baseline,best_baseline_speedup\n";
  for (const json& row : summary["scenarios"]) {
    std::string npus;
    for (const json& id : row["failed"]["npus"]) {
      if (!npus.empty()) npus += ' ';
      npus += id.dump();
    }
    std::string links;
    for (const json& pair : row["failed"]["links"]) {
      if (!links.empty()) links += ' ';
      links += csv_field(pair[0]);
      links += '-';
      links += csv_field(pair[1]);
    }
    const bool ok = row["status"] == "ok";
    auto get = [&](const char* key) { return ok && row.contains(key) ? csv_field(row[key]) : std::string(); };
    text += csv_field(row["scenario"]) + "," + csv_field(row["status"]) + "," + npus + "," + links + "," + get("npus") +
            "," + get("time_us") + "," + get("algbw_GBps") + "," + get("lower_bound_us") + "," +
            get("lower_bound_term") + "," + get("time_over_lower_bound") + "," + get("slowdown") + "," +
            get("verified") + "," + get("best_baseline") + "," + get("speedup_over_best_baseline") + "\n";
  }
  return text;
}

namespace {

/// A shard I/N must hold a row for every scenario i < scenario_count with i % N == I, once: a row
/// lost (an edited or truncated summary) would otherwise vanish from the merged sweep unnoticed.
void check_shard_rows(const json& summary, const std::string& path, std::uint32_t index, std::uint32_t count) {
  const json& total = summary["batch"].contains("scenario_count") ? summary["batch"]["scenario_count"] : json();
  if (!total.is_number_unsigned())
    throw InputError(path, "/batch/scenario_count", "missing: the sweep's scenario count");
  const std::uint64_t scenario_count = total.get<std::uint64_t>();
  const json& scenarios = summary["scenarios"];
  if (!scenarios.is_array()) throw InputError(path, "/scenarios", "must be an array of scenario rows");
  std::set<std::uint64_t> listed;
  for (std::size_t r = 0; r < scenarios.size(); ++r) {
    const json& row = scenarios[r];
    const std::string pointer = "/scenarios/" + std::to_string(r) + "/index";
    if (!row.is_object() || !row.contains("index") || !row["index"].is_number_unsigned()) {
      throw InputError(path, pointer, "missing: the scenario's index in the sweep");
    }
    const std::uint64_t i = row["index"].get<std::uint64_t>();
    if (i >= scenario_count || i % count != index) {
      throw InputError(path, pointer,
                       "scenario " + std::to_string(i) + " does not belong to shard " + std::to_string(index) + "/" +
                           std::to_string(count) + " of " + std::to_string(scenario_count) + " scenarios");
    }
    if (!listed.insert(i).second) throw InputError(path, pointer, "scenario " + std::to_string(i) + " is listed twice");
  }
  for (std::uint64_t i = index; i < scenario_count; i += count) {
    if (!listed.count(i)) {
      throw InputError(path, "/scenarios",
                       "the row of scenario " + std::to_string(i) + " is missing (shard " + std::to_string(index) +
                           "/" + std::to_string(count) + " holds " + std::to_string(listed.size()) + " of its " +
                           std::to_string((scenario_count - index + count - 1) / count) + " scenarios)");
    }
  }
}

}  // namespace

json merge_batch_summaries(const std::vector<std::string>& folders) {
  if (folders.empty()) throw InputError("batch merge", "", "give the folders the shards wrote (--out-dir of each)");
  json merged;
  std::set<std::uint32_t> seen;
  std::uint32_t expected_count = 0;
  json rows = json::array();
  for (const std::string& folder : folders) {
    const std::string path = folder + "/summary.json";
    const json summary = parse_json_text(read_file(path), path);
    if (!summary.is_object() || summary.value("format", "") != kFormat || !summary.contains("batch") ||
        !summary.contains("shard") || !summary["shard"].is_string() || !summary.contains("scenarios")) {
      throw InputError(path, "", "not a tenet batch summary (written by tenet batch --out-dir)");
    }
    const std::string shard = summary["shard"];
    std::uint32_t index = 0;
    std::uint32_t count = 1;
    if (shard != "all") parse_shard(shard, path + ": /shard", index, count);
    if (merged.is_null()) {
      merged = {{"format", kFormat}, {"version", 1}, {"batch", summary["batch"]}, {"shard", "all"}};
      expected_count = count;
    } else if (summary["batch"] != merged["batch"]) {
      throw InputError(path, "/batch",
                       "comes from a different sweep than " + folders.front() +
                           "/summary.json (topology, collective, size, seed, scenarios or baselines differ)");
    } else if (count != expected_count) {
      throw InputError(
          path, "/shard",
          "is shard " + shard + " but " + folders.front() + " is one of " + std::to_string(expected_count) + " shards");
    }
    if (!seen.insert(index).second) throw InputError(path, "/shard", "shard " + shard + " is given twice");
    check_shard_rows(summary, path, index, count);
    for (const json& row : summary["scenarios"]) rows.push_back(row);
  }
  if (seen.size() != expected_count) {
    std::string missing;
    for (std::uint32_t i = 0; i < expected_count; ++i) {
      if (seen.count(i)) continue;
      if (!missing.empty()) missing += ", ";
      missing += std::to_string(i) + "/" + std::to_string(expected_count);
    }
    throw InputError("batch merge", "", "missing shard(s) " + missing);
  }
  sort_rows(rows);
  merged["scenarios"] = rows;
  return merged;
}

}  // namespace tenet
