// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include <fstream>

#include "../support/collectives.hpp"
#include "tenet/batch/scenario.hpp"
#include "tenet/common/error.hpp"
#include "tenet/topology/topology_json.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

std::string scenario_rejection(const std::string& spec, const Topology& topology) {
  try {
    make_scenarios(spec, topology, "--scenarios");
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("scenario lists start with the healthy reference and cover what they name", "[batch]") {
  const Topology torus = shipped("torus-4x4");
  const auto npus = make_scenarios("all-npus", torus, "--scenarios");
  REQUIRE(npus.size() == 17);
  CHECK(npus[0].name == "healthy");
  CHECK(npus[0].failed_npus.empty());
  CHECK(npus[5].name == "npu-4");
  CHECK(npus[5].failed_npus == std::vector<NodeId>{4});
  const auto links = make_scenarios("all-links", torus, "--scenarios");
  CHECK(links.size() == 1 + 32);  // a 4x4 torus has 32 cables
  CHECK(links[1].name == "link-0-1");
  const auto switched = make_scenarios("all-links", shipped("switch-8"), "--scenarios");
  CHECK(switched.size() == 1 + 8);
  CHECK(switched[1].name == "link-0-sw");
}

TEST_CASE("failed NPUs of the file keep their ids in scenario names", "[batch]") {
  const Topology mesh = shipped("mesh-4x4-failed-7-9");
  const auto npus = make_scenarios("all-npus", mesh, "--scenarios");
  REQUIRE(npus.size() == 15);
  CHECK(npus[8].name == "npu-8");  // current NPU 7 was NPU 8 in the file
  CHECK(npus[8].failed_npus == std::vector<NodeId>{7});
}

TEST_CASE("random scenarios are reproducible, distinct within a scenario, and stable in M", "[batch]") {
  const Topology torus = shipped("torus-8x8");
  const auto a = make_scenarios("random-links:3:20:7", torus, "--scenarios");
  const auto b = make_scenarios("random-links:3:20:7", torus, "--scenarios");
  const auto longer = make_scenarios("random-links:3:30:7", torus, "--scenarios");
  const auto other = make_scenarios("random-links:3:20:8", torus, "--scenarios");
  REQUIRE(a.size() == 21);
  for (std::size_t i = 1; i < a.size(); ++i) {
    CHECK(a[i].failed_cables == b[i].failed_cables);
    CHECK(a[i].failed_cables == longer[i].failed_cables);
    REQUIRE(a[i].failed_cables.size() == 3);
    CHECK(a[i].failed_cables[0] < a[i].failed_cables[1]);
    CHECK(a[i].failed_cables[1] < a[i].failed_cables[2]);
  }
  bool differs = false;
  for (std::size_t i = 1; i < a.size(); ++i) differs = differs || a[i].failed_cables != other[i].failed_cables;
  CHECK(differs);
  const auto npus = make_scenarios("random-npus:2:5", torus, "--scenarios");
  REQUIRE(npus.size() == 6);
  CHECK(npus[1].failed_npus.size() == 2);
}

TEST_CASE("scenario files name failures by file ids and switches by name", "[batch]") {
  const Topology topology = shipped("pod-2x4-handwritten");
  const std::string path = "scenarios-test.json";
  std::ofstream(path) << R"({"scenarios": [
      {"name": "lose-gpu-5", "failed": {"npus": [5]}},
      {"name": "network-cable", "failed": {"links": [[0, "net"]]}, "members": [0, 1, 2, 3]}]})";
  const auto scenarios = make_scenarios(path, topology, "--scenarios");
  REQUIRE(scenarios.size() == 3);
  CHECK(scenarios[1].failed_npus == std::vector<NodeId>{5});
  CHECK(scenarios[2].failed_cables == std::vector<std::pair<NodeId, NodeId>>{{0, topology.find_switch("net")}});
  CHECK(scenarios[2].members == std::vector<NodeId>{0, 1, 2, 3});

  std::ofstream(path) << R"({"scenarios": [{"name": "x", "failed": {"npus": [42], "links": [[0, "nett"]]}},
                                           {"name": "x", "members": ["net"]}]})";
  CHECK(scenario_rejection(path, topology) ==
        "error: scenarios-test.json: /scenarios/0/failed/npus/0: there is no NPU 42 in the topology\n"
        "error: scenarios-test.json: /scenarios/0/failed/links/0/1: unknown switch 'nett'\n"
        "error: scenarios-test.json: /scenarios/1/name: 'x' is used twice (\"healthy\" is the reference row's name)\n"
        "error: scenarios-test.json: /scenarios/1/members/0: switch 'net' cannot be a member: only NPUs own data");
  std::remove(path.c_str());
}

TEST_CASE("bad scenario specs are rejected with what was expected", "[batch]") {
  const Topology torus = shipped("torus-4x4");
  CHECK(scenario_rejection("all-npu", torus) ==
        "error: --scenarios: unknown scenarios 'all-npu' (did you mean 'all-npus'?); expected all-npus, all-links, "
        "random-links:K:M[:SEED], random-npus:K:M[:SEED] or a scenarios .json file");
  CHECK(scenario_rejection("random-links:3", torus) ==
        "error: --scenarios: 'random-links:3': expected random-links:K:M[:SEED]");
  CHECK(scenario_rejection("random-links:x:3", torus) ==
        "error: --scenarios: 'random-links:x:3': K (failures per scenario) must be a whole number (got 'x')");
  CHECK(scenario_rejection("random-npus:17:3", torus) ==
        "error: --scenarios: 'random-npus:17:3': K must be from 1 to 16 (the NPUs of the topology)");
  CHECK(scenario_rejection("random-links:1:0", torus) ==
        "error: --scenarios: 'random-links:1:0': M must be from 1 to 100000");
  CHECK(scenario_rejection("missing.json", torus) == "error: missing.json: cannot open: No such file or directory");
}
