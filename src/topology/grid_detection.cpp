// SPDX-License-Identifier: MIT
// Grid detection: the sizes of the dimensions are read off the links along NPU 0's axes, then the
// whole link set is checked against that grid, so a detection is never a guess.

#include "tenet/topology/grid_detection.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tenet {

std::string grid_mismatch(const Topology& topology, const GridLayout& layout) {
  std::uint64_t expected_links = 0;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    const std::vector<int> c = layout.coords(npu);
    for (std::size_t d = 0; d < layout.dims.size(); ++d) {
      const int size = layout.dims[d];
      for (int step : {+1, -1}) {
        int next = c[d] + step;
        if (layout.wraps) {
          next = (next + size) % size;
        } else if (next < 0 || next >= size) {
          continue;
        }
        // A dimension of 2 wraps onto the same neighbour: one cable, not two.
        if (next == c[d] || (size == 2 && step == -1 && layout.wraps)) continue;
        std::vector<int> n = c;
        n[d] = next;
        const NodeId neighbour = layout.npu_at(n);
        ++expected_links;
        if (!topology.has_link(npu, neighbour)) {
          return "link " + std::to_string(npu) + " -> " + std::to_string(neighbour) + " is missing";
        }
      }
    }
  }
  if (topology.switch_count() != 0 || expected_links != topology.link_count()) {
    return "the file has " + std::to_string(topology.link_count()) + " directed links, the grid " +
           std::to_string(expected_links) + (topology.switch_count() ? " and no switches" : "");
  }
  return "";
}

GridLayout detect_grid_layout(const Topology& topology) {
  const std::uint64_t npus = topology.npu_count();
  if (npus < 2 || topology.switch_count() != 0) return {};
  GridLayout layout;
  std::vector<std::uint64_t> strides;
  // Along dimension d, NPUs 0, s, 2s, ... (s its stride) are joined in a line until the coordinate
  // wraps: NPU (size-1)*s never links to size*s, which sits one step along the next dimension.
  std::uint64_t stride = 1;
  while (stride < npus) {
    std::uint64_t size = 1;
    while (size * stride < npus &&
           topology.has_link(static_cast<NodeId>((size - 1) * stride), static_cast<NodeId>(size * stride))) {
      ++size;
    }
    if (size == 1 || npus % (size * stride) != 0) return {};
    layout.dims.push_back(static_cast<int>(size));
    strides.push_back(stride);
    stride *= size;
  }
  for (std::size_t d = 0; d < layout.dims.size(); ++d) {
    const std::uint64_t size = static_cast<std::uint64_t>(layout.dims[d]);
    if (size >= 3 && topology.has_link(0, static_cast<NodeId>((size - 1) * strides[d]))) layout.wraps = true;
  }
  if (!grid_mismatch(topology, layout).empty()) return {};
  layout.detected = true;
  return layout;
}

}  // namespace tenet
