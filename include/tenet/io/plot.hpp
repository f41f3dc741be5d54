// SPDX-License-Identifier: MIT
#pragma once
// SVG figures people read without the table: algorithm bandwidth against size (like Swing
// Fig. 6), and link load per link (like TACOS Fig. 1). Plain SVG 1.1, no scripts, no fonts to
// install: they open in any browser.

#include <cstdint>
#include <string>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet {

struct PlotSeries {
  std::string name;
  /// (collective size in bytes, algorithm bandwidth in GB/s); points with bandwidth <= 0 are skipped.
  std::vector<std::pair<std::uint64_t, double>> points;
};

/// Algorithm bandwidth versus size on log-log axes, one labelled line per series, a legend,
/// axis titles with units, and a title.
std::string bandwidth_plot_svg(const std::vector<PlotSeries>& series, const std::string& title);

/// Most nodes a heat map draws: past this the cells are too small to read.
constexpr std::uint32_t kMaxHeatmapNodes = 256;

/// Bytes carried by each link, as a source x destination grid of cells coloured from white (idle)
/// to dark red (the busiest link); black where there is no link. `link_bytes` is indexed by LinkId.
/// Throws InputError when the topology has more than kMaxHeatmapNodes nodes.
std::string link_heatmap_svg(const Topology& topology, const std::vector<double>& link_bytes, const std::string& title);

}  // namespace tenet
