// SPDX-License-Identifier: MIT
#include "tenet/io/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"

namespace tenet {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string number(double value, int decimals = 1) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string text_at(double x, double y, const std::string& text, const std::string& extra = "") {
  return "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\"" + extra + ">" + escape(text) + "</text>\n";
}

/// Compact size labels for the x axis: 32B, 1K, 64M, 1G (binary).
std::string size_tick(double bytes) {
  static const char* const kUnits[] = {"B", "K", "M", "G", "T"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  return number(bytes, bytes == std::floor(bytes) ? 0 : 1) + kUnits[unit];
}

std::string bandwidth_tick(double value) {
  if (value >= 1.0) return number(value, 0);
  if (value >= 0.01) return number(value, 2);
  char text[32];
  std::snprintf(text, sizeof text, "%.0e", value);
  return text;
}

}  // namespace

std::string bandwidth_plot_svg(const std::vector<PlotSeries>& series, const std::string& title) {
  constexpr double kWidth = 900;
  constexpr double kHeight = 560;
  constexpr double kLeft = 80;
  constexpr double kRight = 190;
  constexpr double kTop = 50;
  constexpr double kBottom = 70;
  double min_size = INFINITY;
  double max_size = 0;
  double min_bw = INFINITY;
  double max_bw = 0;
  for (const PlotSeries& line : series) {
    for (const auto& [size, bandwidth] : line.points) {
      if (bandwidth <= 0) continue;
      min_size = std::min(min_size, static_cast<double>(size));
      max_size = std::max(max_size, static_cast<double>(size));
      min_bw = std::min(min_bw, bandwidth);
      max_bw = std::max(max_bw, bandwidth);
    }
  }
  if (max_size == 0) {
    min_size = 1;
    max_size = 2;
    min_bw = 1;
    max_bw = 10;
  }
  // Whole powers of two (sizes) and ten (bandwidth) bound the axes, so ticks land on round values.
  const double x_low = std::floor(std::log2(min_size));
  const double x_high = std::max(x_low + 1, std::ceil(std::log2(max_size)));
  const double y_low = std::floor(std::log10(min_bw));
  const double y_high = std::max(y_low + 1, std::ceil(std::log10(max_bw)));
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_height = kHeight - kTop - kBottom;
  auto x_of = [&](double size) { return kLeft + (std::log2(size) - x_low) / (x_high - x_low) * plot_width; };
  auto y_of = [&](double bandwidth) {
    return kTop + plot_height - (std::log10(bandwidth) - y_low) / (y_high - y_low) * plot_height;
  };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(kWidth, 0) + "\" height=\"" +
                    number(kHeight, 0) + "\" font-family=\"sans-serif\" font-size=\"13\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += text_at(kWidth / 2, 28, title, " text-anchor=\"middle\" font-size=\"17\"");
  // Grid and ticks.
  const int x_step = x_high - x_low > 16 ? 2 : 1;
  for (double e = x_low; e <= x_high; e += x_step) {
    const double x = x_of(std::exp2(e));
    svg += "<line x1=\"" + number(x) + "\" y1=\"" + number(kTop) + "\" x2=\"" + number(x) + "\" y2=\"" +
           number(kTop + plot_height) + "\" stroke=\"#e0e0e0\"/>\n";
    svg += text_at(x, kTop + plot_height + 20, size_tick(std::exp2(e)), " text-anchor=\"middle\"");
  }
  for (double e = y_low; e <= y_high; e += 1) {
    const double y = y_of(std::pow(10.0, e));
    svg += "<line x1=\"" + number(kLeft) + "\" y1=\"" + number(y) + "\" x2=\"" + number(kLeft + plot_width) +
           "\" y2=\"" + number(y) + "\" stroke=\"#e0e0e0\"/>\n";
    svg += text_at(kLeft - 8, y + 4, bandwidth_tick(std::pow(10.0, e)), " text-anchor=\"end\"");
  }
  svg += "<rect x=\"" + number(kLeft) + "\" y=\"" + number(kTop) + "\" width=\"" + number(plot_width) + "\" height=\"" +
         number(plot_height) + "\" fill=\"none\" stroke=\"black\"/>\n";
  svg += text_at(kLeft + plot_width / 2, kHeight - 22, "collective size (bytes, log scale)", " text-anchor=\"middle\"");
  svg += text_at(22, kTop + plot_height / 2, "algorithm bandwidth (GB/s, log scale)",
                 " text-anchor=\"middle\" transform=\"rotate(-90 22 " + number(kTop + plot_height / 2) + ")\"");
  // Lines, markers and the legend.
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string colour = kPalette[i % std::size(kPalette)];
    std::string points;
    for (const auto& [size, bandwidth] : series[i].points) {
      if (bandwidth <= 0) continue;
      points += number(x_of(static_cast<double>(size))) + "," + number(y_of(bandwidth)) + " ";
      svg += "<circle cx=\"" + number(x_of(static_cast<double>(size))) + "\" cy=\"" + number(y_of(bandwidth)) +
             "\" r=\"3\" fill=\"" + colour + "\"/>\n";
    }
    if (!points.empty()) {
      svg += "<polyline fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
    }
    const double legend_y = kTop + 10 + 22.0 * static_cast<double>(i);
    svg += "<line x1=\"" + number(kWidth - kRight + 15) + "\" y1=\"" + number(legend_y) + "\" x2=\"" +
           number(kWidth - kRight + 45) + "\" y2=\"" + number(legend_y) + "\" stroke=\"" + colour +
           "\" stroke-width=\"3\"/>\n";
    svg += text_at(kWidth - kRight + 52, legend_y + 4, series[i].name);
  }
  return svg + "</svg>\n";
}

std::string link_heatmap_svg(const Topology& topology, const std::vector<double>& link_bytes,
                             const std::string& title) {
  const std::uint32_t nodes = topology.node_count();
  if (nodes > kMaxHeatmapNodes) {
    throw InputError("", "--heatmap",
                     "the topology has " + std::to_string(nodes) + " nodes; a heat map draws at most " +
                         std::to_string(kMaxHeatmapNodes) + " (use the per-link numbers of --json)");
  }
  const double cell = std::max(3.0, std::min(24.0, 640.0 / nodes));
  const double left = 70;
  const double top = 60;
  const double side = cell * nodes;
  double busiest = 0;
  for (double bytes : link_bytes) busiest = std::max(busiest, bytes);
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(left + side + 120, 0) +
                    "\" height=\"" + number(top + side + 60, 0) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += text_at(left + side / 2, 28, title, " text-anchor=\"middle\" font-size=\"15\"");
  // Every cell starts black (no link); links paint over it.
  svg += "<rect x=\"" + number(left) + "\" y=\"" + number(top) + "\" width=\"" + number(side) + "\" height=\"" +
         number(side) + "\" fill=\"black\"/>\n";
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    const double share = busiest > 0 && id < link_bytes.size() ? link_bytes[id] / busiest : 0.0;
    // White (idle) to dark red (busiest), linear in load.
    const int green_blue = static_cast<int>(std::lround(255.0 * (1.0 - share)));
    const int red = static_cast<int>(std::lround(255.0 - 115.0 * share));
    char colour[16];
    std::snprintf(colour, sizeof colour, "#%02x%02x%02x", red, green_blue, green_blue);
    svg += "<rect x=\"" + number(left + cell * link.dst) + "\" y=\"" + number(top + cell * link.src) + "\" width=\"" +
           number(cell) + "\" height=\"" + number(cell) + "\" fill=\"" + colour + "\"><title>" +
           escape(topology.node_label(link.src) + " -> " + topology.node_label(link.dst) + ": " +
                  format_size(static_cast<std::uint64_t>(id < link_bytes.size() ? link_bytes[id] : 0.0))) +
           "</title></rect>\n";
  }
  svg += text_at(left + side / 2, top + side + 24, "destination node", " text-anchor=\"middle\"");
  svg += text_at(20, top + side / 2, "source node",
                 " text-anchor=\"middle\" transform=\"rotate(-90 20 " + number(top + side / 2) + ")\"");
  // The colour scale.
  const double scale_x = left + side + 30;
  for (int step = 0; step <= 10; ++step) {
    const double share = step / 10.0;
    const int green_blue = static_cast<int>(std::lround(255.0 * (1.0 - share)));
    const int red = static_cast<int>(std::lround(255.0 - 115.0 * share));
    char colour[16];
    std::snprintf(colour, sizeof colour, "#%02x%02x%02x", red, green_blue, green_blue);
    svg += "<rect x=\"" + number(scale_x) + "\" y=\"" + number(top + side - (step + 1) * side / 11) +
           "\" width=\"18\" height=\"" + number(side / 11 + 0.5) + "\" fill=\"" + colour + "\"/>\n";
  }
  svg += text_at(scale_x + 24, top + 10, format_size(static_cast<std::uint64_t>(busiest)));
  svg += text_at(scale_x + 24, top + side, "0 B");
  svg += text_at(scale_x, top + side + 44, "black: no link");
  return svg + "</svg>\n";
}

}  // namespace tenet
