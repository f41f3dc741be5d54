// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include "tenet/common/error.hpp"
#include "tenet/io/plot.hpp"
#include <nlohmann/json.hpp>

#include "tenet/topology/generators.hpp"

using namespace tenet;

namespace {

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("the bandwidth plot draws one labelled line per series on log axes", "[plot]") {
  const std::vector<PlotSeries> series = {
      {"synth", {{1024, 0.5}, {1 << 20, 40.0}, {1 << 30, 90.0}}},
      {"ring <bi>", {{1024, 0.1}, {1 << 20, 20.0}, {1 << 30, 45.0}}},
  };
  const std::string svg = bandwidth_plot_svg(series, "allreduce on torus-8x8");
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(count_of(svg, "<polyline") == 2);
  CHECK(count_of(svg, "<circle") == 6);
  CHECK(svg.find(">synth</text>") != std::string::npos);
  CHECK(svg.find(">ring &lt;bi&gt;</text>") != std::string::npos);  // names are escaped
  CHECK(svg.find("collective size (bytes, log scale)") != std::string::npos);
  CHECK(svg.find("algorithm bandwidth (GB/s, log scale)") != std::string::npos);
  CHECK(svg.find(">1K</text>") != std::string::npos);
  CHECK(svg.find(">1G</text>") != std::string::npos);
  CHECK(svg.find(">100</text>") != std::string::npos);
}

TEST_CASE("the heat map paints links by load and refuses unreadable sizes", "[plot]") {
  const Topology ring = generate_topology(nlohmann::json{{"kind", "ring"}, {"npus", 4}}, LinkDefaults{}, "t", "");
  std::vector<double> bytes(ring.link_count(), 0.0);
  bytes[0] = 1000.0;
  const std::string svg = link_heatmap_svg(ring, bytes, "load");
  CHECK(count_of(svg, "<title>") == ring.link_count());
  CHECK(svg.find("fill=\"#8c0000\"") != std::string::npos);  // the busiest link, darkest red
  CHECK(svg.find("fill=\"#ffffff\"") != std::string::npos);  // idle links white
  const Topology big =
      generate_topology(nlohmann::json{{"kind", "torus"}, {"dims", {16, 17}}}, LinkDefaults{}, "t", "");
  CHECK_THROWS_WITH(link_heatmap_svg(big, {}, "x"),
                    "error: --heatmap: the topology has 272 nodes; a heat map draws at most 256 (use the per-link "
                    "numbers of --json)");
}
