// SPDX-License-Identifier: MIT
// Grid detection: a torus or mesh written as plain links gets its layout back, anything else none.

#include "../support/catch.hpp"

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tenet/topology/grid_detection.hpp"
#include "tenet/topology/topology_json.hpp"

using namespace tenet;

namespace {

/// The file a generated topology expands to, without its `layout` field.
std::string as_plain_links(const Topology& generated) {
  nlohmann::json document = topology_to_json(generated);
  document.erase("layout");
  return document.dump();
}

std::string links_text(std::uint32_t npus, const std::vector<std::pair<int, int>>& cables) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& [src, dst] : cables) links.push_back({{"src", src}, {"dst", dst}});
  return nlohmann::json{{"npus", npus}, {"links", links}}.dump();
}

}  // namespace

TEST_CASE("every shipped torus and mesh, stripped of its layout, is detected as the same grid", "[grid]") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TENET_SOURCE_DIR "/topologies")) {
    const std::string stem = entry.path().stem().string();
    if (stem.rfind("torus-", 0) != 0 && stem.rfind("mesh-", 0) != 0 && stem.rfind("ring-64", 0) != 0 &&
        stem.rfind("hypercube-", 0) != 0) {
      continue;
    }
    const Topology generated = load_topology(entry.path().string());
    const Topology plain = parse_topology(as_plain_links(generated), stem + ".json");
    INFO(stem);
    if (!generated.layout.is_grid()) {  // failures renumber NPUs and drop the layout
      CHECK_FALSE(plain.layout.is_grid());
      continue;
    }
    CHECK(plain.layout.dims == generated.layout.dims);
    CHECK(plain.layout.wraps == generated.layout.wraps);
    CHECK(plain.layout.detected);
    CHECK_FALSE(generated.layout.detected);
    ++files;
  }
  CHECK(files >= 18);
}

TEST_CASE("detection names what it found and is unique for a link set", "[grid]") {
  // A 4-cycle in id order is a ring; the same cycle in row-major order of a square is a 2x2 mesh.
  CHECK(parse_topology(links_text(4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}), "t.json").layout.describe() ==
        "torus 4, detected");
  CHECK(parse_topology(links_text(4, {{0, 1}, {2, 3}, {0, 2}, {1, 3}}), "t.json").layout.describe() ==
        "mesh 2x2, detected");
  CHECK(parse_topology(links_text(3, {{0, 1}, {1, 2}}), "t.json").layout.describe() == "mesh 3, detected");
  // 2x3 mesh plus the wrap of the 3-dimension only: one wraps, one cannot: a torus 2x3.
  CHECK(
      parse_topology(links_text(6, {{0, 1}, {2, 3}, {4, 5}, {0, 2}, {2, 4}, {1, 3}, {3, 5}, {4, 0}, {5, 1}}), "t.json")
          .layout.describe() == "torus 2x3, detected");
}

TEST_CASE("links that are not exactly a grid are not detected", "[grid]") {
  // A mesh 3x3 with one extra diagonal, one cable missing, or one cable one-way.
  std::vector<std::pair<int, int>> mesh = {{0, 1}, {1, 2}, {3, 4}, {4, 5}, {6, 7}, {7, 8},
                                           {0, 3}, {3, 6}, {1, 4}, {4, 7}, {2, 5}, {5, 8}};
  CHECK(parse_topology(links_text(9, mesh), "t.json").layout.describe() == "mesh 3x3, detected");
  std::vector<std::pair<int, int>> diagonal = mesh;
  diagonal.push_back({0, 4});
  CHECK_FALSE(parse_topology(links_text(9, diagonal), "t.json").layout.is_grid());
  std::vector<std::pair<int, int>> missing(mesh.begin(), mesh.end() - 1);
  missing.push_back({2, 6});  // still connected, no longer a grid
  CHECK_FALSE(parse_topology(links_text(9, missing), "t.json").layout.is_grid());
  // Half the wrap-around links of a torus 3x3: neither a mesh nor a torus.
  std::vector<std::pair<int, int>> half_torus = mesh;
  half_torus.push_back({2, 0});
  CHECK_FALSE(parse_topology(links_text(9, half_torus), "t.json").layout.is_grid());
  const std::string one_way = R"({"npus": 3, "links": [{"src": 0, "dst": 1, "bidirectional": false},
    {"src": 1, "dst": 2, "bidirectional": false}, {"src": 2, "dst": 0, "bidirectional": false}]})";
  CHECK_FALSE(parse_topology(one_way, "t.json").layout.is_grid());
  const std::string with_switch = R"({"npus": 2, "switches": ["s"], "links": [{"src": 0, "dst": "s"},
    {"src": 1, "dst": "s"}]})";
  CHECK_FALSE(parse_topology(with_switch, "t.json").layout.is_grid());

  // Random connected graphs: spanning tree plus extra cables; whatever is detected must be a grid.
  std::mt19937 random(7);
  int detected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int npus = 4 + static_cast<int>(random() % 30);
    std::vector<std::pair<int, int>> cables;
    for (int v = 1; v < npus; ++v) cables.push_back({static_cast<int>(random() % v), v});
    const int extra = static_cast<int>(random() % npus);
    for (int e = 0; e < extra; ++e) {
      const int a = static_cast<int>(random() % npus);
      const int b = static_cast<int>(random() % npus);
      if (a == b) continue;
      bool duplicate = false;
      for (const auto& [x, y] : cables) duplicate = duplicate || (x == a && y == b) || (x == b && y == a);
      if (!duplicate) cables.push_back({a, b});
    }
    const Topology topology = parse_topology(links_text(static_cast<std::uint32_t>(npus), cables), "t.json");
    if (topology.layout.is_grid()) {
      // Rare (a spanning tree that happens to be the line 0-1-2-...): then every link must join
      // grid neighbours, checked here independently of grid_mismatch.
      ++detected;
      const GridLayout& layout = topology.layout;
      for (const Link& link : topology.links()) {
        const std::vector<int> a = layout.coords(link.src);
        const std::vector<int> b = layout.coords(link.dst);
        int steps = 0;
        for (std::size_t d = 0; d < a.size(); ++d) {
          const int distance = std::abs(a[d] - b[d]);
          if (distance == 1 || (layout.wraps && distance == layout.dims[d] - 1))
            ++steps;
          else if (distance != 0)
            steps += 2;
        }
        CHECK(steps == 1);
      }
    }
  }
  CHECK(detected < 10);
}
