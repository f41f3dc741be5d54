// SPDX-License-Identifier: MIT
// The table of baselines: name -> generator. Each generator lives in its own file (which cites its
// paper); this file only knows their names and the checks every baseline shares.

#include <algorithm>
#include <utility>

#include "builder.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/common/error.hpp"

namespace tenet::baselines {

// Defined in ring.cpp, direct.cpp, rhd.cpp.
BaselineResult generate_ring(const Topology& topology, const Collective& collective);
BaselineResult generate_direct(const Topology& topology, const Collective& collective);
BaselineResult generate_rhd(const Topology& topology, const Collective& collective);
// Defined in swing.cpp, bucket.cpp, circulant.cpp.
BaselineResult generate_swing(const Topology& topology, const Collective& collective);
BaselineResult generate_swing_latency(const Topology& topology, const Collective& collective);
BaselineResult generate_bucket(const Topology& topology, const Collective& collective);
BaselineResult generate_circulant(const Topology& topology, const Collective& collective);

namespace {

struct Entry {
  const char* name;
  BaselineGenerator generate;
};

/// In the order reports list them (baseline.hpp).
const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {"ring", &generate_ring},
      {"direct", &generate_direct},
      {"rhd", &generate_rhd},
      {"swing", &generate_swing},
      {"swing-latency", &generate_swing_latency},
      {"bucket", &generate_bucket},
      {"circulant", &generate_circulant},
  };
  return entries;
}

}  // namespace
}  // namespace tenet::baselines

namespace tenet {

const std::vector<std::string>& baseline_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const baselines::Entry& entry : baselines::table()) list.emplace_back(entry.name);
    return list;
  }();
  return names;
}

BaselineResult generate_baseline(const std::string& name, const Topology& topology, const Collective& collective,
                                 const std::string& option) {
  const auto& entries = baselines::table();
  const auto found =
      std::find_if(entries.begin(), entries.end(), [&](const baselines::Entry& entry) { return name == entry.name; });
  if (found == entries.end()) {
    std::string message = "unknown algorithm '";
    message += name;
    message += "'";
    const std::string suggestion = closest_match(name, baseline_names());
    if (!suggestion.empty()) {
      message += " (did you mean '";
      message += suggestion;
      message += "'?)";
    }
    message += "; expected one of:";
    for (const std::string& known : baseline_names()) {
      message += " ";
      message += known;
    }
    throw InputError("", option, message);
  }
  // A collective needs someone to exchange with; every baseline assumes at least two members.
  const std::size_t members = collective.members.empty() ? topology.npu_count() : collective.members.size();
  if (members < 2) {
    return baselines::not_applicable(std::string(found->name) + " needs at least 2 participating NPUs (got " +
                                     std::to_string(members) + ")");
  }
  return found->generate(topology, collective);
}

}  // namespace tenet
