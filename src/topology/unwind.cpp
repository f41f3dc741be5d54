// SPDX-License-Identifier: MIT
// Switch unwinding (TACOS Sec. IV-G) generalised from one switch to trees and graphs of switches:
// the NPUs of each switch group are put on the Patarasuk-Yuan DFS ring, every NPU gets logical
// links to the next `degree` NPUs on it (or to those at the offsets of a radix: Bruck et al.,
// "Efficient algorithms for all-to-all communications in multiport message-passing systems",
// IEEE TPDS 1997), and each logical link is priced by the physical path it would take
// through the switches.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tenet/common/error.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

/// Compressed rows: row r holds entries [offsets[r], offsets[r+1]).
struct Rows {
  std::vector<std::uint32_t> offsets{0};
  std::vector<std::uint32_t> entries;

  std::span<const std::uint32_t> row(std::size_t r) const {
    return {entries.data() + offsets[r], entries.data() + offsets[r + 1]};
  }
  void close_row() { offsets.push_back(static_cast<std::uint32_t>(entries.size())); }
};

/// One logical NPU-NPU link and the slice of `Unwinder::path_links_` it travels over; src is
/// kNoNode for a pair that has no path inside its group.
struct LogicalLink {
  NodeId src = kNoNode;
  NodeId dst = kNoNode;
  std::uint32_t path_begin = 0;
  std::uint32_t path_end = 0;
};

class Unwinder {
 public:
  /// `radix` 0: links to the next `degree` NPUs on the ring; otherwise the radix's offsets.
  Unwinder(const Topology& topology, int degree, bool bidirectional_ring, std::uint32_t radix)
      : topology_(topology),
        adjacency_(topology),
        degree_(degree),
        bidirectional_ring_(bidirectional_ring),
        radix_(radix),
        npus_(topology.npu_count()),
        switches_(topology.switch_count()),
        group_of_(switches_, kNone),
        visited_(switches_, 0),
        member_group_(npus_, kNone),
        distance_(switches_, kNone),
        usage_(topology.link_count(), 0) {
    build_switch_rows();
  }

  /// After run(): the largest degree a group got.
  std::uint32_t applied_degree() const { return applied_degree_; }

  Topology run() {
    std::uint32_t group = 0;
    // Groups in order of their lowest-numbered switch, each walked from that switch.
    for (std::uint32_t s = 0; s < switches_; ++s) {
      if (visited_[s]) continue;
      unwind_group(s, group++);
    }
    return assemble();
  }

 private:
  NodeId node_of(std::uint32_t switch_index) const { return npus_ + switch_index; }
  std::uint32_t switch_index(NodeId node) const { return node - npus_; }

  /// Switch-to-switch links as CSR over switch indices: undirected neighbours for the DFS (both
  /// directions of each link, in link-id order so "children in link-id order" holds), and
  /// directed links for the routing BFS and path choice, which must not scan the NPU ports of
  /// big switches.
  void build_switch_rows() {
    std::vector<std::uint32_t> undirected_count(switches_ + 1, 0);
    std::vector<std::uint32_t> out_count(switches_ + 1, 0);
    std::vector<std::uint32_t> in_count(switches_ + 1, 0);
    for (const Link& link : topology_.links()) {
      if (!topology_.is_switch(link.src) || !topology_.is_switch(link.dst)) continue;
      ++undirected_count[switch_index(link.src) + 1];
      ++undirected_count[switch_index(link.dst) + 1];
      ++out_count[switch_index(link.src) + 1];
      ++in_count[switch_index(link.dst) + 1];
    }
    for (std::uint32_t s = 0; s < switches_; ++s) {
      undirected_count[s + 1] += undirected_count[s];
      out_count[s + 1] += out_count[s];
      in_count[s + 1] += in_count[s];
    }
    neighbours_.offsets = undirected_count;
    neighbours_.entries.resize(undirected_count[switches_]);
    switch_out_.offsets = out_count;
    switch_out_.entries.resize(out_count[switches_]);
    switch_in_.offsets = in_count;
    switch_in_.entries.resize(in_count[switches_]);
    std::vector<std::uint32_t> undirected_fill(undirected_count.begin(), undirected_count.end() - 1);
    std::vector<std::uint32_t> out_fill(out_count.begin(), out_count.end() - 1);
    std::vector<std::uint32_t> in_fill(in_count.begin(), in_count.end() - 1);
    for (LinkId id = 0; id < topology_.link_count(); ++id) {
      const Link& link = topology_.link(id);
      if (!topology_.is_switch(link.src) || !topology_.is_switch(link.dst)) continue;
      const std::uint32_t a = switch_index(link.src);
      const std::uint32_t b = switch_index(link.dst);
      neighbours_.entries[undirected_fill[a]++] = b;
      neighbours_.entries[undirected_fill[b]++] = a;
      switch_out_.entries[out_fill[a]++] = id;
      switch_in_.entries[in_fill[b]++] = id;
    }
  }

  /// Preorder of the switches of one group: the order Patarasuk and Yuan number switches in, so
  /// that listing each switch's NPUs in turn gives a contention-free ring on a tree.
  std::vector<std::uint32_t> dfs_preorder(std::uint32_t root, std::uint32_t group) {
    std::vector<std::uint32_t> order;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stack;  // (switch, next neighbour slot)
    visited_[root] = 1;
    group_of_[root] = group;
    order.push_back(root);
    stack.emplace_back(root, neighbours_.offsets[root]);
    while (!stack.empty()) {
      auto& [s, slot] = stack.back();
      if (slot == neighbours_.offsets[s + 1]) {
        stack.pop_back();
        continue;
      }
      const std::uint32_t next = neighbours_.entries[slot++];
      if (visited_[next]) continue;
      visited_[next] = 1;
      group_of_[next] = group;
      order.push_back(next);
      stack.emplace_back(next, neighbours_.offsets[next]);
    }
    return order;
  }

  /// NPUs attached to the group (by a link in either direction), each listed once at the first
  /// switch of the preorder it hangs off, ascending id within one switch.
  std::vector<NodeId> members_in_order(const std::vector<std::uint32_t>& preorder, std::uint32_t group) {
    std::vector<NodeId> members;
    std::vector<NodeId> at_switch;
    for (std::uint32_t s : preorder) {
      at_switch.clear();
      const NodeId node = node_of(s);
      for (LinkId id : adjacency_.out(node)) {
        if (topology_.is_npu(topology_.link(id).dst)) at_switch.push_back(topology_.link(id).dst);
      }
      for (LinkId id : adjacency_.in(node)) {
        if (topology_.is_npu(topology_.link(id).src)) at_switch.push_back(topology_.link(id).src);
      }
      std::sort(at_switch.begin(), at_switch.end());
      for (NodeId npu : at_switch) {
        if (member_group_[npu] == group) continue;  // also catches duplicates within at_switch
        member_group_[npu] = group;
        members.push_back(npu);
      }
    }
    return members;
  }

  void unwind_group(std::uint32_t root, std::uint32_t group) {
    const std::vector<std::uint32_t> preorder = dfs_preorder(root, group);
    const std::vector<NodeId> members = members_in_order(preorder, group);
    const auto count = static_cast<std::uint32_t>(members.size());
    if (count < 2) return;
    // Ring positions ahead of each member that it gets a link to.
    std::vector<std::uint32_t> offsets;
    if (radix_ == 0) {
      const std::uint32_t degree = std::min(static_cast<std::uint32_t>(degree_), count - 1);
      for (std::uint32_t j = 1; j <= degree; ++j) offsets.push_back(j);
      if (bidirectional_ring_ && degree == 1 && count > 2) offsets.push_back(count - 1);
      applied_degree_ = std::max(applied_degree_, degree);
    } else {
      // j * radix^m for every digit j and place m: a member reaches any other in one hop per
      // nonzero digit of their distance, so in ceil(log_radix count) hops.
      for (std::uint64_t place = 1; place < count; place *= radix_) {
        for (std::uint64_t j = 1; j < radix_ && j * place < count; ++j)
          offsets.push_back(static_cast<std::uint32_t>(j * place));
      }
      applied_degree_ = std::max(applied_degree_, static_cast<std::uint32_t>(offsets.size()));
    }

    // Each member's links into the group (uplinks, as target switch indices, ascending: the key
    // that lets members behind the same switches share one BFS) and out of it (downlinks).
    Rows uplink_switches;
    Rows uplinks;
    Rows downlinks;
    for (NodeId npu : members) {
      for (LinkId id : adjacency_.out(npu)) {
        const NodeId dst = topology_.link(id).dst;
        if (topology_.is_switch(dst) && group_of_[switch_index(dst)] == group) {
          uplinks.entries.push_back(id);
          uplink_switches.entries.push_back(switch_index(dst));
        }
      }
      std::sort(uplink_switches.entries.begin() + uplink_switches.offsets.back(), uplink_switches.entries.end());
      uplinks.close_row();
      uplink_switches.close_row();
      for (LinkId id : adjacency_.in(npu)) {
        const NodeId src = topology_.link(id).src;
        if (topology_.is_switch(src) && group_of_[switch_index(src)] == group) downlinks.entries.push_back(id);
      }
      downlinks.close_row();
    }

    std::vector<std::uint32_t> by_ingress(count);
    for (std::uint32_t i = 0; i < count; ++i) by_ingress[i] = i;
    std::stable_sort(by_ingress.begin(), by_ingress.end(), [&](std::uint32_t a, std::uint32_t b) {
      const auto ra = uplink_switches.row(a);
      const auto rb = uplink_switches.row(b);
      return std::lexicographical_compare(ra.begin(), ra.end(), rb.begin(), rb.end());
    });

    // Slots in member order, so the result lists links by ring position whatever order the
    // BFS groups visit the members in.
    const auto per_member = static_cast<std::uint32_t>(offsets.size());
    const std::size_t base = logical_.size();
    logical_.resize(base + std::size_t{count} * per_member);
    for (std::uint32_t k = 0; k < count;) {
      const auto sources = uplink_switches.row(by_ingress[k]);
      std::uint32_t end = k + 1;
      while (end < count && std::ranges::equal(uplink_switches.row(by_ingress[end]), sources)) ++end;
      bfs(sources);
      for (; k < end; ++k) {
        const std::uint32_t i = by_ingress[k];
        for (std::uint32_t slot = 0; slot < per_member; ++slot) {
          const std::uint32_t t = (i + offsets[slot]) % count;
          logical_[base + std::size_t{i} * per_member + slot] =
              route(members[i], uplinks.row(i), members[t], downlinks.row(t));
        }
      }
    }
    clear_bfs();
  }

  /// Fewest-hop distances over directed switch-switch links from a set of ingress switches.
  void bfs(std::span<const std::uint32_t> sources) {
    clear_bfs();
    sources_ = sources;
    for (std::uint32_t s : sources) {
      distance_[s] = 0;
      touched_.push_back(s);
    }
    for (std::size_t head = 0; head < touched_.size(); ++head) {
      const std::uint32_t s = touched_[head];
      for (LinkId id : switch_out_.row(s)) {
        const std::uint32_t next = switch_index(topology_.link(id).dst);
        if (distance_[next] != kNone) continue;
        distance_[next] = distance_[s] + 1;
        touched_.push_back(next);
      }
    }
  }

  void clear_bfs() {
    for (std::uint32_t s : touched_) distance_[s] = kNone;
    touched_.clear();
    sources_ = {};
  }

  /// Whether `candidate` is the better of two links that would both keep a path shortest: the
  /// less used so far, then the lower id. Spreading logical links over parallel equal-hop paths
  /// (the spines of a fat tree) is what keeps their shares of the bandwidth large.
  bool better(LinkId candidate, LinkId current) const {
    if (current == kNoLink) return true;
    if (usage_[candidate] != usage_[current]) return usage_[candidate] < usage_[current];
    return candidate < current;
  }

  /// The physical path of the logical link src -> dst, one of the fewest-hop ones under the
  /// current BFS, chosen backwards from dst one link at a time by `better`.
  LogicalLink route(NodeId src, std::span<const std::uint32_t> src_uplinks, NodeId dst,
                    std::span<const std::uint32_t> dst_downlinks) {
    LinkId exit = kNoLink;
    std::uint32_t best = kNone;
    for (LinkId id : dst_downlinks) {
      const std::uint32_t d = distance_[switch_index(topology_.link(id).src)];
      if (d < best || (d == best && d != kNone && better(id, exit))) {
        best = d;
        exit = id;
      }
    }
    // Only one-way switch links can leave dst unreachable inside the group; such a pair simply
    // gets no logical link (connectivity is checked on the result by the caller's validation).
    if (exit == kNoLink) return {};

    const auto begin = static_cast<std::uint32_t>(path_links_.size());
    path_links_.push_back(exit);
    std::uint32_t at = switch_index(topology_.link(exit).src);
    while (distance_[at] != 0) {
      const std::uint32_t wanted = distance_[at] - 1;
      LinkId pick = kNoLink;
      if (wanted == 0) {
        // The predecessor is an ingress switch: look from those few rather than through every
        // in-link of `at`, which for a spine means every leaf.
        for (std::uint32_t s : sources_) {
          for (LinkId id : switch_out_.row(s)) {
            if (topology_.link(id).dst == node_of(at) && better(id, pick)) pick = id;
          }
        }
      } else {
        for (LinkId id : switch_in_.row(at)) {
          if (distance_[switch_index(topology_.link(id).src)] == wanted && better(id, pick)) pick = id;
        }
      }
      path_links_.push_back(pick);
      at = switch_index(topology_.link(pick).src);
    }
    for (LinkId id : src_uplinks) {
      if (topology_.link(id).dst == node_of(at)) {
        path_links_.push_back(id);
        break;
      }
    }
    std::reverse(path_links_.begin() + begin, path_links_.end());
    for (std::size_t p = begin; p < path_links_.size(); ++p) ++usage_[path_links_[p]];
    return {src, dst, begin, static_cast<std::uint32_t>(path_links_.size())};
  }

  /// NPU-NPU links of the input first (their ids keep their order), then the logical links in
  /// the order they were made; parallel links merge.
  Topology assemble() const {
    std::vector<Link> links;
    std::unordered_map<std::uint64_t, std::size_t> index;
    auto key = [](NodeId src, NodeId dst) { return (std::uint64_t{src} << 32) | dst; };
    for (const Link& link : topology_.links()) {
      if (!topology_.is_npu(link.src) || !topology_.is_npu(link.dst)) continue;
      index.emplace(key(link.src, link.dst), links.size());
      links.push_back(link);
    }
    for (const LogicalLink& logical : logical_) {
      if (logical.src == kNoNode) continue;  // unreachable inside its group
      Link link{logical.src, logical.dst, 0.0, std::numeric_limits<double>::infinity()};
      for (std::uint32_t p = logical.path_begin; p < logical.path_end; ++p) {
        const Link& physical = topology_.link(path_links_[p]);
        link.latency_us += physical.latency_us;
        link.bandwidth_GBps = std::min(link.bandwidth_GBps, physical.bandwidth_GBps / usage_[path_links_[p]]);
      }
      const auto [it, inserted] = index.emplace(key(link.src, link.dst), links.size());
      if (inserted) {
        links.push_back(link);
      } else {
        // The NPUs can use both routes at once, but a transfer still waits for the slower alpha.
        links[it->second].bandwidth_GBps += link.bandwidth_GBps;
        links[it->second].latency_us = std::max(links[it->second].latency_us, link.latency_us);
      }
    }

    Topology result(npus_, {});
    for (const Link& link : links) result.add_link(link);
    result.name = topology_.name;
    result.description = topology_.description;
    // NPU ids and coordinates are untouched and every NPU-NPU link survives, so a grid stays a grid.
    result.layout = topology_.layout;
    result.original_npu_ids = topology_.original_npu_ids;
    return result;
  }

  const Topology& topology_;
  const Adjacency adjacency_;
  const int degree_;
  const bool bidirectional_ring_;
  const std::uint32_t radix_;
  const std::uint32_t npus_;
  const std::uint32_t switches_;
  Rows neighbours_;                         ///< undirected switch neighbours (switch indices)
  Rows switch_out_;                         ///< directed switch -> switch link ids, by source switch
  Rows switch_in_;                          ///< the same links by destination switch
  std::span<const std::uint32_t> sources_;  ///< ingress switches of the current BFS
  std::vector<std::uint32_t> group_of_;
  std::vector<char> visited_;
  std::vector<std::uint32_t> member_group_;
  std::vector<std::uint32_t> distance_;
  std::vector<std::uint32_t> touched_;
  std::vector<std::uint32_t> usage_;  ///< logical links crossing each physical link
  std::vector<LinkId> path_links_;
  std::vector<LogicalLink> logical_;
  std::uint32_t applied_degree_ = 0;  ///< the largest degree a group got (the request, capped)
};

}  // namespace

Topology unwind_switches(const Topology& topology, int degree, bool bidirectional_ring, std::uint32_t* applied_degree) {
  if (degree < 1) {
    throw InputError("", "", "the switch unwinding degree must be at least 1, got " + std::to_string(degree));
  }
  if (applied_degree) *applied_degree = 0;
  if (topology.switch_count() == 0) return topology;
  Unwinder unwinder(topology, degree, bidirectional_ring, 0);
  Topology result = unwinder.run();
  if (applied_degree) *applied_degree = unwinder.applied_degree();
  return result;
}

Topology unwind_switches_in_radix(const Topology& topology, std::uint32_t radix, std::uint32_t* links_per_npu) {
  if (radix < 2) {
    throw InputError("", "", "the switch unwinding radix must be at least 2, got " + std::to_string(radix));
  }
  if (links_per_npu) *links_per_npu = 0;
  if (topology.switch_count() == 0) return topology;
  Unwinder unwinder(topology, 1, false, radix);
  Topology result = unwinder.run();
  if (links_per_npu) *links_per_npu = unwinder.applied_degree();
  return result;
}

}  // namespace tenet
