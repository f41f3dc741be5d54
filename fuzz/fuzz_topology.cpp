// SPDX-License-Identifier: MIT
// libFuzzer harness for the topology reader (parse_topology: what every -t FILE goes through).
// Any input must either load or be refused with an InputError; another exception, a sanitizer
// report, a hang or running out of memory is a bug. A topology that loads must also survive the
// file format's round trip: written and read back, it has the same NPUs, switches and links.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "tenet/common/error.hpp"
#include "tenet/topology/topology_json.hpp"

namespace {

void require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz_topology: %s\n", what);
  std::abort();
}

/// Generators may legally build 2^20 NPUs and 2^26 links from a few bytes, which takes gigabytes
/// and seconds under ASan: the fuzzer's own limits would report those, not tenet. So generated
/// networks are fuzzed up to 1024 NPUs (the reader refuses a generator that would build a
/// different count than "npus" before building it).
bool generates_too_much(const std::string& text) {
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, false);
  if (!root.is_object() || !root.contains("generator") || !root.contains("npus")) return false;
  const nlohmann::json& npus = root["npus"];
  return !npus.is_number() || npus.get<double>() > 1024;
}

void check_round_trip(const tenet::Topology& topology) {
  const tenet::Topology reread = tenet::parse_topology(tenet::topology_to_text(topology), "round-trip.json");
  require(reread.npu_count() == topology.npu_count(), "round trip changed the NPU count");
  require(reread.switch_names() == topology.switch_names(), "round trip changed the switches");
  require(reread.link_count() == topology.link_count(), "round trip changed the link count");
  for (const tenet::Link& link : topology.links()) {
    const tenet::LinkId id = reread.find_link(link.src, link.dst);
    require(id != tenet::kNoLink, "round trip lost a link");
    require(reread.link(id).latency_us == link.latency_us, "round trip changed a latency");
    require(reread.link(id).bandwidth_GBps == link.bandwidth_GBps, "round trip changed a bandwidth");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (generates_too_much(text)) return 0;
  try {
    check_round_trip(tenet::parse_topology(text, "fuzz.json"));
  } catch (const tenet::InputError&) {
  }
  return 0;
}
