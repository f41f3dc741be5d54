// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tenet/common/error.hpp"
#include "tenet/topology/topology_json.hpp"

using tenet::InputError;
using tenet::parse_topology;

namespace {

/// The whole message a topology text is rejected with ("" when it is accepted).
std::string rejection(const std::string& text) {
  try {
    parse_topology(text, "t.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

const char* const kSquare = R"({"npus": 4, "links": [
  {"src": 0, "dst": 1}, {"src": 1, "dst": 2}, {"src": 2, "dst": 3}, {"src": 3, "dst": 0}]})";

}  // namespace

TEST_CASE("a hand-written topology loads with defaults and per-link overrides", "[topology_json]") {
  const tenet::Topology topology = parse_topology(R"({
    "name": "pair-and-switch", "description": "two NPUs and a switch",
    "defaults": {"latency_us": 1.5, "bandwidth_GBps": 100},
    "npus": 3, "switches": ["sw"],
    "links": [{"src": 0, "dst": 1, "bandwidth_GBps": 25},
              {"src": 0, "dst": "sw"}, {"src": 1, "dst": "sw"},
              {"src": 2, "dst": "sw", "latency_us": 0, "bidirectional": false},
              {"src": "sw", "dst": 2, "latency_us": 3, "bidirectional": false}]})",
                                                  "t.json");
  CHECK(topology.name == "pair-and-switch");
  CHECK(topology.npu_count() == 3);
  CHECK(topology.switch_count() == 1);
  CHECK(topology.link_count() == 8);
  const tenet::NodeId sw = topology.find_switch("sw");
  REQUIRE(sw == 3);
  CHECK(topology.link(topology.find_link(0, 1)).bandwidth_GBps == 25);
  CHECK(topology.link(topology.find_link(1, 0)).bandwidth_GBps == 25);
  CHECK(topology.link(topology.find_link(0, sw)).latency_us == 1.5);
  CHECK(topology.link(topology.find_link(2, sw)).latency_us == 0);
  CHECK(topology.link(topology.find_link(sw, 2)).latency_us == 3);
  CHECK(topology.ingress_bandwidth_GBps(2) == 100);
}

TEST_CASE("writing and reading a topology gives the same links", "[topology_json]") {
  const tenet::Topology original = parse_topology(R"({"npus": 3, "switches": ["s"], "links": [
      {"src": 0, "dst": 1, "bandwidth_GBps": 10}, {"src": 1, "dst": 2, "bidirectional": false},
      {"src": 2, "dst": "s", "latency_us": 2}, {"src": 0, "dst": "s"}, {"src": "s", "dst": 1, "bidirectional": false}]})",
                                                  "t.json");
  const tenet::Topology reread = parse_topology(tenet::topology_to_text(original), "round.json");
  REQUIRE(reread.link_count() == original.link_count());
  CHECK(reread.npu_count() == original.npu_count());
  CHECK(reread.switch_names() == original.switch_names());
  for (const tenet::Link& link : original.links()) {
    tenet::LinkId id = reread.find_link(link.src, link.dst);
    REQUIRE(id != tenet::kNoLink);
    CHECK(reread.link(id).latency_us == link.latency_us);
    CHECK(reread.link(id).bandwidth_GBps == link.bandwidth_GBps);
  }
}

TEST_CASE("a layout is kept only when the links form that grid", "[topology_json]") {
  auto with_layout = [](const std::string& layout) {
    return std::string(R"({"npus": 4, "layout": )") + layout + R"(, "links": [
      {"src": 0, "dst": 1}, {"src": 1, "dst": 2}, {"src": 2, "dst": 3}, {"src": 3, "dst": 0}]})";
  };
  CHECK(parse_topology(with_layout(R"({"kind": "torus", "dims": [4]})"), "t.json").layout.describe() == "torus 4");
  CHECK(rejection(with_layout(R"({"kind": "torus", "dims": [2, 2]})")) ==
        "error: t.json: /layout: the links do not form a torus 2x2: link 0 -> 2 is missing");
  CHECK(rejection(with_layout(R"({"kind": "mesh", "dims": [4]})")) ==
        "error: t.json: /layout: the links do not form a mesh 4: the file has 8 directed links, the grid 6");
  CHECK(rejection(with_layout(R"({"kind": "ring", "dims": [5]})")) ==
        "error: t.json: /layout/kind: must be \"torus\" or \"mesh\"");
  CHECK(rejection(with_layout(R"({"kind": "mesh", "dims": [5]})")) ==
        "error: t.json: /layout/dims: the dimensions hold 5 NPUs but the file has 4");
}

TEST_CASE("failures remove NPUs and links and keep the original ids", "[topology_json]") {
  const tenet::Topology topology = parse_topology(R"({"npus": 5, "links": [
      {"src": 0, "dst": 1}, {"src": 1, "dst": 2}, {"src": 2, "dst": 3}, {"src": 3, "dst": 4}, {"src": 4, "dst": 0},
      {"src": 0, "dst": 2}],
      "failed": {"npus": [1], "links": [[0, 2]]}})",
                                                  "t.json");
  REQUIRE(topology.npu_count() == 4);
  CHECK(topology.original_npu_id(0) == 0);
  CHECK(topology.original_npu_id(1) == 2);
  CHECK(topology.original_npu_id(3) == 4);
  CHECK(topology.link_count() == 6);
  CHECK_FALSE(topology.has_link(0, 1));  // 0 -> 2 (original) failed
}

TEST_CASE("bad topology files are rejected with every problem named", "[topology_json]") {
  SECTION("not JSON") {
    CHECK(rejection(R"({"npus": 4, "links": [)") ==
          "error: t.json: invalid JSON: parse error at line 1, column 23: syntax error while parsing value - "
          "unexpected end of input; expected '[', '{', or a literal");
    CHECK(rejection("") ==
          "error: t.json: invalid JSON: parse error at line 1, column 1: syntax error while parsing value - "
          "unexpected end of input; expected '[', '{', or a literal");
    CHECK(rejection("[1, 2]") == "error: t.json: a topology file must hold a JSON object (got an array)");
  }
  SECTION("pathological nesting does not crash") {
    std::string deep(100000, '[');
    CHECK(rejection(deep) == "error: t.json: JSON nested deeper than 64 levels; a topology file needs far fewer");
    std::string balanced = std::string(100000, '[') + std::string(100000, ']');
    CHECK(rejection(balanced) == "error: t.json: JSON nested deeper than 64 levels; a topology file needs far fewer");
  }
  SECTION("missing and mistyped top-level fields") {
    CHECK(rejection("{}") ==
          "error: t.json: /npus: missing: the number of NPUs (an integer >= 2)\n"
          "error: t.json: missing 'links' (or a 'generator' in their place)");
    CHECK(rejection(R"({"npus": "4", "links": []})") ==
          "error: t.json: /npus: must be an integer from 2 to 1048576 (got a string)");
    CHECK(rejection(R"({"npus": 2.5, "links": []})") ==
          "error: t.json: /npus: must be an integer from 2 to 1048576 (got the number 2.5)");
    CHECK(rejection(R"({"npus": 0, "links": []})") ==
          "error: t.json: /npus: must be an integer from 2 to 1048576 (got the integer 0)");
    CHECK(rejection(R"({"npus": 1000000000000, "links": []})") ==
          "error: t.json: /npus: must be an integer from 2 to 1048576 (got the integer 1000000000000)");
    CHECK(rejection(R"({"npus": 4, "link": []})") ==
          "error: t.json: /link: unknown field 'link' (did you mean 'links'?)\n"
          "error: t.json: missing 'links' (or a 'generator' in their place)");
    CHECK(rejection(R"({"npus": 4, "links": {}})") ==
          "error: t.json: /links: must be an array of links (got an object)");
  }
  SECTION("bad links") {
    CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 1, "bandwidth_GBps": 0}]})") ==
          "error: t.json: /links/0/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got the integer 0)");
    CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 1, "bandwidth_GBps": -5}]})")
              .find("/links/0/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got the integer -5)") !=
          std::string::npos);
    CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 1, "bandwidth_GBps": "NaN"}]})")
              .find("/links/0/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got a string)") !=
          std::string::npos);
    CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 1, "latency_us": -0.5}]})")
              .find("/links/0/latency_us: must be a latency from 0 to 1e6 microseconds (got the number -0.5)") !=
          std::string::npos);
    CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 2}, {"src": 1.5, "dst": 0}]})") ==
          "error: t.json: /links/0/dst: must be an integer from 0 to 1 (got the integer 2)\n"
          "error: t.json: /links/1/src: must be an integer from 0 to 1 (got the number 1.5)");
    CHECK(
        rejection(
            R"({"npus": 2, "switches": ["leaf0"], "links": [{"src": 0, "dst": "leaf1"}, {"src": 1, "dst": "leaf0"}]})")
            .find("/links/0/dst: unknown switch 'leaf1' (did you mean 'leaf0'?)") != std::string::npos);
    CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 0}, {"src": 0, "dst": 1}]})") ==
          "error: t.json: /links/0: a link from NPU 0 to itself (self-loops are not allowed)");
    CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 1}, {"src": 1, "dst": 0, "bidirectional": false}]})") ==
          "error: t.json: /links/1: duplicate link NPU 1 -> NPU 0 (also defined at /links/0)");
    CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 1, "speed": 4}]})") ==
          "error: t.json: /links/0/speed: unknown field 'speed'");
    CHECK(rejection(R"({"npus": 2, "links": [{"dst": 1}]})") ==
          "error: t.json: /links/0: missing 'src' (an NPU id or a switch name)");
  }
  SECTION("NPUs without links, unreachable NPUs, useless switches") {
    CHECK(rejection(R"({"npus": 4, "links": [{"src": 0, "dst": 1}, {"src": 1, "dst": 2}]})") ==
          "error: t.json: /links: NPU 3 has no links");
    CHECK(rejection(R"({"npus": 4, "links": [{"src": 0, "dst": 1}, {"src": 2, "dst": 3}]})") ==
          "error: t.json: /links: NPU 0 cannot reach NPU 2 (every NPU must reach every other over directed links)");
    CHECK(rejection(R"({"npus": 3, "links": [{"src": 0, "dst": 1, "bidirectional": false},
                                           {"src": 1, "dst": 2, "bidirectional": false}]})") ==
          "error: t.json: /links: NPU 1 cannot reach NPU 0 (every NPU must reach every other over directed links)");
    CHECK(
        rejection(R"({"npus": 2, "switches": ["a", "b"], "links": [{"src": 0, "dst": 1}, {"src": 0, "dst": "a"}]})") ==
        "error: t.json: /switches/0: switch 'a' is linked only to NPU 0; a switch forwards between at least two "
        "nodes and is never a data endpoint\n"
        "error: t.json: /switches/1: switch 'b' has no links");
    CHECK(rejection(R"({"npus": 2, "switches": ["a", "a"], "links": [{"src": 0, "dst": 1}]})")
              .find("/switches/1: duplicate switch name 'a' (also at /switches/0)") != std::string::npos);
  }
  SECTION("bad failures") {
    CHECK(rejection(std::string(kSquare).insert(1, R"("failed": {"npus": [4]}, )")) ==
          "error: t.json: /failed/npus/0: must be an integer from 0 to 3 (got the integer 4)");
    CHECK(rejection(std::string(kSquare).insert(1, R"("failed": {"links": [[0, 2]]}, )")) ==
          "error: t.json: /failed/links/0: there is no link between NPU 0 and NPU 2");
    CHECK(rejection(std::string(kSquare).insert(1, R"("failed": {"npus": ["sw"]}, )")) ==
          "error: t.json: /failed/npus/0: 'sw' is not an NPU id; to fail a switch, list its links in /failed/links");
    CHECK(rejection(std::string(kSquare).insert(1, R"("failed": {"npus": [0, 1, 2]}, )")) ==
          "error: t.json: /failed/npus: only 1 NPU survives the failures; a collective needs at least 2");
    CHECK(rejection(std::string(kSquare).insert(1, R"("failed": {"npus": [1, 3]}, )"))
              .find("/failed: after the failures NPU 0 cannot reach NPU 2") != std::string::npos);
  }
}

TEST_CASE("link attributes are bounded so that every derived time is finite", "[topology_json]") {
  // 1e307 GB/s overflowed bytes per microsecond to infinity (simulations never ended); 1e-308 GB/s
  // and 1e308 us made times infinite (an internal error).
  CHECK(
      rejection(
          R"({"npus": 3, "defaults": {"bandwidth_GBps": 1e307}, "links": [{"src": 0, "dst": 1}, {"src": 1, "dst": 2}]})") ==
      "error: t.json: /defaults/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got the number 1e+307)");
  CHECK(rejection(R"({"npus": 3, "links": [{"src": 0, "dst": 1},
                                           {"src": 1, "dst": 2, "bandwidth_GBps": 1e-308, "latency_us": 1e308}]})") ==
        "error: t.json: /links/1/latency_us: must be a latency from 0 to 1e6 microseconds (got the number 1e+308)\n"
        "error: t.json: /links/1/bandwidth_GBps: must be a bandwidth from 1e-6 to 1e6 GB/s (got the number 1e-308)");
  const tenet::Topology extremes = parse_topology(R"({"npus": 2, "links": [
      {"src": 0, "dst": 1, "bandwidth_GBps": 1e-6, "latency_us": 1e6, "bidirectional": false},
      {"src": 1, "dst": 0, "bandwidth_GBps": 1e6, "latency_us": -0.0, "bidirectional": false}]})",
                                                  "t.json");
  CHECK(extremes.link(0).bandwidth_GBps == 1e-6);
  CHECK(extremes.link(1).bandwidth_GBps == 1e6);
  CHECK(!std::signbit(extremes.link(1).latency_us));
  CHECK(rejection(R"({"npus": 4, "generator": {"kind": "torus", "dims": [2, 2], "bandwidth_GBps": [50, 1e7]}})") ==
        "error: t.json: /generator/bandwidth_GBps/1: must be a bandwidth from 1e-6 to 1e6 GB/s (got 10000000.0)");
}

TEST_CASE("numbers beyond a double are refused at their JSON pointer", "[topology_json]") {
  // nlohmann throws out_of_range for them, which used to end as an internal error.
  CHECK(rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 1, "latency_us": 1e400}]})") ==
        "error: t.json: /links/0/latency_us: the number 1e400 is out of range (JSON numbers must fit a double: at "
        "most about 1.8e308)");
  CHECK(rejection(R"({"npus": )" + std::string(100000, '9') + R"(, "links": []})") ==
        "error: t.json: /npus: the number 99999999999999999999... (100000 characters) is out of range (JSON numbers "
        "must fit a double: at most about 1.8e308)");
  CHECK(
      rejection(R"({"npus": 2, "links": [{"src": 0, "dst": 1}], "failed": {"npus": [-1e999]}})") ==
      "error: t.json: /failed/npus/0: the number -1e999 is out of range (JSON numbers must fit a double: at most about "
      "1.8e308)");
  CHECK(rejection("1e400") ==
        "error: t.json: the number 1e400 is out of range (JSON numbers must fit a double: at most about 1.8e308)");
}

TEST_CASE("a NUL byte is refused, not taken for the end of the file", "[topology_json]") {
  const std::string square(kSquare);
  CHECK(rejection(square + std::string("\0garbage", 8)) ==
        "error: t.json: invalid JSON: a NUL byte at line 2, column 91; a JSON file is text, and nothing may follow its "
        "value");
  CHECK(rejection(std::string("{\"npus\": 4,\n\0}", 14)) ==
        "error: t.json: invalid JSON: a NUL byte at line 2, column 1; a JSON file is text, and nothing may follow its "
        "value");
}

TEST_CASE("a schedule or an MSCCL file given as the topology is named for what it is", "[topology_json]") {
  CHECK(rejection(
            R"({"format": "tenet-schedule", "version": 1, "topology": "torus-4x4", "npus": 16, "transfers": []})") ==
        "error: t.json: /format: this is a schedule file (made for topology 'torus-4x4'), not a topology");
  CHECK(rejection(R"({"format": "tenet-schedule"})") ==
        "error: t.json: /format: this is a schedule file, not a topology");
  CHECK(rejection("\n  <algo name=\"x\"></algo>") ==
        "error: t.json: invalid JSON: the file is XML (an MSCCL algorithm?), not JSON");
}

TEST_CASE("a file with thousands of problems lists the first 20 and counts the rest", "[topology_json]") {
  std::string links = R"({"src": 0, "dst": 1})";
  for (int i = 0; i < 1000; ++i) links += R"(, {"src": 0, "dst": 1})";
  const std::string message = rejection(R"({"npus": 2, "links": [)" + links + "]}");
  CHECK(std::count(message.begin(), message.end(), '\n') == 20);
  CHECK(message.substr(0, message.find('\n')) ==
        "error: t.json: /links/1: duplicate link NPU 0 -> NPU 1 (also defined at /links/0)");
  CHECK(message.substr(message.rfind('\n') + 1) ==
        "error: t.json: 1980 more problems not listed; fix the ones above first");
}

TEST_CASE("a generator that would build another NPU count is refused before it builds", "[topology_json]") {
  // 2^20 NPUs and 4 million links would take seconds and hundreds of megabytes to build first.
  CHECK(rejection(R"({"npus": 16, "generator": {"kind": "torus", "dims": [1024, 1024]}})") ==
        "error: t.json: /npus: 16 does not match the 1048576 NPUs the generator builds");
}

TEST_CASE("a topology with failures, written out, keeps the NPUs' original ids", "[topology_json]") {
  const tenet::Topology failed = tenet::load_topology(TENET_SOURCE_DIR "/topologies/mesh-4x4-failed-7-9.json");
  const std::string text = tenet::topology_to_text(failed);
  CHECK(text.find("\"original_npu_ids\": [0,1,2,3,4,5,6,8,10,11,12,13,14,15],\n") != std::string::npos);
  const tenet::Topology again = parse_topology(text, "written.json");
  CHECK(again.original_npu_ids == failed.original_npu_ids);
  CHECK(again.fingerprint() == failed.fingerprint());

  CHECK(rejection(R"({"npus": 2, "original_npu_ids": [4, 4], "links": [{"src": 0, "dst": 1}]})") ==
        "error: t.json: /original_npu_ids/1: NPU id 4 is listed twice");
  CHECK(rejection(R"({"npus": 2, "original_npu_ids": [4], "links": [{"src": 0, "dst": 1}]})") ==
        "error: t.json: /original_npu_ids: must be an array of 2 distinct NPU ids, one per NPU (got an array)");
  CHECK(rejection(R"({"npus": 3, "original_npu_ids": [0, 1, 2], "failed": {"npus": [2]},
    "links": [{"src": 0, "dst": 1}, {"src": 1, "dst": 2}]})") ==
        "error: t.json: /original_npu_ids: not allowed with 'failed': failures renumber NPUs themselves");
}

TEST_CASE("a topology file without a name is named by its file", "[topology_json]") {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("tenet-name-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const std::filesystem::path unnamed = folder / "my-cluster.json";
  const std::filesystem::path named = folder / "other.json";
  std::ofstream(unnamed) << kSquare;
  std::ofstream(named) << R"({"name": "square", "npus": 2, "links": [{"src": 0, "dst": 1}]})";
  CHECK(tenet::load_topology(unnamed.string()).name == "my-cluster");
  CHECK(tenet::load_topology(named.string()).name == "square");
  // From text alone there is no file to name it by.
  CHECK(parse_topology(kSquare, "t.json").name.empty());
  std::filesystem::remove_all(folder);
}
