// SPDX-License-Identifier: MIT
// The random generator: a connected graph for property tests and robustness runs.
//
// Structure: a random recursive tree over the NPUs in a random order (connected by construction),
// then extra NPU-NPU duplex links between uniformly drawn unlinked pairs until the NPU-NPU cable
// count reaches round(npus * degree / 2); then each switch "sw<i>" links to 2..min(npus, 4)
// distinct random NPUs. Links are added in that order (tree, extras, switch by switch). Every draw
// comes from Rng, so a seed gives the same topology on every platform; attributes have a stream of
// their own, so `heterogeneous` changes the attributes but not the structure.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>
#include <utility>

#include "generator_params.hpp"

#include "tenet/common/random.hpp"

namespace tenet::generator_detail {
namespace {

constexpr std::uint64_t kStructureStream = 1;
constexpr std::uint64_t kAttributeStream = 2;
constexpr std::uint64_t kMaxSwitchPorts = 4;

/// NPU-NPU duplex cables for npus >= 2 and 1 <= degree <= npus - 1, at least a spanning tree.
std::uint64_t cable_target(std::uint64_t npus, double degree) {
  const std::uint64_t all_pairs = saturating_mul(npus, npus - 1) / 2;
  const double wanted = static_cast<double>(npus) * degree / 2.0;
  if (wanted >= static_cast<double>(all_pairs)) return all_pairs;
  return std::max<std::uint64_t>(npus - 1, static_cast<std::uint64_t>(std::llround(wanted)));
}

std::uint64_t pair_key(NodeId a, NodeId b, NodeId npus) {
  return static_cast<std::uint64_t>(std::min(a, b)) * npus + std::max(a, b);
}

std::vector<std::pair<NodeId, NodeId>> draw_cables(NodeId npus, std::uint64_t target, Rng& rng) {
  std::vector<NodeId> order(npus);
  std::iota(order.begin(), order.end(), NodeId{0});
  for (NodeId i = npus - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  std::vector<std::pair<NodeId, NodeId>> cables;
  cables.reserve(target);
  std::unordered_set<std::uint64_t> linked;
  for (NodeId i = 1; i < npus; ++i) {
    const NodeId parent = order[rng.below(i)];
    cables.emplace_back(parent, order[i]);
    linked.insert(pair_key(parent, order[i], npus));
  }
  const std::uint64_t all_pairs = static_cast<std::uint64_t>(npus) * (npus - 1) / 2;
  const std::uint64_t extra = target - cables.size();
  if (extra == 0) return cables;
  if (target <= all_pairs / 2) {
    // Sparse: rejection sampling accepts at least half of the draws.
    while (cables.size() < target) {
      const NodeId a = static_cast<NodeId>(rng.below(npus));
      const NodeId b = static_cast<NodeId>(rng.below(npus));
      if (a == b || !linked.insert(pair_key(a, b, npus)).second) continue;
      cables.emplace_back(a, b);
    }
    return cables;
  }
  // Dense: rejection would stall near the complete graph; shuffle the unlinked pairs instead.
  std::vector<std::pair<NodeId, NodeId>> candidates;
  candidates.reserve(all_pairs - cables.size());
  for (NodeId a = 0; a < npus; ++a) {
    for (NodeId b = a + 1; b < npus; ++b) {
      if (!linked.contains(pair_key(a, b, npus))) candidates.emplace_back(a, b);
    }
  }
  for (std::uint64_t i = 0; i < extra; ++i) {
    std::swap(candidates[i], candidates[i + rng.below(candidates.size() - i)]);
    cables.push_back(candidates[i]);
  }
  return cables;
}

}  // namespace

Topology build_random(ParamReader& in) {
  std::optional<std::uint64_t> npus = in.integer("npus", 2);
  // A plain double and a flag rather than std::optional<double>: GCC 12 warns falsely about the
  // latter's copies at -O3.
  const std::optional<double> degree_read = in.number("degree", 1, 3);
  bool degree_ok = degree_read.has_value();
  double degree = degree_read.value_or(3.0);
  std::optional<std::uint64_t> seed = in.integer("seed", 0, 1);
  std::optional<std::uint64_t> switches = in.integer("switches", 0, 0);
  std::optional<bool> heterogeneous = in.boolean("heterogeneous", false);
  LevelAttributes attributes = in.levels(1, "dimension");
  if (heterogeneous.value_or(false)) {
    for (const char* name : {"bandwidth_GBps", "latency_us"}) {
      if (in.has(name))
        in.fail(name, "not allowed with heterogeneous: true (links get random 25..200 GB/s, 0.5..2 us)");
    }
  }
  if (npus && degree_ok) {
    const double max_degree = static_cast<double>(*npus - 1);
    if (!in.has("degree")) {
      degree = std::min(degree, max_degree);
    } else if (degree > max_degree) {
      in.fail("degree",
              "must be at most npus - 1 = " + format_count(*npus - 1) + " (got " + format_number(degree) + ")");
      degree_ok = false;
    }
  }
  if (npus && degree_ok && switches) {
    const std::uint64_t cables = cable_target(*npus, degree);
    const std::uint64_t switch_cables = saturating_mul(*switches, std::min(*npus, kMaxSwitchPorts));
    in.check_size("npus", {*npus, 0, saturating_mul(2, saturating_add(cables, switch_cables))});
    if (*switches > kMaxSwitches) {
      in.fail("switches",
              "too large: " + format_count(*switches) + " switches (at most " + format_count(kMaxSwitches) + ")");
    }
  }
  in.throw_if_any();

  const NodeId npu_count = narrow(*npus);
  const NodeId switch_count = narrow(*switches);
  std::vector<std::string> names;
  for (NodeId s = 0; s < switch_count; ++s) names.push_back("sw" + std::to_string(s));
  Topology topology(npu_count, std::move(names));
  Rng structure(mix_seed(*seed, kStructureStream));
  Rng attribute_rng(mix_seed(*seed, kAttributeStream));
  auto add_cable = [&](NodeId a, NodeId b) {
    if (*heterogeneous) {
      const double bandwidth = 25.0 * static_cast<double>(1 + attribute_rng.below(8));
      const double latency = 0.5 + 0.25 * static_cast<double>(attribute_rng.below(7));
      topology.add_duplex(a, b, latency, bandwidth);
    } else {
      topology.add_duplex(a, b, attributes.latency_us(0), attributes.bandwidth_GBps(0));
    }
  };
  for (const auto& [a, b] : draw_cables(npu_count, cable_target(*npus, degree), structure)) add_cable(a, b);
  const std::uint64_t max_ports = std::min<std::uint64_t>(npu_count, kMaxSwitchPorts);
  for (NodeId s = 0; s < switch_count; ++s) {
    const std::uint64_t ports = 2 + structure.below(max_ports - 1);
    std::vector<NodeId> members;
    while (members.size() < ports) {
      const NodeId npu = static_cast<NodeId>(structure.below(npu_count));
      if (std::find(members.begin(), members.end(), npu) == members.end()) members.push_back(npu);
    }
    for (NodeId npu : members) add_cable(npu_count + s, npu);
  }
  name_topology(topology, "random", "seed " + std::to_string(*seed),
                *heterogeneous ? "25..200 GB/s, 0.5..2 us" : attributes.describe());
  topology.name = "random-" + std::to_string(npu_count) + "-seed" + std::to_string(*seed);
  return topology;
}

}  // namespace tenet::generator_detail
