// SPDX-License-Identifier: MIT
#include "translation_symmetry.hpp"

#include <algorithm>
#include <numeric>

#include "tenet/common/units.hpp"

namespace tenet::sim {
namespace {

constexpr std::uint32_t kUnset = ~std::uint32_t{0};

/// NPU arithmetic on the torus: ids are row-major, dimension 0 fastest (GridLayout).
class TorusNodes {
 public:
  explicit TorusNodes(const std::vector<int>& dims) : dims_(dims.begin(), dims.end()), strides_(dims.size()) {
    std::uint32_t stride = 1;
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      strides_[k] = stride;
      stride *= dims_[k];
    }
  }
  std::size_t dimensions() const { return dims_.size(); }
  std::uint32_t extent(std::size_t k) const { return dims_[k]; }

  /// u moved one step in dimension k, wrapping around.
  NodeId step(NodeId u, std::size_t k) const {
    const std::uint32_t c = u / strides_[k] % dims_[k];
    return c + 1 < dims_[k] ? u + strides_[k] : u - (dims_[k] - 1) * strides_[k];
  }
  /// The NPU at coordinates v - u (each modulo its dimension): where u's translation to 0 takes v.
  NodeId difference(NodeId v, NodeId u) const {
    NodeId id = 0;
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      const std::uint32_t cu = u / strides_[k] % dims_[k];
      const std::uint32_t cv = v / strides_[k] % dims_[k];
      id += (cv + dims_[k] - cu) % dims_[k] * strides_[k];
    }
    return id;
  }

 private:
  std::vector<std::uint32_t> dims_;
  std::vector<std::uint32_t> strides_;
};

/// Transfers grouped by source, and within a source by (destination, id): a run of one
/// destination is the list whose k-th entry a translation maps to the k-th of the image run.
struct PairRuns {
  std::vector<std::uint64_t> offsets;  ///< per source NPU, into ids
  std::vector<TransferId> ids;

  PairRuns(const Schedule& schedule, std::uint32_t npus) : offsets(std::size_t{npus} + 1, 0), ids(schedule.size()) {
    for (TransferId id = 0; id < schedule.size(); ++id) ++offsets[schedule.src(id) + 1];
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    std::vector<std::uint64_t> cursor(offsets.begin(), offsets.end() - 1);
    for (TransferId id = 0; id < schedule.size(); ++id) ids[cursor[schedule.src(id)]++] = id;
    for (NodeId src = 0; src < npus; ++src) {
      // Ids are ascending already; a stable sort by destination keeps them so within a run.
      std::stable_sort(ids.begin() + static_cast<std::ptrdiff_t>(offsets[src]),
                       ids.begin() + static_cast<std::ptrdiff_t>(offsets[src + 1]),
                       [&](TransferId a, TransferId b) { return schedule.dst(a) < schedule.dst(b); });
    }
  }

  /// Where the run from `src` to `dst` starts in ids and how long it is (length 0 when absent).
  std::pair<std::uint64_t, std::uint64_t> run(const Schedule& schedule, NodeId src, NodeId dst) const {
    auto first = ids.begin() + static_cast<std::ptrdiff_t>(offsets[src]);
    auto last = ids.begin() + static_cast<std::ptrdiff_t>(offsets[src + 1]);
    auto begin = std::partition_point(first, last, [&](TransferId id) { return schedule.dst(id) < dst; });
    auto end = std::partition_point(begin, last, [&](TransferId id) { return schedule.dst(id) <= dst; });
    return {static_cast<std::uint64_t>(begin - ids.begin()), static_cast<std::uint64_t>(end - begin)};
  }
};

/// Per link, its image under one unit translation with the same bandwidth and latency; empty
/// when some link has none.
std::vector<LinkId> translate_links(const Topology& topology, const TorusNodes& nodes, std::size_t k) {
  std::vector<LinkId> image(topology.link_count());
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    const LinkId moved = topology.find_link(nodes.step(link.src, k), nodes.step(link.dst, k));
    if (moved == kNoLink || topology.link(moved).bandwidth_GBps != link.bandwidth_GBps ||
        topology.link(moved).latency_us != link.latency_us) {
      return {};
    }
    image[id] = moved;
  }
  return image;
}

/// Checks that one unit translation (image of every transfer and every link given) maps the
/// schedule onto itself as the simulator sees it: kind, size, dependencies and route.
class TranslationCheck {
 public:
  TranslationCheck(const Schedule& schedule, const RouteTable& routes)
      : schedule_(schedule), routes_(routes), marks_(schedule.size(), 0), route_image_(routes.paths().size()) {}

  bool holds(const std::vector<TransferId>& image, const std::vector<LinkId>& link_image) {
    std::fill(route_image_.begin(), route_image_.end(), kUnset);
    for (TransferId id = 0; id < schedule_.size(); ++id) {
      const Transfer transfer = schedule_.transfer(id);
      const Transfer moved = schedule_.transfer(image[id]);
      if (moved.kind != transfer.kind || moved.chunk_count != transfer.chunk_count) return false;
      if (!same_route(routes_.route_of(transfer), routes_.route_of(moved), link_image)) return false;
      // A list shared with the previous transfer, whose image shares its list with the previous
      // one's image, was checked there: direct all-reduce's 10^9 edges are 10^6 lists' worth.
      if (id > 0 && transfer.dep_count > 0 && schedule_.same_deps(id - 1, id) &&
          schedule_.same_deps(image[id - 1], image[id])) {
        continue;
      }
      if (!same_deps(id, schedule_.deps_of(transfer), schedule_.deps_of(moved), image)) return false;
    }
    return true;
  }

 private:
  bool same_route(RouteId route, RouteId moved, const std::vector<LinkId>& link_image) {
    if (route_image_[route] == moved) return true;
    const auto links = routes_.links(route);
    const auto moved_links = routes_.links(moved);
    if (links.size() != moved_links.size()) return false;
    for (std::size_t hop = 0; hop < links.size(); ++hop) {
      if (link_image[links[hop]] != moved_links[hop]) return false;
    }
    route_image_[route] = moved;
    return true;
  }

  /// The images of `deps` are exactly `moved_deps`, as multisets; and every dependency comes
  /// before its dependent (else the general path reports it).
  bool same_deps(TransferId id, std::span<const TransferId> deps, std::span<const TransferId> moved_deps,
                 const std::vector<TransferId>& image) {
    if (deps.size() != moved_deps.size()) return false;
    for (TransferId dep : deps) {
      if (dep >= id) return false;
      ++marks_[image[dep]];
    }
    // Equal sizes and no count going below zero leave every count at zero again.
    // (A failed check abandons the marks with the whole search.)
    for (TransferId dep : moved_deps) {
      if (marks_[dep] == 0) return false;
      --marks_[dep];
    }
    return true;
  }

  const Schedule& schedule_;
  const RouteTable& routes_;
  std::vector<std::uint32_t> marks_;  ///< per transfer; all zero between checks
  std::vector<RouteId> route_image_;  ///< per route: the image already checked, or kUnset
};

/// Link orbits: the classes of links under the unit translations.
void label_link_orbits(const Topology& topology, const std::vector<std::vector<LinkId>>& link_images,
                       SymmetricQuotient& quotient) {
  quotient.orbit_of_link.assign(topology.link_count(), kUnset);
  std::vector<LinkId> stack;
  for (LinkId seed = 0; seed < topology.link_count(); ++seed) {
    if (quotient.orbit_of_link[seed] != kUnset) continue;
    const auto orbit = static_cast<std::uint32_t>(quotient.orbit_capacity.size());
    quotient.orbit_capacity.push_back(bytes_per_us(topology.link(seed).bandwidth_GBps));
    quotient.orbit_of_link[seed] = orbit;
    stack.push_back(seed);
    while (!stack.empty()) {
      const LinkId at = stack.back();
      stack.pop_back();
      for (const std::vector<LinkId>& image : link_images) {
        if (quotient.orbit_of_link[image[at]] != kUnset) continue;
        quotient.orbit_of_link[image[at]] = orbit;
        stack.push_back(image[at]);
      }
    }
  }
}

}  // namespace

std::optional<SymmetricQuotient> find_translation_symmetry(const Topology& topology, const Schedule& schedule,
                                                           const RouteTable& routes) {
  const GridLayout& layout = topology.layout;
  const std::uint32_t npus = topology.npu_count();
  if (!layout.is_grid() || !layout.wraps || topology.switch_count() != 0 || layout.size() != npus || npus < 2) {
    return std::nullopt;
  }
  if (schedule.size() == 0 || schedule.size() % npus != 0) return std::nullopt;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    if (schedule.link(id) != kNoLink || schedule.route(id) != kNoRoute) return std::nullopt;
  }
  const TorusNodes nodes(layout.dims);
  std::vector<std::vector<LinkId>> link_images;
  for (std::size_t k = 0; k < nodes.dimensions(); ++k) {
    if (nodes.extent(k) < 2) continue;
    link_images.push_back(translate_links(topology, nodes, k));
    if (link_images.back().empty()) return std::nullopt;
  }

  const PairRuns runs(schedule, npus);
  TranslationCheck check(schedule, routes);
  std::vector<TransferId> image(schedule.size());
  for (std::size_t k = 0, g = 0; k < nodes.dimensions(); ++k) {
    if (nodes.extent(k) < 2) continue;
    for (NodeId src = 0; src < npus; ++src) {
      const NodeId moved_src = nodes.step(src, k);
      for (std::uint64_t at = runs.offsets[src]; at < runs.offsets[src + 1];) {
        const NodeId dst = schedule.dst(runs.ids[at]);
        const auto [begin, length] = runs.run(schedule, src, dst);
        const auto [moved_begin, moved_length] = runs.run(schedule, moved_src, nodes.step(dst, k));
        if (moved_length != length) return std::nullopt;
        for (std::uint64_t i = 0; i < length; ++i) image[runs.ids[begin + i]] = runs.ids[moved_begin + i];
        at = begin + length;
      }
    }
    if (!check.holds(image, link_images[g++])) return std::nullopt;
  }

  // Every translation is a product of unit ones, so the transfer u -> v of ordinal i in its run
  // is a translate of NPU 0's transfer to v - u of the same ordinal: its orbit's representative.
  SymmetricQuotient quotient;
  const std::uint64_t orbit_count = runs.offsets[1];
  std::vector<TransferId>& rep_of = image;  // reused: per transfer, its orbit's member leaving NPU 0
  std::vector<TransferId> smallest(orbit_count, kUnset);
  std::vector<std::uint32_t> slot_of_rep(schedule.size(), kUnset);  // NPU 0's transfers: their place in runs
  for (std::uint64_t i = 0; i < orbit_count; ++i) slot_of_rep[runs.ids[i]] = static_cast<std::uint32_t>(i);
  for (NodeId src = 0; src < npus; ++src) {
    for (std::uint64_t at = runs.offsets[src]; at < runs.offsets[src + 1];) {
      const NodeId dst = schedule.dst(runs.ids[at]);
      const auto [begin, length] = runs.run(schedule, src, dst);
      const auto [rep_begin, rep_length] = runs.run(schedule, 0, nodes.difference(dst, src));
      if (rep_length != length) return std::nullopt;  // cannot happen once the checks hold
      for (std::uint64_t i = 0; i < length; ++i) {
        const TransferId id = runs.ids[begin + i];
        rep_of[id] = runs.ids[rep_begin + i];
        TransferId& first = smallest[slot_of_rep[rep_of[id]]];
        first = std::min(first, id);
      }
      at = begin + length;
    }
  }
  // Order orbits by their smallest member: a dependency's orbit has a smaller one (a translate
  // of the dependency precedes that member), so the quotient's dependencies point backwards.
  std::vector<std::uint32_t> order(orbit_count);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return smallest[a] < smallest[b]; });
  std::vector<std::uint32_t> quotient_of_slot(orbit_count);
  for (std::uint32_t q = 0; q < orbit_count; ++q) {
    quotient_of_slot[order[q]] = q;
    quotient.transfers.push_back(runs.ids[order[q]]);
  }
  quotient.orbit_of_transfer.resize(schedule.size());
  for (TransferId id = 0; id < schedule.size(); ++id)
    quotient.orbit_of_transfer[id] = quotient_of_slot[slot_of_rep[rep_of[id]]];

  label_link_orbits(topology, link_images, quotient);
  quotient.dep_offsets.push_back(0);
  std::vector<LinkId> path;
  for (std::uint32_t q = 0; q < orbit_count; ++q) {
    const Transfer transfer = schedule.transfer(quotient.transfers[q]);
    for (TransferId dep : schedule.deps_of(transfer)) {
      const std::uint32_t waited = quotient.orbit_of_transfer[dep];
      if (waited >= q) return std::nullopt;  // cannot happen: see the order above
      quotient.deps.push_back(waited);
    }
    quotient.dep_offsets.push_back(quotient.deps.size());
    const RouteId route = routes.route_of(transfer);
    path.clear();
    for (LinkId link : routes.links(route)) path.push_back(quotient.orbit_of_link[link]);
    quotient.routes.append(path);
    quotient.alpha_us.push_back(routes.alpha_us(route));
  }
  return quotient;
}

}  // namespace tenet::sim
