// SPDX-License-Identifier: MIT
#pragma once
// The network: NPUs (data owners) and switches (forwarders) joined by directed links.
//
// Vertices 0..npu_count()-1 are NPUs, npu_count()..node_count()-1 are switches. Links are directed
// and numbered in insertion order; a duplex cable is two links. The graph structure lives in a
// Boost.Graph adjacency list whose edges carry the link id; link attributes live in one flat array
// indexed by that id, so hot loops read them without touching Boost. Nothing here is p x p.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace tenet {

using NodeId = std::uint32_t;
using LinkId = std::uint32_t;
constexpr NodeId kNoNode = ~NodeId{0};
constexpr LinkId kNoLink = ~LinkId{0};

/// Hard limits, checked before anything is allocated: a topology past them could not be
/// synthesized in this machine's memory anyway.
constexpr std::uint64_t kMaxNpus = 1u << 20;
constexpr std::uint64_t kMaxSwitches = 1u << 20;
constexpr std::uint64_t kMaxLinks = 1u << 26;

/// Link attributes a topology file may give. Within them every time tenet derives is a finite
/// double with room to spare: the slowest transfer (1 PiB over 1e-6 GB/s, 1.1e18 us) and the
/// fastest (1 byte over 1e6 GB/s, 1e-9 us), times thousands of steps or hops. Past them,
/// bytes / bandwidth overflows to infinity or underflows to nothing and the simulator's clock
/// stops moving.
constexpr double kMinBandwidth_GBps = 1e-6;
constexpr double kMaxBandwidth_GBps = 1e6;
constexpr double kMaxLatency_us = 1e6;

/// One directed link. Sending s bytes over it when idle takes latency_us + s / bandwidth.
struct Link {
  NodeId src = kNoNode;
  NodeId dst = kNoNode;
  double latency_us = 0.0;      ///< alpha, microseconds, >= 0
  double bandwidth_GBps = 0.0;  ///< 1 GB/s = 1e9 bytes/s, > 0 (a file's: kMinBandwidth_GBps..kMaxBandwidth_GBps)
};

/// How a generator laid NPUs out on a grid, kept so that dimension-order routing and the torus
/// baselines (Swing, bucket) know the coordinates. NPU id = c[0] + dims[0] * (c[1] + dims[1] * ...):
/// dimension 0 varies fastest.
struct GridLayout {
  std::vector<int> dims;  ///< empty: not a grid
  bool wraps = false;     ///< torus (true) or mesh (false)
  bool detected = false;  ///< recognized from the links (grid_detection.hpp), not declared by the file

  bool is_grid() const { return !dims.empty(); }
  std::uint64_t size() const;
  std::vector<int> coords(NodeId npu) const;
  NodeId npu_at(const std::vector<int>& coords) const;
  /// "torus 4x4", "mesh 2x2x2", "torus 32x32, detected", or "" when not a grid.
  std::string describe() const;
  bool operator==(const GridLayout&) const = default;
};

class Topology {
 public:
  struct Vertex {};
  struct Edge {
    LinkId id = kNoLink;
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Vertex, Edge>;

  Topology() = default;
  /// `npus` NPUs and the given switches, no links yet. Throws InputError past kMaxNpus/kMaxSwitches.
  Topology(std::uint32_t npus, std::vector<std::string> switch_names);
  // Boost 1.74's adjacency_list has copies but no moves (and a swap made of three copies), so a
  // Topology moved by value copied its whole graph: a third of `topo generate hypercube
  // --dimension 20`. The graph lives behind a pointer; moves hand the pointer over.
  Topology(const Topology& other);
  Topology& operator=(const Topology& other);
  Topology(Topology&& other);
  Topology& operator=(Topology&& other);
  ~Topology() = default;

  /// Adds a directed link and returns its id. The caller guarantees src != dst, both exist, and no
  /// link src->dst exists yet (the loader and the generators check this; see has_link).
  LinkId add_link(const Link& link);
  /// Adds src->dst and dst->src with the same attributes; returns the id of src->dst.
  LinkId add_duplex(NodeId src, NodeId dst, double latency_us, double bandwidth_GBps);

  std::uint32_t npu_count() const { return npu_count_; }
  std::uint32_t switch_count() const { return static_cast<std::uint32_t>(switch_names_.size()); }
  std::uint32_t node_count() const { return npu_count_ + switch_count(); }
  std::uint32_t link_count() const { return static_cast<std::uint32_t>(links_.size()); }

  bool is_npu(NodeId node) const { return node < npu_count_; }
  bool is_switch(NodeId node) const { return node >= npu_count_ && node < node_count(); }
  const std::string& switch_name(NodeId node) const { return switch_names_[node - npu_count_]; }
  const std::vector<std::string>& switch_names() const { return switch_names_; }
  /// The switch with this name, or kNoNode.
  NodeId find_switch(const std::string& name) const;
  /// "NPU 3" or "switch 'leaf0'", for messages.
  std::string node_label(NodeId node) const;

  const Link& link(LinkId id) const { return links_[id]; }
  const std::vector<Link>& links() const { return links_; }
  /// The link src->dst, or kNoLink. O(min(out-degree of src, in-degree of dst)).
  LinkId find_link(NodeId src, NodeId dst) const;
  bool has_link(NodeId src, NodeId dst) const { return find_link(src, dst) != kNoLink; }

  /// Ids of the links leaving / entering a node, in insertion order.
  std::vector<LinkId> out_links(NodeId node) const;
  std::vector<LinkId> in_links(NodeId node) const;
  std::uint32_t out_degree(NodeId node) const { return static_cast<std::uint32_t>(boost::out_degree(node, *graph_)); }
  std::uint32_t in_degree(NodeId node) const { return static_cast<std::uint32_t>(boost::in_degree(node, *graph_)); }
  /// Sum of the bandwidths of the links entering a node, GB/s.
  double ingress_bandwidth_GBps(NodeId node) const;
  double egress_bandwidth_GBps(NodeId node) const;

  const Graph& graph() const { return *graph_; }

  /// 16 hex digits identifying the network (NPU count, switch names, links and their attributes,
  /// original ids), so a schedule can tell it is being used with a different topology.
  std::string fingerprint() const;

  /// Name and description as in the topology file.
  std::string name;
  std::string description;
  /// Set by grid generators (torus, mesh, ring, hypercube), a file's `layout`, or grid detection;
  /// cleared by transforms that break it.
  GridLayout layout;
  /// original_npu_ids[i] is the id NPU i had in the file before failures renumbered the survivors;
  /// empty means identity.
  std::vector<NodeId> original_npu_ids;

  /// The id NPU `npu` had in the topology file.
  NodeId original_npu_id(NodeId npu) const { return original_npu_ids.empty() ? npu : original_npu_ids[npu]; }

 private:
  std::uint32_t npu_count_ = 0;
  std::vector<std::string> switch_names_;
  std::vector<Link> links_;
  std::unique_ptr<Graph> graph_ = std::make_unique<Graph>();  ///< never null
};

/// Flat, read-only adjacency for hot loops: CSR arrays of link ids by source and by destination,
/// built once in O(nodes + links).
struct Adjacency {
  std::vector<std::uint32_t> out_offsets;  ///< node_count + 1 entries
  std::vector<LinkId> out_links;
  std::vector<std::uint32_t> in_offsets;
  std::vector<LinkId> in_links;

  explicit Adjacency(const Topology& topology);
  std::span<const LinkId> out(NodeId node) const {
    return {out_links.data() + out_offsets[node], out_links.data() + out_offsets[node + 1]};
  }
  std::span<const LinkId> in(NodeId node) const {
    return {in_links.data() + in_offsets[node], in_links.data() + in_offsets[node + 1]};
  }
};

/// Time of `bytes` over a path of links with nothing else on it: the sum of the alphas plus the
/// bytes at the slowest link's bandwidth (the simulator's and the synthesizer's cost of a route).
double path_time_us(const Topology& topology, std::span<const LinkId> path, double bytes);

}  // namespace tenet
