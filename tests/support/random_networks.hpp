// SPDX-License-Identifier: MIT
#pragma once
// Shared by the property tests: seeded random networks as topology files, so every property runs
// through the loader (and its `failed` section) the way a user's file does. std::mt19937 is
// specified exactly, so a seed names the same network with every standard library.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tenet::testing {

/// Appends `item` to a comma-separated JSON list in the making.
inline void append_item(std::string& list, const std::string& item) {
  if (!list.empty()) list += ",";
  list += item;
}

/// "[a,b]". Built piece by piece: GCC 12 warns (-Wrestrict, a false positive) about "[" + string.
inline std::string json_pair(std::uint32_t a, std::uint32_t b) {
  std::string pair = "[";
  pair += std::to_string(a);
  pair += ",";
  pair += std::to_string(b);
  pair += "]";
  return pair;
}

/// Fisher-Yates with plain draws (std::shuffle's order differs between standard libraries).
template <typename T>
void shuffle_seeded(std::vector<T>& items, std::mt19937& random) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[random() % i]);
}

/// A connected random switched network as a topology file: switches in a chain (plus extra
/// links), every NPU on one or two switches, a few direct links between NPUs. With `failed_npus`
/// (at most npus - 2) that many NPUs fail, and so does the extra switch link when there is one:
/// the chain keeps the survivors connected. The network itself does not depend on `failed_npus`.
inline std::string random_switched_network(std::uint32_t seed, std::uint32_t failed_npus = 0) {
  std::mt19937 random(seed);
  auto pick = [&](std::uint32_t below) { return static_cast<std::uint32_t>(random() % below); };
  const std::uint32_t npus = 4 + pick(7);
  const std::uint32_t switches = 1 + pick(3);
  const double ports[] = {25, 50, 100, 300};
  const double fabric[] = {50, 100, 400};
  std::string links;
  auto add = [&](const std::string& src, const std::string& dst, double bandwidth) {
    if (!links.empty()) links += ",";
    links += "{\"src\":" + src + ",\"dst\":" + dst + ",\"bandwidth_GBps\":" + std::to_string(bandwidth) + "}";
  };
  auto sw = [](std::uint32_t s) { return "\"s" + std::to_string(s) + "\""; };
  for (std::uint32_t s = 1; s < switches; ++s) add(sw(s - 1), sw(s), fabric[pick(3)]);
  const bool shortcut = switches == 3 && pick(2) == 0;
  if (shortcut) add(sw(0), sw(2), fabric[pick(3)]);
  std::vector<bool> has_port(switches, false);
  for (std::uint32_t npu = 0; npu < npus; ++npu) {
    const std::uint32_t first = pick(switches);
    add(std::to_string(npu), sw(first), ports[pick(4)]);
    has_port[first] = true;
    if (switches > 1 && pick(3) == 0) {
      add(std::to_string(npu), sw((first + 1) % switches), ports[pick(4)]);
      has_port[(first + 1) % switches] = true;
    }
  }
  // A switch at the end of the chain with no NPU would forward to one node only, which the loader
  // refuses; give every switch a port.
  for (std::uint32_t s = 0; s < switches; ++s) {
    if (!has_port[s]) add(std::to_string(s % npus), sw(s), ports[pick(4)]);
  }
  std::set<std::pair<std::uint32_t, std::uint32_t>> direct;
  for (std::uint32_t k = pick(npus); k > 0; --k) {
    const std::uint32_t a = pick(npus);
    const std::uint32_t b = pick(npus);
    if (a != b && direct.insert({std::min(a, b), std::max(a, b)}).second)
      add(std::to_string(a), std::to_string(b), ports[pick(4)]);
  }
  std::string names;
  for (std::uint32_t s = 0; s < switches; ++s) {
    if (s > 0) names += ",";
    names += sw(s);
  }
  const std::string latency = std::to_string(0.5 + pick(3));
  std::string failed;
  if (failed_npus > 0) {
    std::set<std::uint32_t> gone;
    while (gone.size() < std::min(failed_npus, npus - 2)) gone.insert(pick(npus));
    std::string ids;
    for (std::uint32_t npu : gone) append_item(ids, std::to_string(npu));
    failed =
        ",\"failed\":{\"npus\":[" + ids + "]" + (shortcut ? ",\"links\":[[" + sw(0) + "," + sw(2) + "]]" : "") + "}";
  }
  return "{\"name\":\"random-" + std::to_string(seed) + "\",\"npus\":" + std::to_string(npus) +
         ",\"defaults\":{\"latency_us\":" + latency + "},\"switches\":[" + names + "],\"links\":[" + links + "]" +
         failed + "}";
}

/// A random point-to-point graph, kept as edges so that callers can choose what may fail.
struct RandomGraph {
  struct Edge {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    bool duplex = true;  ///< false: the one link a -> b
    bool tree = false;   ///< on the spanning tree that keeps the graph connected
    double bandwidth_GBps = 0.0;
    double latency_us = 0.0;
  };
  std::uint32_t npus = 0;
  std::vector<Edge> edges;
  /// NPUs with one tree edge: failing any of them (never all) leaves the tree connected.
  std::vector<std::uint32_t> tree_leaves() const {
    std::vector<std::uint32_t> degree(npus, 0);
    for (const Edge& edge : edges) {
      if (edge.tree) ++degree[edge.a], ++degree[edge.b];
    }
    std::vector<std::uint32_t> leaves;
    for (std::uint32_t npu = 0; npu < npus; ++npu)
      if (degree[npu] == 1) leaves.push_back(npu);
    return leaves;
  }
};

/// 3 to 12 NPUs (at least `min_npus`) on a random spanning tree of duplex links (NPU i hangs off
/// an earlier one), plus random chords, some of them one-way. Homogeneous: every link has the
/// network's one bandwidth and latency; heterogeneous: each link draws its own, 10 to 400 GB/s and
/// 0.1 to 3 us, so cheap and expensive paths compete.
inline RandomGraph random_graph(std::mt19937& random, bool heterogeneous, std::uint32_t min_npus = 3) {
  auto pick = [&](std::uint32_t below) { return static_cast<std::uint32_t>(random() % below); };
  const double bandwidths[] = {10, 25, 50, 100, 400};
  const double latencies[] = {0.1, 0.5, 1, 3};
  const double bandwidth = bandwidths[pick(5)];
  const double latency = latencies[pick(4)];
  RandomGraph graph;
  graph.npus = min_npus + pick(13 - min_npus);
  std::set<std::pair<std::uint32_t, std::uint32_t>> joined;
  auto add = [&](std::uint32_t a, std::uint32_t b, bool duplex, bool tree) {
    if (a == b || !joined.insert({std::min(a, b), std::max(a, b)}).second) return;
    RandomGraph::Edge edge{a, b, duplex, tree, bandwidth, latency};
    if (heterogeneous) {
      edge.bandwidth_GBps = bandwidths[pick(5)];
      edge.latency_us = latencies[pick(4)];
    }
    graph.edges.push_back(edge);
  };
  for (std::uint32_t npu = 1; npu < graph.npus; ++npu) add(pick(npu), npu, true, true);
  for (std::uint32_t k = pick(graph.npus + 1); k > 0; --k) {
    // One draw per statement: the order of a call's arguments is up to the compiler.
    const std::uint32_t a = pick(graph.npus);
    const std::uint32_t b = pick(graph.npus);
    add(a, b, pick(3) != 0, false);
  }
  return graph;
}

/// The graph as a topology file, with `failed` (a JSON object) as its failed section when given.
inline std::string network_text(const std::string& name, const RandomGraph& graph, const std::string& failed = "") {
  std::string links;
  for (const RandomGraph::Edge& edge : graph.edges) {
    append_item(links, "{\"src\":" + std::to_string(edge.a) + ",\"dst\":" + std::to_string(edge.b) +
                           ",\"bandwidth_GBps\":" + std::to_string(edge.bandwidth_GBps) + ",\"latency_us\":" +
                           std::to_string(edge.latency_us) + (edge.duplex ? "" : ",\"bidirectional\":false") + "}");
  }
  return "{\"name\":\"" + name + "\",\"npus\":" + std::to_string(graph.npus) + ",\"links\":[" + links + "]" +
         (failed.empty() ? "" : ",\"failed\":" + failed) + "}";
}

/// A connected random point-to-point network (random_graph) as a topology file.
inline std::string random_point_to_point_network(std::uint32_t seed, bool heterogeneous) {
  std::mt19937 random(seed);
  const RandomGraph graph = random_graph(random, heterogeneous);
  return network_text((heterogeneous ? "mixed-" : "uniform-") + std::to_string(seed), graph);
}

/// A heterogeneous point-to-point network of 5 or more NPUs with failures that keep it
/// connected: up to two tree leaves fail (the tree keeps the others connected) and up to two
/// chords between survivors (which the tree does not need). Something always fails: with no leaf
/// failed, every chord survives and the first one fails.
inline std::string random_failed_network(std::uint32_t seed) {
  std::mt19937 random(seed);
  auto pick = [&](std::uint32_t below) { return static_cast<std::uint32_t>(random() % below); };
  const RandomGraph graph = random_graph(random, true, 5);
  std::vector<std::uint32_t> leaves = graph.tree_leaves();
  shuffle_seeded(leaves, random);
  std::vector<const RandomGraph::Edge*> chords;
  for (const RandomGraph::Edge& edge : graph.edges)
    if (!edge.tree) chords.push_back(&edge);
  shuffle_seeded(chords, random);
  // A tree of 5 or more NPUs has at least 2 leaves; without chords a leaf must fail.
  leaves.resize(std::min<std::size_t>(leaves.size(), chords.empty() ? 1 + pick(2) : pick(3)));
  std::string npus;
  for (std::uint32_t npu : leaves) append_item(npus, std::to_string(npu));
  std::string links;
  std::uint32_t chords_failed = 0;
  for (const RandomGraph::Edge* chord : chords) {
    const bool survives = std::find(leaves.begin(), leaves.end(), chord->a) == leaves.end() &&
                          std::find(leaves.begin(), leaves.end(), chord->b) == leaves.end();
    if (!survives || chords_failed == 2 || (chords_failed > 0 && pick(2) == 0)) continue;
    append_item(links, json_pair(chord->a, chord->b));
    ++chords_failed;
  }
  return network_text("failed-" + std::to_string(seed), graph, "{\"npus\":[" + npus + "],\"links\":[" + links + "]}");
}

/// A random member set of `npus` NPUs (current ids, ascending): at least 2 of them, never all.
inline std::vector<std::uint32_t> random_members(std::uint32_t seed, std::uint32_t npus) {
  std::mt19937 random(seed);
  std::vector<std::uint32_t> all(npus);
  for (std::uint32_t npu = 0; npu < npus; ++npu) all[npu] = npu;
  shuffle_seeded(all, random);
  all.resize(2 + static_cast<std::uint32_t>(random() % (npus - 2)));
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace tenet::testing
