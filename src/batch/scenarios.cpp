// SPDX-License-Identifier: MIT
#include "tenet/batch/scenario.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "../topology/json_fields.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/random.hpp"
#include "tenet/topology/topology_json.hpp"

namespace tenet {
namespace {

using nlohmann::json;

/// Every cable once: node pairs (lower id first) joined by a link in at least one direction, in
/// ascending order, so "all-links" and random picks are reproducible.
std::vector<std::pair<NodeId, NodeId>> cables_of(const Topology& topology) {
  std::vector<std::pair<NodeId, NodeId>> cables;
  cables.reserve(topology.link_count());
  for (const Link& link : topology.links())
    cables.emplace_back(std::min(link.src, link.dst), std::max(link.src, link.dst));
  std::sort(cables.begin(), cables.end());
  cables.erase(std::unique(cables.begin(), cables.end()), cables.end());
  return cables;
}

/// K distinct indices below `count`, ascending: a partial Fisher-Yates over an index list.
std::vector<std::size_t> pick_distinct(std::size_t count, std::size_t k, Rng& rng) {
  std::vector<std::size_t> pool(count);
  for (std::size_t i = 0; i < count; ++i) pool[i] = i;
  for (std::size_t i = 0; i < k; ++i) std::swap(pool[i], pool[i + rng.below(count - i)]);
  pool.resize(k);
  std::sort(pool.begin(), pool.end());
  return pool;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == separator) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

std::uint64_t parse_count(const std::string& text, const std::string& what, const std::string& option,
                          const std::string& spec) {
  bool digits = !text.empty() && text.size() <= 9;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (!digits) {
    throw InputError("", option, "'" + spec + "': " + what + " must be a whole number (got '" + text + "')");
  }
  return std::stoull(text);
}

std::string cable_label(const Topology& topology, const std::pair<NodeId, NodeId>& cable) {
  return scenario_node_label(topology, cable.first) + "-" + scenario_node_label(topology, cable.second);
}

std::vector<Scenario> random_scenarios(const std::string& spec, const Topology& topology, const std::string& option,
                                       bool npus) {
  const std::vector<std::string> parts = split(spec, ':');
  if (parts.size() < 3 || parts.size() > 4) {
    throw InputError("", option, "'" + spec + "': expected " + parts[0] + ":K:M[:SEED]");
  }
  const std::uint64_t k = parse_count(parts[1], "K (failures per scenario)", option, spec);
  const std::uint64_t m = parse_count(parts[2], "M (scenarios)", option, spec);
  const std::uint64_t seed = parts.size() == 4 ? parse_count(parts[3], "SEED", option, spec) : 1;
  const std::vector<std::pair<NodeId, NodeId>> cables =
      npus ? std::vector<std::pair<NodeId, NodeId>>{} : cables_of(topology);
  const std::uint64_t available = npus ? topology.npu_count() : cables.size();
  if (k < 1 || k > available) {
    throw InputError("", option,
                     "'" + spec + "': K must be from 1 to " + std::to_string(available) + " (the " +
                         (npus ? "NPUs" : "cables") + " of the topology)");
  }
  if (m < 1 || m > 100000) throw InputError("", option, "'" + spec + "': M must be from 1 to 100000");
  std::vector<Scenario> scenarios;
  for (std::uint64_t index = 0; index < m; ++index) {
    // One stream per scenario: scenario i is the same whatever M is.
    Rng rng(mix_seed(mix_seed(seed, npus ? 2 : 1), index));
    Scenario scenario;
    scenario.name = std::string(npus ? "random-npus-" : "random-links-") + std::to_string(index);
    for (std::size_t pick : pick_distinct(available, k, rng)) {
      if (npus) {
        scenario.failed_npus.push_back(static_cast<NodeId>(pick));
      } else {
        scenario.failed_cables.push_back(cables[pick]);
      }
    }
    scenarios.push_back(std::move(scenario));
  }
  return scenarios;
}

std::vector<Scenario> file_scenarios(const std::string& path, const Topology& topology) {
  const json root = parse_json_text(read_file(path), path);
  ProblemList problems(path);
  if (!root.is_object() || !root.contains("scenarios") || !root["scenarios"].is_array()) {
    throw InputError(path, "/scenarios", "missing: a scenario file holds {\"scenarios\": [...]}");
  }
  json_fields::reject_unknown_keys(root, "", {"scenarios", "comment"}, problems);
  // Users write NPUs by their ids in the topology file; the loaded topology may have renumbered.
  std::map<NodeId, NodeId> current_of;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) current_of.emplace(topology.original_npu_id(npu), npu);
  auto read_node = [&](const json& value, const std::string& pointer) -> std::optional<NodeId> {
    if (value.is_string()) {
      NodeId node = topology.find_switch(value.get<std::string>());
      if (node == kNoNode) problems.add(pointer, "unknown switch '" + value.get<std::string>() + "'");
      return node == kNoNode ? std::nullopt : std::optional<NodeId>(node);
    }
    auto id = json_fields::read_integer(value, pointer, 0, INT32_MAX, problems);
    if (!id) return std::nullopt;
    auto found = current_of.find(static_cast<NodeId>(*id));
    if (found == current_of.end()) {
      problems.add(pointer, "there is no NPU " + std::to_string(*id) + " in the topology");
      return std::nullopt;
    }
    return found->second;
  };
  std::vector<Scenario> scenarios;
  std::set<std::string> names;
  const json& list = root["scenarios"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "/scenarios/" + std::to_string(i);
    const json& entry = list[i];
    if (!entry.is_object()) {
      problems.add(at, "must be an object with name and failed");
      continue;
    }
    json_fields::reject_unknown_keys(entry, at, {"name", "failed", "members", "comment"}, problems);
    Scenario scenario;
    if (entry.contains("name"))
      scenario.name = json_fields::read_string(entry["name"], at + "/name", problems).value_or("");
    if (scenario.name.empty()) scenario.name = "scenario-" + std::to_string(i);
    if (scenario.name == "healthy" || !names.insert(scenario.name).second) {
      problems.add(at + "/name", "'" + scenario.name + "' is used twice (\"healthy\" is the reference row's name)");
    }
    if (entry.contains("failed")) {
      const json& failed = entry["failed"];
      json_fields::reject_unknown_keys(failed, at + "/failed", {"npus", "links"}, problems);
      if (failed.contains("npus") && failed["npus"].is_array()) {
        for (std::size_t j = 0; j < failed["npus"].size(); ++j) {
          const std::string pointer = at + "/failed/npus/" + std::to_string(j);
          if (failed["npus"][j].is_string()) {
            problems.add(pointer, "a switch cannot fail as an NPU; list its cables in failed/links");
          } else if (auto node = read_node(failed["npus"][j], pointer)) {
            if (std::find(scenario.failed_npus.begin(), scenario.failed_npus.end(), *node) !=
                scenario.failed_npus.end()) {
              problems.add(pointer, "NPU " + failed["npus"][j].dump() + " is listed twice");
            } else {
              scenario.failed_npus.push_back(*node);
            }
          }
        }
      }
      if (failed.contains("links") && failed["links"].is_array()) {
        for (std::size_t j = 0; j < failed["links"].size(); ++j) {
          const std::string pointer = at + "/failed/links/" + std::to_string(j);
          const json& pair = failed["links"][j];
          if (!pair.is_array() || pair.size() != 2) {
            problems.add(pointer, "must be a [src, dst] pair");
            continue;
          }
          auto a = read_node(pair[0], pointer + "/0");
          auto b = read_node(pair[1], pointer + "/1");
          if (!a || !b) continue;
          // As in a topology file's failed links: a cable that is not there is a typo, not a no-op.
          if (!topology.has_link(*a, *b) && !topology.has_link(*b, *a)) {
            problems.add(pointer,
                         "there is no link between " + pair[0].dump() + " and " + pair[1].dump() + " in the topology");
            continue;
          }
          const std::pair<NodeId, NodeId> cable(std::min(*a, *b), std::max(*a, *b));
          if (std::find(scenario.failed_cables.begin(), scenario.failed_cables.end(), cable) !=
              scenario.failed_cables.end()) {
            problems.add(pointer, "the link between " + pair[0].dump() + " and " + pair[1].dump() + " is listed twice");
            continue;
          }
          scenario.failed_cables.push_back(cable);
        }
      }
    }
    if (entry.contains("members")) {
      if (!entry["members"].is_array()) {
        problems.add(at + "/members", "must be an array of NPU ids");
      } else {
        for (std::size_t j = 0; j < entry["members"].size(); ++j) {
          const std::string pointer = at + "/members/" + std::to_string(j);
          if (entry["members"][j].is_string()) {
            problems.add(pointer, "switch '" + entry["members"][j].get<std::string>() +
                                      "' cannot be a member: only NPUs own data");
          } else if (auto node = read_node(entry["members"][j], pointer)) {
            if (std::find(scenario.members.begin(), scenario.members.end(), *node) != scenario.members.end()) {
              problems.add(pointer, "NPU " + entry["members"][j].dump() + " is listed twice");
            } else {
              scenario.members.push_back(*node);
            }
          }
        }
      }
    }
    scenarios.push_back(std::move(scenario));
  }
  problems.throw_if_any();
  return scenarios;
}

}  // namespace

std::string scenario_node_label(const Topology& topology, NodeId node) {
  return topology.is_npu(node) ? std::to_string(topology.original_npu_id(node)) : topology.switch_name(node);
}

std::vector<Scenario> make_scenarios(const std::string& spec, const Topology& topology, const std::string& option) {
  std::vector<Scenario> scenarios(1);
  scenarios[0].name = "healthy";
  if (spec == "all-npus") {
    for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
      Scenario scenario;
      scenario.name = "npu-" + std::to_string(topology.original_npu_id(npu));
      scenario.failed_npus.push_back(npu);
      scenarios.push_back(std::move(scenario));
    }
  } else if (spec == "all-links") {
    for (const auto& cable : cables_of(topology)) {
      Scenario scenario;
      scenario.name = "link-" + cable_label(topology, cable);
      scenario.failed_cables.push_back(cable);
      scenarios.push_back(std::move(scenario));
    }
  } else if (spec.rfind("random-links:", 0) == 0 || spec.rfind("random-npus:", 0) == 0) {
    std::vector<Scenario> random = random_scenarios(spec, topology, option, spec.rfind("random-npus:", 0) == 0);
    scenarios.insert(scenarios.end(), random.begin(), random.end());
  } else if (spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".json") == 0) {
    std::vector<Scenario> listed = file_scenarios(spec, topology);
    scenarios.insert(scenarios.end(), listed.begin(), listed.end());
  } else {
    std::string message = "unknown scenarios '" + spec + "'";
    const std::string suggestion = closest_match(spec, {"all-npus", "all-links"});
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    throw InputError("", option,
                     message +
                         "; expected all-npus, all-links, random-links:K:M[:SEED], "
                         "random-npus:K:M[:SEED] or a scenarios .json file");
  }
  return scenarios;
}

}  // namespace tenet
