// SPDX-License-Identifier: MIT
// Dispatch for the topology generators: finds the kind, rejects parameters it does not take, and
// hands the object to the kind's builder (generators_grids.cpp, generators_switched.cpp,
// generators_random.cpp).

#include "tenet/topology/generators.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "generator_params.hpp"

namespace tenet {
namespace {

using generator_detail::ParamReader;

struct GeneratorSpec {
  std::string kind;
  /// Parameters besides kind, bandwidth_GBps and latency_us.
  std::vector<std::string> params;
  Topology (*build)(ParamReader&);
};

const std::vector<GeneratorSpec>& specs() {
  using namespace generator_detail;
  static const std::vector<GeneratorSpec> table{
      {"ring", {"npus", "bidirectional"}, build_ring},
      {"fully_connected", {"npus"}, build_fully_connected},
      {"mesh", {"dims"}, build_mesh},
      {"torus", {"dims"}, build_torus},
      {"hypercube", {"dimension"}, build_hypercube},
      {"hypercube_3d", {"dims"}, build_hypercube_3d},
      {"switch", {"npus"}, build_switch},
      {"two_level_switch", {"dims"}, build_two_level_switch},
      {"ring_fc_switch", {"dims"}, build_ring_fc_switch},
      {"dragonfly", {"dims"}, build_dragonfly},
      {"hammingmesh", {"board", "dims"}, build_hammingmesh},
      {"hyperx", {"dims"}, build_hyperx},
      {"fat_tree", {"dims", "spines"}, build_fat_tree},
      {"tree", {"fanout"}, build_tree},
      {"random", {"npus", "degree", "seed", "switches", "heterogeneous"}, build_random},
  };
  return table;
}

std::string known_kinds_text() {
  std::string text;
  for (const std::string& kind : generator_kinds()) text += (text.empty() ? "" : ", ") + kind;
  return text;
}

std::string render(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

}  // namespace

const std::vector<std::string>& generator_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> names;
    for (const GeneratorSpec& spec : specs()) names.push_back(spec.kind);
    return names;
  }();
  return kinds;
}

Topology generate_topology(const nlohmann::json& generator, const LinkDefaults& defaults, const std::string& source,
                           const std::string& pointer, std::optional<std::uint64_t> expected_npus) {
  if (!generator.is_object()) {
    throw InputError(
        source, pointer,
        "must be an object such as {\"kind\": \"torus\", \"dims\": [4, 4]} (got " + render(generator) + ")");
  }
  auto kind_it = generator.find("kind");
  if (kind_it == generator.end() || !kind_it->is_string()) {
    const std::string got = kind_it == generator.end() ? "missing" : "got " + render(*kind_it);
    throw InputError(source, pointer + "/kind",
                     "must name a generator (" + got + "); known kinds: " + known_kinds_text());
  }
  // "ring-fc-switch" as the papers write it is the same kind as "ring_fc_switch".
  std::string kind = kind_it->get<std::string>();
  std::replace(kind.begin(), kind.end(), '-', '_');
  auto spec = std::find_if(specs().begin(), specs().end(), [&](const GeneratorSpec& s) { return s.kind == kind; });
  if (spec == specs().end()) {
    std::string message = "unknown generator '" + kind + "'";
    const std::string suggestion = closest_match(kind, generator_kinds());
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    throw InputError(source, pointer + "/kind", message + "; known kinds: " + known_kinds_text());
  }
  ProblemList problems(source);
  ParamReader reader(generator, spec->kind, spec->params, pointer, defaults, problems);
  if (expected_npus) reader.expect_npus(*expected_npus);
  reader.reject_unknown_params();
  return spec->build(reader);
}

}  // namespace tenet
