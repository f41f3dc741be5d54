// SPDX-License-Identifier: MIT
// Generators with switches or hierarchy: switch, two_level_switch, ring_fc_switch, dragonfly,
// hammingmesh, fat_tree, tree.
//
// Link order, for reproducible link ids: NPU by NPU in id order, then dimension (level) by
// dimension; an NPU adds its duplex links to NPU peers with a larger id (ring dimensions: to the
// + neighbour, as on a torus) and to its switches. Switch-to-switch links come after all NPU links
// (fat_tree: leaf by leaf; tree: level by level from the root, parent by parent). Switches are
// numbered in the order their names are listed in each builder.

#include <utility>

#include "generator_params.hpp"

namespace tenet::generator_detail {
namespace {

std::vector<std::string> numbered(const std::string& prefix, std::uint64_t count) {
  std::vector<std::string> names;
  names.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

std::vector<std::string> concat(std::vector<std::string> first, const std::vector<std::string>& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

}  // namespace

Topology build_switch(ParamReader& in) {
  std::optional<std::uint64_t> npus = in.integer("npus", 2);
  LevelAttributes attributes = in.levels(1, "dimension");
  if (npus) in.check_size("npus", {*npus, 1, saturating_mul(2, *npus)});
  in.throw_if_any();
  const NodeId count = narrow(*npus);
  Topology topology(count, {"sw"});
  for (NodeId npu = 0; npu < count; ++npu) {
    topology.add_duplex(npu, count, attributes.latency_us(0), attributes.bandwidth_GBps(0));
  }
  name_topology(topology, "switch", std::to_string(count), attributes.describe());
  return topology;
}

Topology build_two_level_switch(ParamReader& in) {
  std::optional<std::vector<std::uint64_t>> dims = in.integers("dims", 2, 2, "[8, 4]");
  LevelAttributes attributes = in.levels(2, "dimension");
  if (dims) {
    const std::uint64_t npus = saturating_product(*dims);
    in.check_size("dims", {npus, saturating_add((*dims)[0], (*dims)[1]), saturating_mul(4, npus)});
  }
  in.throw_if_any();
  const NodeId group_size = narrow((*dims)[0]);
  const NodeId groups = narrow((*dims)[1]);
  const NodeId npus = group_size * groups;
  // Level-0 switches "l<g>" (one per group) first, then level-1 switches "g<i>" (one per position).
  Topology topology(npus, concat(numbered("l", groups), numbered("g", group_size)));
  for (NodeId npu = 0; npu < npus; ++npu) {
    topology.add_duplex(npu, npus + npu / group_size, attributes.latency_us(0), attributes.bandwidth_GBps(0));
    topology.add_duplex(npu, npus + groups + npu % group_size, attributes.latency_us(1), attributes.bandwidth_GBps(1));
  }
  name_topology(topology, "two_level_switch", join_shape(*dims), attributes.describe());
  return topology;
}

Topology build_ring_fc_switch(ParamReader& in) {
  std::optional<std::vector<std::uint64_t>> dims = in.integers("dims", 1, 3, "[2, 4, 8]");
  LevelAttributes attributes = in.levels(3, "dimension");
  if (dims) {
    const std::uint64_t ring = (*dims)[0], fc = (*dims)[1], nodes = (*dims)[2];
    const std::uint64_t npus = saturating_product(*dims);
    const std::uint64_t ring_links = ring >= 3 ? saturating_mul(2, ring) : (ring == 2 ? 2 : 0);
    const std::uint64_t per_node = saturating_mul(ring, fc);
    std::uint64_t links = saturating_mul(ring_links, saturating_mul(fc, nodes));
    links = saturating_add(links, saturating_mul(saturating_mul(fc, fc - 1), saturating_mul(ring, nodes)));
    const bool switched = nodes >= 2;
    if (switched) links = saturating_add(links, saturating_mul(2, npus));
    in.check_size("dims", {npus, switched ? per_node : 0, links});
  }
  in.throw_if_any();
  const NodeId ring = narrow((*dims)[0]);
  const NodeId fc = narrow((*dims)[1]);
  const NodeId nodes = narrow((*dims)[2]);
  const NodeId per_node = ring * fc;
  const NodeId npus = per_node * nodes;
  // One node (n = 1) needs no switches: the switch layer only joins nodes.
  Topology topology(npus, nodes >= 2 ? numbered("p", per_node) : std::vector<std::string>{});
  for (NodeId npu = 0; npu < npus; ++npu) {
    const NodeId x = npu % ring;
    const NodeId y = npu / ring % fc;
    if (x + 1 < ring) {
      topology.add_duplex(npu, npu + 1, attributes.latency_us(0), attributes.bandwidth_GBps(0));
    } else if (ring >= 3) {
      topology.add_duplex(npu, npu - (ring - 1), attributes.latency_us(0), attributes.bandwidth_GBps(0));
    }
    for (NodeId peer = y + 1; peer < fc; ++peer) {
      topology.add_duplex(npu, npu + (peer - y) * ring, attributes.latency_us(1), attributes.bandwidth_GBps(1));
    }
    if (nodes >= 2) {
      topology.add_duplex(npu, npus + npu % per_node, attributes.latency_us(2), attributes.bandwidth_GBps(2));
    }
  }
  name_topology(topology, "ring_fc_switch", join_shape(*dims), attributes.describe());
  return topology;
}

Topology build_dragonfly(ParamReader& in) {
  std::optional<std::vector<std::uint64_t>> dims = in.integers("dims", 1, 2, "[4, 5]");
  LevelAttributes attributes = in.levels(2, "dimension");
  if (dims) {
    const std::uint64_t group_size = (*dims)[0], groups = (*dims)[1];
    const std::uint64_t local = saturating_mul(groups, saturating_mul(group_size, group_size - 1));
    const std::uint64_t global = saturating_mul(groups, groups - 1);
    in.check_size("dims", {saturating_product(*dims), 0, saturating_add(local, global)});
  }
  in.throw_if_any();
  const NodeId group_size = narrow((*dims)[0]);
  const NodeId groups = narrow((*dims)[1]);
  Topology topology(group_size * groups, {});
  // Group G numbers its g - 1 global links k = 0..g-2 (k-th other group in id order) and gives
  // link k to its NPU k mod a, which spreads them as evenly as the group size allows.
  for (NodeId npu = 0; npu < group_size * groups; ++npu) {
    const NodeId index = npu % group_size;
    const NodeId group = npu / group_size;
    for (NodeId peer = index + 1; peer < group_size; ++peer) {
      topology.add_duplex(npu, group * group_size + peer, attributes.latency_us(0), attributes.bandwidth_GBps(0));
    }
    for (NodeId k = index; k + 1 < groups; k += group_size) {
      const NodeId other = k < group ? k : k + 1;
      if (other < group) continue;
      // In the other group this group is link number `group` (it precedes `other`).
      topology.add_duplex(npu, other * group_size + group % group_size, attributes.latency_us(1),
                          attributes.bandwidth_GBps(1));
    }
  }
  name_topology(topology, "dragonfly", join_shape(*dims), attributes.describe());
  return topology;
}

Topology build_hammingmesh(ParamReader& in) {
  std::optional<std::vector<std::uint64_t>> board =
      in.integers("board", 1, 2, "[2, 2]", std::vector<std::uint64_t>{2, 2});
  std::optional<std::vector<std::uint64_t>> dims = in.integers("dims", 1, 2, "[4, 4]");
  LevelAttributes attributes = in.levels(2, "dimension");
  // A row switch joins the west and east edge NPUs of each board in its row (one NPU per board
  // when boards are one NPU wide); it is left out when it would join a single NPU.
  auto edge_npus = [](std::uint64_t board_size) -> std::uint64_t { return board_size == 1 ? 1 : 2; };
  if (board && dims) {
    const std::uint64_t a = (*board)[0], b = (*board)[1], x = (*dims)[0], y = (*dims)[1];
    const std::uint64_t width = saturating_mul(a, x), height = saturating_mul(b, y);
    const std::uint64_t row_members = saturating_mul(x, edge_npus(a));
    const std::uint64_t column_members = saturating_mul(y, edge_npus(b));
    std::uint64_t cables = saturating_add(saturating_mul(height, saturating_mul(x, a - 1)),
                                          saturating_mul(width, saturating_mul(y, b - 1)));
    std::uint64_t switches = 0;
    if (row_members >= 2) {
      switches = saturating_add(switches, height);
      cables = saturating_add(cables, saturating_mul(height, row_members));
    }
    if (column_members >= 2) {
      switches = saturating_add(switches, width);
      cables = saturating_add(cables, saturating_mul(width, column_members));
    }
    in.check_size("dims", {saturating_mul(width, height), switches, saturating_mul(2, cables)});
  }
  in.throw_if_any();
  const NodeId a = narrow((*board)[0]), b = narrow((*board)[1]);
  const NodeId width = a * narrow((*dims)[0]), height = b * narrow((*dims)[1]);
  const bool rows = (*dims)[0] * edge_npus(a) >= 2;
  const bool columns = (*dims)[1] * edge_npus(b) >= 2;
  const NodeId npus = width * height;
  std::vector<std::string> names = rows ? numbered("row", height) : std::vector<std::string>{};
  if (columns) names = concat(std::move(names), numbered("col", width));
  const NodeId first_column = npus + (rows ? height : 0);
  Topology topology(npus, std::move(names));
  for (NodeId npu = 0; npu < npus; ++npu) {
    const NodeId column = npu % width, row = npu / width;
    const NodeId x_in_board = column % a, y_in_board = row % b;
    if (x_in_board + 1 < a) topology.add_duplex(npu, npu + 1, attributes.latency_us(0), attributes.bandwidth_GBps(0));
    if (y_in_board + 1 < b) {
      topology.add_duplex(npu, npu + width, attributes.latency_us(0), attributes.bandwidth_GBps(0));
    }
    if (rows && (x_in_board == 0 || x_in_board + 1 == a)) {
      topology.add_duplex(npu, npus + row, attributes.latency_us(1), attributes.bandwidth_GBps(1));
    }
    if (columns && (y_in_board == 0 || y_in_board + 1 == b)) {
      topology.add_duplex(npu, first_column + column, attributes.latency_us(1), attributes.bandwidth_GBps(1));
    }
  }
  name_topology(topology, "hammingmesh", join_shape(*board) + "-" + join_shape(*dims), attributes.describe());
  return topology;
}

Topology build_fat_tree(ParamReader& in) {
  std::optional<std::vector<std::uint64_t>> dims = in.integers("dims", 1, 2, "[4, 2]");
  std::optional<std::uint64_t> spines = in.integer("spines", 1, 1);
  LevelAttributes attributes = in.levels(2, "dimension");
  if (dims && spines) {
    const std::uint64_t npus = saturating_product(*dims), leaves = (*dims)[1];
    const std::uint64_t links = saturating_mul(2, saturating_add(npus, saturating_mul(leaves, *spines)));
    in.check_size("dims", {npus, saturating_add(leaves, *spines), links});
  }
  in.throw_if_any();
  const NodeId per_leaf = narrow((*dims)[0]);
  const NodeId leaves = narrow((*dims)[1]);
  const NodeId spine_count = narrow(*spines);
  const NodeId npus = per_leaf * leaves;
  Topology topology(npus, concat(numbered("leaf", leaves), numbered("spine", spine_count)));
  for (NodeId npu = 0; npu < npus; ++npu) {
    topology.add_duplex(npu, npus + npu / per_leaf, attributes.latency_us(0), attributes.bandwidth_GBps(0));
  }
  for (NodeId leaf = 0; leaf < leaves; ++leaf) {
    for (NodeId spine = 0; spine < spine_count; ++spine) {
      topology.add_duplex(npus + leaf, npus + leaves + spine, attributes.latency_us(1), attributes.bandwidth_GBps(1));
    }
  }
  std::string shape = join_shape(*dims);
  if (spine_count != 1) {
    shape += '-';
    shape += std::to_string(spine_count);
    shape += "spines";
  }
  name_topology(topology, "fat_tree", shape, attributes.describe());
  return topology;
}

Topology build_tree(ParamReader& in) {
  std::optional<std::vector<std::uint64_t>> fanout = in.integers("fanout", 1, 0, "[4, 8]");
  LevelAttributes attributes = in.levels(fanout ? std::optional<std::uint64_t>(fanout->size()) : std::nullopt, "level");
  if (fanout) {
    std::uint64_t switches = 0;
    std::uint64_t level_size = 1;
    for (std::uint64_t children : *fanout) {
      switches = saturating_add(switches, level_size);
      level_size = saturating_mul(level_size, children);
    }
    const std::uint64_t nodes = saturating_add(switches, level_size);
    in.check_size("fanout", {level_size, switches, saturating_mul(2, nodes - 1)});
  }
  in.throw_if_any();
  // Switches level by level from the root "s"; a child's name appends its index to its parent's
  // path ("s0", "s0.1", "s0.1.2"). level_start[L] is the index of the first switch of level L.
  const std::size_t levels = fanout->size();
  std::vector<std::string> names{"s"};
  std::vector<NodeId> level_start{0};
  for (std::size_t level = 0; level + 1 < levels; ++level) {
    const NodeId begin = level_start.back();
    const NodeId end = static_cast<NodeId>(names.size());
    level_start.push_back(end);
    for (NodeId parent = begin; parent < end; ++parent) {
      for (std::uint64_t child = 0; child < (*fanout)[level]; ++child) {
        std::string name = names[parent] + (parent == 0 ? "" : ".") + std::to_string(child);
        names.push_back(std::move(name));
      }
    }
  }
  level_start.push_back(static_cast<NodeId>(names.size()));
  const NodeId npus = narrow(saturating_product(*fanout));
  Topology topology(npus, std::move(names));
  for (std::size_t level = 0; level < levels; ++level) {
    const NodeId children = narrow((*fanout)[level]);
    const bool leaves = level + 1 == levels;
    for (NodeId parent = level_start[level]; parent < level_start[level + 1]; ++parent) {
      const NodeId first_child =
          (parent - level_start[level]) * children + (leaves ? 0 : npus + level_start[level + 1]);
      for (NodeId child = 0; child < children; ++child) {
        topology.add_duplex(npus + parent, first_child + child, attributes.latency_us(level),
                            attributes.bandwidth_GBps(level));
      }
    }
  }
  name_topology(topology, "tree", join_shape(*fanout), attributes.describe());
  return topology;
}

}  // namespace tenet::generator_detail
