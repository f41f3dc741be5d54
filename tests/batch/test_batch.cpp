// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "../support/collectives.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/batch/batch.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/evaluate/evaluate.hpp"
#include "tenet/sim/bounds.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/topology/transforms.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

BatchOptions allreduce_options() {
  BatchOptions options;
  options.collective.kind = CollectiveKind::kAllReduce;
  options.collective.size_bytes = 1 << 20;
  return options;
}

BatchIdentity identity_for(const Topology& topology, const std::string& spec, std::size_t count) {
  BatchIdentity identity;
  identity.topology = topology.name;
  identity.fingerprint = topology.fingerprint();
  identity.collective = "allreduce";
  identity.size_bytes = 1 << 20;
  identity.scenarios = spec;
  identity.scenario_count = count;
  identity.baselines = {"ring", "direct"};
  return identity;
}

nlohmann::json summary_of(const Topology& topology, const std::vector<Scenario>& scenarios, BatchOptions options,
                          const std::string& spec) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ScenarioOutcome& outcome : run_batch(topology, scenarios, options))
    rows.push_back(scenario_row(outcome, topology));
  const std::string shard = options.shard_count == 1
                                ? "all"
                                : std::to_string(options.shard_index) + "/" + std::to_string(options.shard_count);
  return batch_summary(identity_for(topology, spec, scenarios.size()), shard, rows);
}

}  // namespace

TEST_CASE("every ok scenario is verified and slower or equal to healthy, and disconnections are rows", "[batch]") {
  const Topology ring = shipped("ring-64");
  // A ring survives any one NPU failure but not two far apart ones: both kinds of row appear.
  std::vector<Scenario> scenarios = make_scenarios("random-npus:2:6:3", ring, "--scenarios");
  const std::vector<ScenarioOutcome> outcomes = run_batch(ring, scenarios, allreduce_options());
  REQUIRE(outcomes.size() == scenarios.size());
  CHECK(outcomes[0].scenario.name == "healthy");
  CHECK(outcomes[0].slowdown == 1.0);
  std::size_t failed = 0;
  for (const ScenarioOutcome& outcome : outcomes) {
    INFO(outcome.scenario.name << ": " << outcome.status);
    if (outcome.status != "ok") {
      ++failed;
      CHECK(outcome.status.find("cannot reach") != std::string::npos);
      continue;
    }
    CHECK(outcome.synth.verified);
    // Every baseline by default, in the registry's order.
    REQUIRE(outcome.baselines.size() == baseline_names().size());
    CHECK(outcome.baselines[0].algorithm == "ring");
  }
  CHECK(failed > 0);
}

TEST_CASE("a scenario whose plan would not fit in picoseconds is a row with its reason, and the baselines still run",
          "[batch]") {
  // Three NPUs at 1 kB/s, all-gather of 4 GiB: healthy, each NPU takes its two blocks over two
  // links in 16.6 days; with a link failed, one block goes around through the third NPU and every
  // plan passes 26 days. That aborted the whole sweep.
  const Topology triangle = parse_topology(R"({"npus": 3, "defaults": {"bandwidth_GBps": 1e-6, "latency_us": 1},
      "links": [{"src": 0, "dst": 1}, {"src": 1, "dst": 2}, {"src": 0, "dst": 2}]})",
                                           "triangle.json");
  BatchOptions options;
  options.collective.kind = CollectiveKind::kAllGather;
  options.collective.size_bytes = std::uint64_t{4} << 30;
  options.synth.auto_chunks = true;  // as the tool's default: whole blocks take 16.6 days a transfer
  const std::vector<Scenario> scenarios = make_scenarios("all-links", triangle, "--scenarios");
  const std::vector<ScenarioOutcome> outcomes = run_batch(triangle, scenarios, options);
  REQUIRE(outcomes.size() == 4);
  CHECK(outcomes[0].status == "ok");
  for (std::size_t k = 1; k < outcomes.size(); ++k) {
    INFO(outcomes[k].scenario.name);
    CHECK(outcomes[k].status.starts_with("synth cannot plan it: the plan of this collective passes 26 days"));
  }
  // Compared on a failed network: synth does not apply, and says why; the baselines are timed.
  Collective collective = options.collective;
  FailureSet cable;
  cable.links = {{0, 1}, {1, 0}};
  const Topology failed = apply_failures(triangle, cable, "", "");
  const LowerBound bound = lower_bound(failed, collective, compute_diameter(failed, collective.members));
  const Evaluation synthesized = evaluate_synth(failed, collective, options.synth, bound);
  CHECK_FALSE(synthesized.result.applicable);
  CHECK(synthesized.result.reason.find("passes 26 days") != std::string::npos);
  const Evaluation ring = evaluate_baseline("ring", failed, collective, bound);
  CHECK(ring.result.timed());
  CHECK(ring.result.verified);
  CHECK(ring.result.time_us > 26.0 * 86400e6);
  // synthesize itself says it by type.
  CHECK_THROWS_AS(synthesize(failed, collective, options.synth), PlanTooLong);
}

TEST_CASE("the TACOS failure study: a 4x4 mesh with NPUs 7 and 9 failed beats ring and direct", "[batch]") {
  const Topology mesh = generate_topology(nlohmann::json{{"kind", "mesh"}, {"dims", {4, 4}}}, LinkDefaults{}, "t", "");
  std::vector<Scenario> scenarios(2);
  scenarios[0].name = "healthy";
  scenarios[1].name = "fig23a";
  scenarios[1].failed_npus = {7, 9};
  const std::vector<ScenarioOutcome> outcomes = run_batch(mesh, scenarios, allreduce_options());
  REQUIRE(outcomes[1].status == "ok");
  CHECK(outcomes[1].synth.verified);
  CHECK(outcomes[1].synth.npus == 14);
  CHECK(outcomes[1].slowdown > 1.0);
  CHECK(outcomes[1].speedup_over_best_baseline > 1.0);
}

TEST_CASE("each scenario's synthesis is fitted to its file on the scenario's own network", "[batch]") {
  const Topology mesh = generate_topology(nlohmann::json{{"kind", "mesh"}, {"dims", {3, 3}}}, LinkDefaults{}, "t", "");
  std::vector<Scenario> scenarios(2);
  scenarios[0].name = "healthy";
  scenarios[1].name = "one-down";
  scenarios[1].failed_npus = {4};
  BatchOptions options = allreduce_options();
  options.baselines = {};
  std::mutex mutex;
  std::vector<std::size_t> fitted_npus;
  // The fitted options are the ones run: a fixed chunk count (the collective's one).
  options.fit_synthesis = [&](SynthOptions& synth, const Topology& degraded, const Collective& collective) {
    std::lock_guard<std::mutex> lock(mutex);
    fitted_npus.push_back(collective.participants(degraded).size());
    synth.auto_chunks = false;
  };
  // Unfitted, 16 MiB takes 64 chunks per NPU.
  options.collective.size_bytes = 16 << 20;
  options.synth.auto_chunks = true;
  const std::vector<ScenarioOutcome> outcomes = run_batch(mesh, scenarios, options);
  std::sort(fitted_npus.begin(), fitted_npus.end());
  CHECK(fitted_npus == std::vector<std::size_t>{8, 9});
  for (const ScenarioOutcome& outcome : outcomes) {
    REQUIRE(outcome.status == "ok");
    CHECK(outcome.synth.extra["chunks_per_npu"] == 1);
  }
}

TEST_CASE("results do not depend on the thread count, and shards add up to the whole run", "[batch][threads]") {
  const Topology torus = shipped("torus-4x4");
  const std::string spec = "all-npus";
  const std::vector<Scenario> scenarios = make_scenarios(spec, torus, "--scenarios");
  nlohmann::json whole;
  {
    ThreadLimit one(1);
    whole = summary_of(torus, scenarios, allreduce_options(), spec);
  }
  CHECK(whole == summary_of(torus, scenarios, allreduce_options(), spec));
  CHECK(whole["scenarios"].size() == scenarios.size());

  // Shards written to folders, merged back: byte-identical to the single run.
  std::vector<std::string> folders;
  for (std::uint32_t shard = 0; shard < 3; ++shard) {
    BatchOptions options = allreduce_options();
    options.shard_index = shard;
    options.shard_count = 3;
    const nlohmann::json part = summary_of(torus, scenarios, options, spec);
    const std::string folder = "batch-shard-" + std::to_string(shard);
    std::filesystem::create_directories(folder);
    std::ofstream(folder + "/summary.json") << part.dump(2);
    folders.push_back(folder);
  }
  nlohmann::json merged = merge_batch_summaries(folders);
  CHECK(merged == whole);

  CHECK_THROWS_WITH(merge_batch_summaries({folders[0], folders[1]}), "error: batch merge: missing shard(s) 2/3");
  CHECK_THROWS_WITH(merge_batch_summaries({folders[0], folders[1], folders[1]}),
                    Catch::Contains("shard 1/3 is given twice"));
  // A shard of another sweep (other size) is refused.
  {
    nlohmann::json other = nlohmann::json::parse(std::ifstream(folders[2] + "/summary.json"));
    other["batch"]["size_bytes"] = 4096;
    std::ofstream(folders[2] + "/summary.json") << other.dump(2);
  }
  CHECK_THROWS_WITH(merge_batch_summaries(folders), Catch::Contains("comes from a different sweep"));
  for (const std::string& folder : folders) std::filesystem::remove_all(folder);
}

TEST_CASE("shard specs are checked", "[batch]") {
  std::uint32_t index = 0;
  std::uint32_t count = 0;
  parse_shard("2/8", "--shard", index, count);
  CHECK(index == 2);
  CHECK(count == 8);
  CHECK_THROWS_WITH(parse_shard("8/8", "--shard", index, count),
                    "error: --shard: '8/8' is not a shard; expected I/N with 0 <= I < N, e.g. 0/4");
  CHECK_THROWS_WITH(parse_shard("x", "--shard", index, count), Catch::Contains("is not a shard"));
}
