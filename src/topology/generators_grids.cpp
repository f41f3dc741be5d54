// SPDX-License-Identifier: MIT
// Point-to-point generators: ring, fully_connected, mesh, torus, hypercube, hypercube_3d, hyperx.
//
// Link order, for reproducible link ids: NPU by NPU in id order, then dimension by dimension; each
// NPU adds the duplex link to its + neighbour (coordinate + 1, wrapping on a torus), so every
// cable is added exactly once. A torus dimension of size 2 therefore gets one duplex link (from
// coordinate 0) and a dimension of size 1 none. fully_connected and hyperx add, from each NPU, the
// duplex links to the peers with a larger id (hyperx: dimension by dimension, ascending coordinate).

#include "generator_params.hpp"

namespace tenet::generator_detail {
namespace {

/// Duplex cables along one line of `size` NPUs.
std::uint64_t cables_per_line(std::uint64_t size, bool wraps) {
  if (!wraps) return size - 1;
  if (size >= 3) return size;
  return size == 2 ? 1 : 0;
}

SizeCounts grid_counts(const std::vector<std::uint64_t>& dims, bool wraps) {
  // Suffix products instead of npus / size, which would be wrong once npus has saturated.
  std::vector<std::uint64_t> suffix(dims.size() + 1, 1);
  for (std::size_t d = dims.size(); d-- > 0;) suffix[d] = saturating_mul(suffix[d + 1], dims[d]);
  std::uint64_t prefix = 1;
  std::uint64_t links = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::uint64_t lines = saturating_mul(prefix, suffix[d + 1]);
    links = saturating_add(links, saturating_mul(2, saturating_mul(lines, cables_per_line(dims[d], wraps))));
    prefix = saturating_mul(prefix, dims[d]);
  }
  return {suffix[0], 0, links};
}

/// Strides of a grid where dimension 0 varies fastest (GridLayout's numbering).
std::vector<NodeId> strides_of(const std::vector<std::uint64_t>& dims) {
  std::vector<NodeId> strides(dims.size(), 1);
  for (std::size_t d = 1; d < dims.size(); ++d) strides[d] = strides[d - 1] * narrow(dims[d - 1]);
  return strides;
}

/// Odometer step over grid coordinates, dimension 0 fastest.
void next_coords(std::vector<std::uint64_t>& coords, const std::vector<std::uint64_t>& dims) {
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (++coords[d] < dims[d]) return;
    coords[d] = 0;
  }
}

Topology build_grid(const std::vector<std::uint64_t>& dims, bool wraps, const LevelAttributes& attributes) {
  const NodeId npus = narrow(saturating_product(dims));
  Topology topology(npus, {});
  const std::vector<NodeId> strides = strides_of(dims);
  std::vector<std::uint64_t> coords(dims.size(), 0);
  for (NodeId npu = 0; npu < npus; ++npu) {
    for (std::size_t d = 0; d < dims.size(); ++d) {
      NodeId next = kNoNode;
      if (coords[d] + 1 < dims[d]) {
        next = npu + strides[d];
      } else if (wraps && dims[d] >= 3) {
        next = npu - narrow(dims[d] - 1) * strides[d];
      }
      if (next != kNoNode) topology.add_duplex(npu, next, attributes.latency_us(d), attributes.bandwidth_GBps(d));
    }
    next_coords(coords, dims);
  }
  topology.layout.wraps = wraps;
  for (std::uint64_t size : dims) topology.layout.dims.push_back(static_cast<int>(size));
  return topology;
}

std::optional<std::uint64_t> size_of(const std::optional<std::vector<std::uint64_t>>& shape) {
  return shape ? std::optional<std::uint64_t>(shape->size()) : std::nullopt;
}

/// mesh and torus: the same reader, the same builder.
Topology build_mesh_or_torus(ParamReader& in, bool wraps) {
  std::optional<std::vector<std::uint64_t>> dims = in.integers("dims", 1, 0, "[4, 4]");
  LevelAttributes attributes = in.levels(size_of(dims), "dimension");
  if (dims) in.check_size("dims", grid_counts(*dims, wraps));
  in.throw_if_any();
  Topology topology = build_grid(*dims, wraps, attributes);
  name_topology(topology, in.kind(), join_shape(*dims), attributes.describe());
  return topology;
}

}  // namespace

Topology build_ring(ParamReader& in) {
  std::optional<std::uint64_t> npus = in.integer("npus", 2);
  std::optional<bool> bidirectional = in.boolean("bidirectional", true);
  LevelAttributes attributes = in.levels(1, "dimension");
  if (npus && bidirectional) {
    in.check_size("npus", *bidirectional ? grid_counts({*npus}, true) : SizeCounts{*npus, 0, *npus});
  }
  in.throw_if_any();
  if (*bidirectional) {
    Topology topology = build_grid({*npus}, true, attributes);
    name_topology(topology, "ring", std::to_string(*npus), attributes.describe());
    return topology;
  }
  Topology topology(narrow(*npus), {});
  for (NodeId npu = 0; npu < narrow(*npus); ++npu) {
    topology.add_link({npu, (npu + 1) % narrow(*npus), attributes.latency_us(0), attributes.bandwidth_GBps(0)});
  }
  name_topology(topology, "ring", std::to_string(*npus), "one-way, " + attributes.describe());
  return topology;
}

Topology build_fully_connected(ParamReader& in) {
  std::optional<std::uint64_t> npus = in.integer("npus", 2);
  LevelAttributes attributes = in.levels(1, "dimension");
  if (npus) in.check_size("npus", {*npus, 0, saturating_mul(*npus, *npus - 1)});
  in.throw_if_any();
  Topology topology(narrow(*npus), {});
  for (NodeId a = 0; a < narrow(*npus); ++a) {
    for (NodeId b = a + 1; b < narrow(*npus); ++b) {
      topology.add_duplex(a, b, attributes.latency_us(0), attributes.bandwidth_GBps(0));
    }
  }
  name_topology(topology, "fully_connected", std::to_string(*npus), attributes.describe());
  return topology;
}

Topology build_mesh(ParamReader& in) { return build_mesh_or_torus(in, false); }

Topology build_torus(ParamReader& in) { return build_mesh_or_torus(in, true); }

Topology build_hypercube(ParamReader& in) {
  std::optional<std::uint64_t> dimension = in.integer("dimension", 1);
  LevelAttributes attributes = in.levels(dimension, "dimension");
  if (dimension) {
    // 2^60 is past kCountCap already; the shift must not be attempted for larger dimensions.
    const std::uint64_t npus = *dimension >= 60 ? kCountCap : std::uint64_t{1} << *dimension;
    in.check_size("dimension", {npus, 0, saturating_mul(*dimension, npus)});
  }
  in.throw_if_any();
  Topology topology = build_grid(std::vector<std::uint64_t>(*dimension, 2), false, attributes);
  name_topology(topology, "hypercube", std::to_string(*dimension) + "d", attributes.describe());
  return topology;
}

Topology build_hypercube_3d(ParamReader& in) {
  std::optional<std::vector<std::uint64_t>> dims = in.integers("dims", 1, 3, "[4, 4, 4]");
  LevelAttributes attributes = in.levels(3, "dimension");
  if (dims) in.check_size("dims", grid_counts(*dims, false));
  in.throw_if_any();
  Topology topology = build_grid(*dims, false, attributes);
  name_topology(topology, "hypercube_3d", join_shape(*dims), attributes.describe());
  return topology;
}

Topology build_hyperx(ParamReader& in) {
  std::optional<std::vector<std::uint64_t>> dims = in.integers("dims", 1, 0, "[4, 4]");
  LevelAttributes attributes = in.levels(size_of(dims), "dimension");
  if (dims) {
    const std::uint64_t npus = saturating_product(*dims);
    std::uint64_t peers = 0;
    for (std::uint64_t size : *dims) peers = saturating_add(peers, size - 1);
    in.check_size("dims", {npus, 0, saturating_mul(npus, peers)});
  }
  in.throw_if_any();
  const NodeId npus = narrow(saturating_product(*dims));
  Topology topology(npus, {});
  const std::vector<NodeId> strides = strides_of(*dims);
  std::vector<std::uint64_t> coords(dims->size(), 0);
  for (NodeId npu = 0; npu < npus; ++npu) {
    for (std::size_t d = 0; d < dims->size(); ++d) {
      for (std::uint64_t peer = coords[d] + 1; peer < (*dims)[d]; ++peer) {
        topology.add_duplex(npu, npu + narrow(peer - coords[d]) * strides[d], attributes.latency_us(d),
                            attributes.bandwidth_GBps(d));
      }
    }
    next_coords(coords, *dims);
  }
  name_topology(topology, "hyperx", join_shape(*dims), attributes.describe());
  return topology;
}

}  // namespace tenet::generator_detail
