// SPDX-License-Identifier: MIT
#include "tenet/topology/topology_json.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "json_fields.hpp"
#include "tenet/common/atomic_file.hpp"
#include "tenet/common/error.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/topology/grid_detection.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet {
namespace {

using nlohmann::json;
using namespace json_fields;

const std::vector<std::string> kTopLevelKeys = {"name",     "description", "defaults",        "npus",
                                                "switches", "links",       "generator",       "failed",
                                                "layout",   "comment",     "original_npu_ids"};
const std::vector<std::string> kLinkKeys = {"src", "dst", "bidirectional", "latency_us", "bandwidth_GBps", "comment"};
const std::vector<std::string> kDefaultsKeys = {"latency_us", "bandwidth_GBps"};
const std::vector<std::string> kFailedKeys = {"npus", "links"};
const std::vector<std::string> kLayoutKeys = {"kind", "dims"};

std::string pointer_at(const std::string& base, std::size_t index) { return base + "/" + std::to_string(index); }

/// Depth of the deepest nesting, counted without recursion so that hostile input cannot
/// exhaust the stack; stops counting past the limit.
int nesting_depth(const std::string& text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > kMaxJsonDepth) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

/// A link endpoint: an NPU id (integer) or a switch name (string).
struct EndpointReader {
  std::uint32_t npus;
  const std::map<std::string, NodeId>& switch_ids;
  const std::vector<std::string>& switch_names;

  std::optional<NodeId> read(const json& value, const std::string& pointer, ProblemList& problems) const {
    if (value.is_string()) {
      const std::string name = value.get<std::string>();
      auto it = switch_ids.find(name);
      if (it != switch_ids.end()) return it->second;
      std::string message = "unknown switch '" + name + "'";
      std::string suggestion = closest_match(name, switch_names);
      if (!suggestion.empty()) {
        message += " (did you mean '" + suggestion + "'?)";
      } else {
        message += switch_names.empty() ? " (the file declares no switches)" : " (declared in /switches)";
      }
      problems.add(pointer, message);
      return std::nullopt;
    }
    if (value.is_number() || value.is_boolean() || value.is_null() || value.is_object() || value.is_array()) {
      if (value.is_number() && npus > 0) {
        auto id = read_integer(value, pointer, 0, static_cast<std::int64_t>(npus) - 1, problems);
        if (id) return static_cast<NodeId>(*id);
        return std::nullopt;
      }
    }
    problems.add(pointer, "must be an NPU id (an integer from 0 to " + std::to_string(npus == 0 ? 0 : npus - 1) +
                              ") or a switch name (got " + describe_type(value) + ")");
    return std::nullopt;
  }
};

LinkDefaults read_defaults(const json& root, ProblemList& problems) {
  LinkDefaults defaults;
  if (!root.contains("defaults")) return defaults;
  const json& object = root["defaults"];
  if (!object.is_object()) {
    problems.add("/defaults",
                 "must be an object with latency_us and bandwidth_GBps (got " + describe_type(object) + ")");
    return defaults;
  }
  reject_unknown_keys(object, "/defaults", kDefaultsKeys, problems);
  if (object.contains("latency_us")) {
    if (auto value = read_latency(object["latency_us"], "/defaults/latency_us", problems)) defaults.latency_us = *value;
  }
  if (object.contains("bandwidth_GBps")) {
    if (auto value = read_bandwidth(object["bandwidth_GBps"], "/defaults/bandwidth_GBps", problems)) {
      defaults.bandwidth_GBps = *value;
    }
  }
  return defaults;
}

std::vector<std::string> read_switch_names(const json& root, ProblemList& problems) {
  std::vector<std::string> names;
  if (!root.contains("switches")) return names;
  const json& list = root["switches"];
  if (!list.is_array()) {
    problems.add("/switches", "must be an array of switch names (got " + describe_type(list) + ")");
    return names;
  }
  if (list.size() > kMaxSwitches) {
    problems.add("/switches", std::to_string(list.size()) + " switches is more than tenet supports (at most " +
                                  std::to_string(kMaxSwitches) + ")");
    return names;
  }
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto name = read_string(list[i], pointer_at("/switches", i), problems);
    if (!name) continue;
    if (name->empty()) {
      problems.add(pointer_at("/switches", i), "a switch name must not be empty");
    } else if (auto [it, inserted] = seen.emplace(*name, i); !inserted) {
      problems.add(pointer_at("/switches", i),
                   "duplicate switch name '" + *name + "' (also at /switches/" + std::to_string(it->second) + ")");
    }
    names.push_back(*name);
  }
  return names;
}

void read_links(const json& list, const LinkDefaults& defaults, const EndpointReader& endpoints, Topology& topology,
                ProblemList& problems) {
  if (!list.is_array()) {
    problems.add("/links", "must be an array of links (got " + describe_type(list) + ")");
    return;
  }
  if (list.size() > kMaxLinks / 2) {
    problems.add("/links", std::to_string(list.size()) + " links is more than tenet supports (at most " +
                               std::to_string(kMaxLinks / 2) + " entries)");
    return;
  }
  // Where each directed link was first defined, to name both places of a duplicate.
  std::unordered_map<std::uint64_t, std::size_t> defined_at;
  defined_at.reserve(list.size() * 2);
  auto add_directed = [&](NodeId src, NodeId dst, double latency, double bandwidth, std::size_t index) {
    std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
    auto [it, inserted] = defined_at.emplace(key, index);
    if (!inserted) {
      problems.add(pointer_at("/links", index), "duplicate link " + topology.node_label(src) + " -> " +
                                                    topology.node_label(dst) + " (also defined at /links/" +
                                                    std::to_string(it->second) + ")");
      return;
    }
    topology.add_link({src, dst, latency, bandwidth});
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = pointer_at("/links", i);
    const json& entry = list[i];
    if (!entry.is_object()) {
      problems.add(at, "must be an object with src and dst (got " + describe_type(entry) + ")");
      continue;
    }
    reject_unknown_keys(entry, at, kLinkKeys, problems);
    std::optional<NodeId> src;
    std::optional<NodeId> dst;
    if (entry.contains("src")) {
      src = endpoints.read(entry["src"], at + "/src", problems);
    } else {
      problems.add(at, "missing 'src' (an NPU id or a switch name)");
    }
    if (entry.contains("dst")) {
      dst = endpoints.read(entry["dst"], at + "/dst", problems);
    } else {
      problems.add(at, "missing 'dst' (an NPU id or a switch name)");
    }
    std::optional<double> latency = defaults.latency_us;
    std::optional<double> bandwidth = defaults.bandwidth_GBps;
    std::optional<bool> bidirectional = true;
    if (entry.contains("latency_us")) latency = read_latency(entry["latency_us"], at + "/latency_us", problems);
    if (entry.contains("bandwidth_GBps")) {
      bandwidth = read_bandwidth(entry["bandwidth_GBps"], at + "/bandwidth_GBps", problems);
    }
    if (entry.contains("bidirectional"))
      bidirectional = read_bool(entry["bidirectional"], at + "/bidirectional", problems);
    if (!src || !dst || !latency || !bandwidth || !bidirectional) continue;
    if (*src == *dst) {
      problems.add(at, "a link from " + topology.node_label(*src) + " to itself (self-loops are not allowed)");
      continue;
    }
    add_directed(*src, *dst, *latency, *bandwidth, i);
    if (*bidirectional) add_directed(*dst, *src, *latency, *bandwidth, i);
  }
}

/// Nodes that no link touches, and switches that join fewer than two distinct nodes.
void check_attachment(const Topology& topology, ProblemList& problems) {
  constexpr std::size_t kListed = 8;
  std::vector<NodeId> isolated;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    if (topology.in_degree(npu) + topology.out_degree(npu) == 0) isolated.push_back(npu);
  }
  if (!isolated.empty()) {
    std::string message = isolated.size() == 1 ? "NPU " : "NPUs ";
    for (std::size_t i = 0; i < std::min(isolated.size(), kListed); ++i) {
      if (i > 0) message += ", ";
      message += std::to_string(isolated[i]);
    }
    if (isolated.size() > kListed) message += " and " + std::to_string(isolated.size() - kListed) + " more";
    message += isolated.size() == 1 ? " has no links" : " have no links";
    problems.add("/links", message);
  }
  for (NodeId node = topology.npu_count(); node < topology.node_count(); ++node) {
    std::vector<NodeId> neighbours;
    for (LinkId id : topology.out_links(node)) neighbours.push_back(topology.link(id).dst);
    for (LinkId id : topology.in_links(node)) neighbours.push_back(topology.link(id).src);
    std::sort(neighbours.begin(), neighbours.end());
    neighbours.erase(std::unique(neighbours.begin(), neighbours.end()), neighbours.end());
    const std::string at = "/switches/" + std::to_string(node - topology.npu_count());
    if (neighbours.empty()) {
      problems.add(at, topology.node_label(node) + " has no links");
    } else if (neighbours.size() == 1) {
      problems.add(at, topology.node_label(node) + " is linked only to " + topology.node_label(neighbours[0]) +
                           "; a switch forwards between at least two nodes and is never a data endpoint");
    }
  }
}

GridLayout read_layout(const json& root, std::uint32_t npus, ProblemList& problems) {
  GridLayout layout;
  if (!root.contains("layout")) return layout;
  const json& object = root["layout"];
  if (!object.is_object()) {
    problems.add("/layout", "must be an object with kind (torus or mesh) and dims (got " + describe_type(object) + ")");
    return layout;
  }
  reject_unknown_keys(object, "/layout", kLayoutKeys, problems);
  bool ok = true;
  if (!object.contains("kind") || !object["kind"].is_string() ||
      (object["kind"] != "torus" && object["kind"] != "mesh")) {
    problems.add("/layout/kind", "must be \"torus\" or \"mesh\"");
    ok = false;
  }
  if (!object.contains("dims") || !object["dims"].is_array() || object["dims"].empty() || object["dims"].size() > 16) {
    problems.add("/layout/dims", "must be an array of 1 to 16 dimension sizes");
    return layout;
  }
  std::uint64_t product = 1;
  for (std::size_t d = 0; d < object["dims"].size(); ++d) {
    auto size = read_integer(object["dims"][d], pointer_at("/layout/dims", d), 1, kMaxNpus, problems);
    if (!size) {
      ok = false;
      continue;
    }
    product *= static_cast<std::uint64_t>(*size);
    if (product > kMaxNpus) product = kMaxNpus + 1;
    layout.dims.push_back(static_cast<int>(*size));
  }
  if (!ok) return {};
  layout.wraps = object["kind"] == "torus";
  if (product != npus) {
    problems.add("/layout/dims",
                 "the dimensions hold " + std::to_string(product) + " NPUs but the file has " + std::to_string(npus));
    return {};
  }
  return layout;
}

/// A layout is only kept when the links really form that grid: routing and the torus baselines
/// rely on it.
void check_layout_matches(const Topology& topology, ProblemList& problems) {
  if (!topology.layout.is_grid()) return;
  const std::string mismatch = grid_mismatch(topology, topology.layout);
  if (!mismatch.empty())
    problems.add("/layout", "the links do not form a " + topology.layout.describe() + ": " + mismatch);
}

/// original_npu_ids: what a file written from a topology with failures (topo unwind) keeps of the
/// ids NPUs had before the survivors were renumbered, so schedules and --members still speak of them.
std::vector<NodeId> read_original_ids(const json& root, std::uint32_t npus, ProblemList& problems) {
  if (!root.contains("original_npu_ids")) return {};
  const json& ids = root["original_npu_ids"];
  if (root.contains("failed")) {
    problems.add("/original_npu_ids", "not allowed with 'failed': failures renumber NPUs themselves");
    return {};
  }
  if (!ids.is_array() || ids.size() != npus) {
    problems.add("/original_npu_ids", "must be an array of " + std::to_string(npus) +
                                          " distinct NPU ids, one per NPU (got " + describe_type(ids) + ")");
    return {};
  }
  std::vector<NodeId> original;
  std::set<NodeId> seen;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto id = read_integer(ids[i], pointer_at("/original_npu_ids", i), 0, INT32_MAX, problems);
    if (!id) continue;
    if (!seen.insert(static_cast<NodeId>(*id)).second) {
      problems.add(pointer_at("/original_npu_ids", i), "NPU id " + std::to_string(*id) + " is listed twice");
    }
    original.push_back(static_cast<NodeId>(*id));
  }
  return original.size() == npus ? original : std::vector<NodeId>{};
}

FailureSet read_failures(const json& root, const EndpointReader& endpoints, const Topology& topology,
                         ProblemList& problems) {
  FailureSet failures;
  if (!root.contains("failed")) return failures;
  const json& object = root["failed"];
  if (!object.is_object()) {
    problems.add("/failed", "must be an object with npus and/or links (got " + describe_type(object) + ")");
    return failures;
  }
  reject_unknown_keys(object, "/failed", kFailedKeys, problems);
  if (object.contains("npus")) {
    const json& list = object["npus"];
    if (!list.is_array()) {
      problems.add("/failed/npus", "must be an array of NPU ids (got " + describe_type(list) + ")");
    } else {
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = pointer_at("/failed/npus", i);
        if (list[i].is_string()) {
          problems.add(at, "'" + list[i].get<std::string>() +
                               "' is not an NPU id; to fail a switch, list its links in /failed/links");
          continue;
        }
        if (auto id = read_integer(list[i], at, 0, static_cast<std::int64_t>(topology.npu_count()) - 1, problems)) {
          failures.npus.push_back(static_cast<NodeId>(*id));
        }
      }
    }
  }
  if (object.contains("links")) {
    const json& list = object["links"];
    if (!list.is_array()) {
      problems.add("/failed/links", "must be an array of [src, dst] pairs (got " + describe_type(list) + ")");
      return failures;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = pointer_at("/failed/links", i);
      const json& entry = list[i];
      if (!entry.is_array() || entry.size() != 2) {
        problems.add(at, "must be a [src, dst] pair of NPU ids or switch names (got " + describe_type(entry) + ")");
        continue;
      }
      auto src = endpoints.read(entry[0], at + "/0", problems);
      auto dst = endpoints.read(entry[1], at + "/1", problems);
      if (!src || !dst) continue;
      // A failed cable takes both directions with it; a one-way link fails alone.
      bool forward = topology.has_link(*src, *dst);
      bool backward = topology.has_link(*dst, *src);
      if (!forward && !backward) {
        problems.add(at, "there is no link between " + topology.node_label(*src) + " and " + topology.node_label(*dst));
        continue;
      }
      if (forward) failures.links.emplace_back(*src, *dst);
      if (backward) failures.links.emplace_back(*dst, *src);
    }
  }
  return failures;
}

std::string describe_unreachable(const Topology& topology, NodeId from, NodeId to) {
  return topology.node_label(from) + " cannot reach " + topology.node_label(to) +
         " (every NPU must reach every other over directed links)";
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& source) {
  if (nesting_depth(text) > kMaxJsonDepth) {
    throw InputError(
        source, "",
        "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels; a topology file needs far fewer");
  }
  if (std::optional<InputProblem> nul = find_nul_byte(text)) throw InputError(source, {*nul});
  try {
    return json::parse(text);
  } catch (const json::parse_error& error) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '<') {
      throw InputError(source, "", "invalid JSON: the file is XML (an MSCCL algorithm?), not JSON");
    }
    // nlohmann's message starts with "[json.exception.parse_error.101] "; keep what follows.
    std::string message = error.what();
    if (auto cut = message.find("] "); cut != std::string::npos) message = message.substr(cut + 2);
    throw InputError(source, "", "invalid JSON: " + message);
  } catch (const json::out_of_range& error) {
    // A number beyond a double: nlohmann gives no position, so find the value it was parsing.
    throw InputError(source, {number_overflow_problem(error, pointer_where_parse_fails(text))});
  }
}

Topology parse_topology(const std::string& text, const std::string& source) {
  const json root = parse_json_text(text, source);
  ProblemList problems(source);
  if (!root.is_object()) {
    throw InputError(source, "", "a topology file must hold a JSON object (got " + describe_type(root) + ")");
  }
  // Every field of a schedule would be "unknown": say what the file is instead.
  if (root.contains("format") && root["format"] == "tenet-schedule") {
    const std::string made_for = root.contains("topology") && root["topology"].is_string()
                                     ? " (made for topology '" + root["topology"].get<std::string>() + "')"
                                     : "";
    throw InputError(source, "/format", "this is a schedule file" + made_for + ", not a topology");
  }
  reject_unknown_keys(root, "", kTopLevelKeys, problems);

  std::string name;
  std::string description;
  if (root.contains("name")) name = read_string(root["name"], "/name", problems).value_or("");
  if (root.contains("description"))
    description = read_string(root["description"], "/description", problems).value_or("");
  const LinkDefaults defaults = read_defaults(root, problems);

  std::optional<std::int64_t> npus;
  if (!root.contains("npus")) {
    problems.add("/npus", "missing: the number of NPUs (an integer >= 2)");
  } else {
    npus = read_integer(root["npus"], "/npus", 2, static_cast<std::int64_t>(kMaxNpus), problems);
  }
  const bool has_links = root.contains("links");
  const bool has_generator = root.contains("generator");
  if (has_links && has_generator) problems.add("", "give either 'links' or 'generator', not both");
  if (!has_links && !has_generator) problems.add("", "missing 'links' (or a 'generator' in their place)");
  if (has_generator && root.contains("switches")) {
    problems.add("/switches", "not allowed with a 'generator': the generator names its own switches");
  }
  std::vector<std::string> switch_names =
      has_generator ? std::vector<std::string>{} : read_switch_names(root, problems);
  // Nothing below can be checked meaningfully without a valid NPU count and link source.
  problems.throw_if_any();

  Topology topology;
  if (has_generator) {
    topology = generate_topology(root["generator"], defaults, source, "/generator", static_cast<std::uint64_t>(*npus));
    if (topology.npu_count() != static_cast<std::uint64_t>(*npus)) {
      problems.add("/npus", std::to_string(*npus) + " does not match the " + std::to_string(topology.npu_count()) +
                                " NPUs the generator builds");
    }
  } else {
    topology = Topology(static_cast<std::uint32_t>(*npus), switch_names);
  }
  if (!name.empty()) topology.name = name;
  if (!description.empty()) topology.description = description;

  std::map<std::string, NodeId> switch_ids;
  for (NodeId node = topology.npu_count(); node < topology.node_count(); ++node) {
    switch_ids.emplace(topology.switch_name(node), node);
  }
  const EndpointReader endpoints{topology.npu_count(), switch_ids, topology.switch_names()};
  if (has_links) {
    read_links(root["links"], defaults, endpoints, topology, problems);
    GridLayout layout = read_layout(root, topology.npu_count(), problems);
    if (!problems.empty()) problems.throw_if_any();
    topology.layout = layout;
    check_layout_matches(topology, problems);
    // Ids still as in the file (failures renumber below): a torus written as links is one.
    if (!topology.layout.is_grid()) topology.layout = detect_grid_layout(topology);
  } else if (root.contains("layout")) {
    problems.add("/layout", "not allowed with a 'generator': the generator sets the layout");
  }
  check_attachment(topology, problems);
  topology.original_npu_ids = read_original_ids(root, topology.npu_count(), problems);
  FailureSet failures = read_failures(root, endpoints, topology, problems);
  problems.throw_if_any();

  NodeId from = kNoNode;
  NodeId to = kNoNode;
  if (!npus_strongly_connected(topology, &from, &to)) {
    throw InputError(source, has_links ? "/links" : "/generator", describe_unreachable(topology, from, to));
  }
  if (failures.npus.empty() && failures.links.empty()) return topology;
  Topology survivors = apply_failures(topology, failures, source, "/failed");
  if (survivors.npu_count() < 2) {
    throw InputError(
        source, "/failed/npus",
        "only " + std::to_string(survivors.npu_count()) + " NPU survives the failures; a collective needs at least 2");
  }
  return survivors;
}

Topology load_topology(const std::string& path) {
  Topology topology = parse_topology(read_file(path), path);
  // Outputs say which network they are about ("allreduce on NAME"); a file without a name is
  // called by its own.
  if (topology.name.empty()) topology.name = std::filesystem::path(path).stem().string();
  return topology;
}

namespace {

/// The most common link attributes: they become the defaults, so a homogeneous network's links
/// stay short.
std::pair<double, double> common_attributes(const Topology& topology) {
  std::map<std::pair<double, double>, std::size_t> popularity;
  for (const Link& link : topology.links()) ++popularity[{link.latency_us, link.bandwidth_GBps}];
  std::pair<double, double> common{0.5, 50.0};
  std::size_t best = 0;
  for (const auto& [attributes, count] : popularity) {
    if (count > best) {
      best = count;
      common = attributes;
    }
  }
  return common;
}

/// Each link's reverse (kNoLink when it has none), by sorting links on their unordered end pair:
/// O(links log links), where find_link per link made writing a fully connected network cubic.
std::vector<LinkId> reverse_links(const Topology& topology) {
  std::vector<LinkId> order(topology.link_count());
  for (LinkId id = 0; id < topology.link_count(); ++id) order[id] = id;
  auto key = [&](LinkId id) {
    const Link& link = topology.link(id);
    return std::make_tuple(std::min(link.src, link.dst), std::max(link.src, link.dst), link.src);
  };
  std::sort(order.begin(), order.end(), [&](LinkId a, LinkId b) { return key(a) < key(b); });
  std::vector<LinkId> reverse(topology.link_count(), kNoLink);
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    const Link& a = topology.link(order[i]);
    const Link& b = topology.link(order[i + 1]);
    if (a.src == b.dst && a.dst == b.src) {
      reverse[order[i]] = order[i + 1];
      reverse[order[i + 1]] = order[i];
    }
  }
  return reverse;
}

/// One entry of "links" as written: a duplex cable once (at its first direction, when both
/// directions have the same attributes), a one-way link with bidirectional false, and the
/// attributes that differ from the defaults.
struct WrittenLink {
  const Link* link = nullptr;
  bool one_way = false;
  bool own_latency = false;
  bool own_bandwidth = false;
};

template <typename Visit>
void for_each_written_link(const Topology& topology, const std::pair<double, double>& common, Visit visit) {
  const std::vector<LinkId> reverse_of = reverse_links(topology);
  std::vector<char> written(topology.link_count(), 0);
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    if (written[id]) continue;
    const Link& link = topology.link(id);
    const LinkId reverse = reverse_of[id];
    const bool duplex = reverse != kNoLink && !written[reverse] &&
                        topology.link(reverse).latency_us == link.latency_us &&
                        topology.link(reverse).bandwidth_GBps == link.bandwidth_GBps;
    if (duplex) written[reverse] = 1;
    written[id] = 1;
    visit(WrittenLink{&link, !duplex, link.latency_us != common.first, link.bandwidth_GBps != common.second});
  }
}

json endpoint_json(const Topology& topology, NodeId node) {
  if (topology.is_npu(node)) return node;
  return topology.switch_name(node);
}

/// Everything but the links.
json header_json(const Topology& topology, const std::pair<double, double>& common) {
  json root = json::object();
  root["name"] = topology.name;
  if (!topology.description.empty()) root["description"] = topology.description;
  root["defaults"] = {{"latency_us", common.first}, {"bandwidth_GBps", common.second}};
  root["npus"] = topology.npu_count();
  if (topology.switch_count() > 0) root["switches"] = topology.switch_names();
  // A detected layout is detected again on reading; the file stays as its author wrote it.
  if (topology.layout.is_grid() && !topology.layout.detected) {
    root["layout"] = {{"kind", topology.layout.wraps ? "torus" : "mesh"}, {"dims", topology.layout.dims}};
  }
  if (!topology.original_npu_ids.empty()) root["original_npu_ids"] = topology.original_npu_ids;
  return root;
}

}  // namespace

json topology_to_json(const Topology& topology) {
  const std::pair<double, double> common = common_attributes(topology);
  json root = header_json(topology, common);
  json links = json::array();
  for_each_written_link(topology, common, [&](const WrittenLink& written) {
    json entry = {{"src", endpoint_json(topology, written.link->src)},
                  {"dst", endpoint_json(topology, written.link->dst)}};
    if (written.one_way) entry["bidirectional"] = false;
    if (written.own_latency) entry["latency_us"] = written.link->latency_us;
    if (written.own_bandwidth) entry["bandwidth_GBps"] = written.link->bandwidth_GBps;
    links.push_back(std::move(entry));
  });
  root["links"] = std::move(links);
  return root;
}

std::string topology_to_text(const Topology& topology) {
  // Written by hand rather than by dump(2): fields in reading order and one link per line keep a
  // 16K-NPU file readable and diffable. The links go straight to text, not through a JSON document
  // (about 250 bytes per link: a gigabyte for a fully connected 2,000).
  const std::pair<double, double> common = common_attributes(topology);
  const json document = header_json(topology, common);
  auto inline_object = [](const json& object, const std::vector<std::string>& order) {
    std::string text = "{";
    for (const std::string& key : order) {
      if (!object.contains(key)) continue;
      if (text.size() > 1) text += ", ";
      text += json(key).dump() + ": " + object[key].dump();
    }
    return text + "}";
  };
  std::string text = "{\n";
  for (const char* key : {"name", "description"}) {
    if (document.contains(key)) text += "  " + json(key).dump() + ": " + document[key].dump() + ",\n";
  }
  text += "  \"defaults\": " + inline_object(document["defaults"], kDefaultsKeys) + ",\n";
  text += "  \"npus\": " + document["npus"].dump() + ",\n";
  if (document.contains("switches")) text += "  \"switches\": " + document["switches"].dump() + ",\n";
  if (document.contains("original_npu_ids")) {
    text += "  \"original_npu_ids\": " + document["original_npu_ids"].dump() + ",\n";
  }
  if (document.contains("layout")) text += "  \"layout\": " + inline_object(document["layout"], kLayoutKeys) + ",\n";
  text += "  \"links\": [";
  bool first = true;
  auto endpoint_text = [&](NodeId node) {
    return topology.is_npu(node) ? std::to_string(node) : json(topology.switch_name(node)).dump();
  };
  for_each_written_link(topology, common, [&](const WrittenLink& written) {
    text += first ? "\n    " : ",\n    ";
    first = false;
    text += "{\"src\": " + endpoint_text(written.link->src) + ", \"dst\": " + endpoint_text(written.link->dst);
    if (written.one_way) text += ", \"bidirectional\": false";
    if (written.own_latency) text += ", \"latency_us\": " + json(written.link->latency_us).dump();
    if (written.own_bandwidth) text += ", \"bandwidth_GBps\": " + json(written.link->bandwidth_GBps).dump();
    text += "}";
  });
  text += first ? "]\n}\n" : "\n  ]\n}\n";
  return text;
}
}  // namespace tenet
