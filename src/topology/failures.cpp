// SPDX-License-Identifier: MIT
// Failure scenarios: removing NPUs and links, renumbering the survivors, and the connectivity
// check that tells the user which pair of NPUs the failures cut apart.

#include <cstdint>
#include <string>
#include <vector>

#include "tenet/common/error.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet {
namespace {

/// Marks every node reachable from `start` along out-links (`forward`) or against in-links.
/// A plain BFS on the CSR arrays: O(nodes + links), nothing to set up per call.
std::vector<char> reachable(const Topology& topology, const Adjacency& adjacency, NodeId start, bool forward) {
  std::vector<char> seen(topology.node_count(), 0);
  std::vector<NodeId> queue;
  queue.reserve(topology.node_count());
  queue.push_back(start);
  seen[start] = 1;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const NodeId node = queue[head];
    for (LinkId id : forward ? adjacency.out(node) : adjacency.in(node)) {
      const Link& link = topology.link(id);
      const NodeId next = forward ? link.dst : link.src;
      if (!seen[next]) {
        seen[next] = 1;
        queue.push_back(next);
      }
    }
  }
  return seen;
}

/// How a failed-link endpoint is written back to the user: NPUs by the number they gave,
/// switches by name (the file names switches, never numbers them).
std::string endpoint_text(const Topology& topology, NodeId node) {
  if (topology.is_switch(node)) return "switch '" + topology.switch_name(node) + "'";
  return std::to_string(node);
}

std::string link_text(const Topology& topology, NodeId src, NodeId dst) {
  return endpoint_text(topology, src) + " -> " + endpoint_text(topology, dst);
}

}  // namespace

bool npus_strongly_connected(const Topology& topology, NodeId* from, NodeId* to) {
  const std::uint32_t npus = topology.npu_count();
  if (npus < 2) return true;
  const Adjacency adjacency(topology);
  // Strongly connected <=> NPU 0 reaches every NPU and every NPU reaches NPU 0; switches only
  // matter as relays, so they need not be reachable themselves.
  const std::vector<char> forward = reachable(topology, adjacency, 0, true);
  for (NodeId npu = 1; npu < npus; ++npu) {
    if (!forward[npu]) {
      if (from) *from = 0;
      if (to) *to = npu;
      return false;
    }
  }
  const std::vector<char> backward = reachable(topology, adjacency, 0, false);
  for (NodeId npu = 1; npu < npus; ++npu) {
    if (!backward[npu]) {
      if (from) *from = npu;
      if (to) *to = 0;
      return false;
    }
  }
  return true;
}

Topology apply_failures(const Topology& topology, const FailureSet& failures, const std::string& source,
                        const std::string& pointer) {
  const std::uint32_t npus = topology.npu_count();
  const std::uint32_t nodes = topology.node_count();
  ProblemList problems(source);

  std::vector<char> npu_failed(npus, 0);
  std::uint32_t failed_npu_count = 0;
  for (std::size_t i = 0; i < failures.npus.size(); ++i) {
    const NodeId npu = failures.npus[i];
    const std::string where = pointer + "/npus/" + std::to_string(i);
    if (npu >= npus) {
      problems.add(where, "there is no NPU " + std::to_string(npu) + " (the topology has " + std::to_string(npus) +
                              " NPUs, ids 0.." + std::to_string(npus == 0 ? 0 : npus - 1) + ")");
    } else if (npu_failed[npu]) {
      problems.add(where, "NPU " + std::to_string(npu) + " is listed twice");
    } else {
      npu_failed[npu] = 1;
      ++failed_npu_count;
    }
  }

  std::vector<char> link_failed(topology.link_count(), 0);
  for (std::size_t i = 0; i < failures.links.size(); ++i) {
    const auto [src, dst] = failures.links[i];
    const std::string where = pointer + "/links/" + std::to_string(i);
    const LinkId id = (src < nodes && dst < nodes) ? topology.find_link(src, dst) : kNoLink;
    if (id == kNoLink) {
      const std::string src_text = src < nodes ? endpoint_text(topology, src) : std::to_string(src);
      const std::string dst_text = dst < nodes ? endpoint_text(topology, dst) : std::to_string(dst);
      problems.add(where, "there is no link " + src_text + " -> " + dst_text);
    } else if (link_failed[id]) {
      problems.add(where, "link " + link_text(topology, src, dst) + " is listed twice");
    } else {
      link_failed[id] = 1;
    }
  }
  problems.throw_if_any();

  if (npus > 0 && failed_npu_count == npus) {
    throw InputError(source, pointer + "/npus", "every NPU failed; nothing is left to run a collective on");
  }

  // A link goes with either of its end NPUs; a switch goes once no link touches it, since a
  // switch that connects nothing would only confuse listings and unwinding.
  std::vector<char> link_removed(topology.link_count(), 0);
  std::vector<char> switch_used(topology.switch_count(), 0);
  bool changed = failed_npu_count > 0;
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    const bool gone = link_failed[id] || (topology.is_npu(link.src) && npu_failed[link.src]) ||
                      (topology.is_npu(link.dst) && npu_failed[link.dst]);
    if (gone) {
      link_removed[id] = 1;
      changed = true;
      continue;
    }
    if (topology.is_switch(link.src)) switch_used[link.src - npus] = 1;
    if (topology.is_switch(link.dst)) switch_used[link.dst - npus] = 1;
  }

  std::vector<NodeId> new_id(nodes, kNoNode);
  std::vector<NodeId> original_ids;
  original_ids.reserve(npus - failed_npu_count);
  for (NodeId npu = 0; npu < npus; ++npu) {
    if (npu_failed[npu]) continue;
    new_id[npu] = static_cast<NodeId>(original_ids.size());
    // Composing through original_npu_id keeps ids meaningful when failures are applied to an
    // already renumbered topology (batch scenarios on top of the file's own `failed`).
    original_ids.push_back(topology.original_npu_id(npu));
  }
  const auto survivors = static_cast<std::uint32_t>(original_ids.size());
  std::vector<std::string> switch_names;
  for (std::uint32_t s = 0; s < topology.switch_count(); ++s) {
    if (!switch_used[s]) {
      changed = true;
      continue;
    }
    new_id[npus + s] = survivors + static_cast<NodeId>(switch_names.size());
    switch_names.push_back(topology.switch_names()[s]);
  }
  if (!changed) return topology;

  Topology result(survivors, std::move(switch_names));
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    if (link_removed[id]) continue;
    Link link = topology.link(id);
    link.src = new_id[link.src];
    link.dst = new_id[link.dst];
    result.add_link(link);
  }
  result.name = topology.name;
  result.description = topology.description;
  // Coordinates no longer describe the survivors (and a grid missing a link is no grid).
  result.layout = GridLayout{};
  if (failed_npu_count > 0) {
    result.original_npu_ids = std::move(original_ids);
  } else {
    result.original_npu_ids = topology.original_npu_ids;
  }

  NodeId from = kNoNode;
  NodeId to = kNoNode;
  if (!npus_strongly_connected(result, &from, &to)) {
    throw InputError(source, pointer,
                     "after the failures NPU " + std::to_string(result.original_npu_id(from)) + " cannot reach NPU " +
                         std::to_string(result.original_npu_id(to)));
  }
  return result;
}

}  // namespace tenet
