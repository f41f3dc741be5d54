// SPDX-License-Identifier: MIT
#include "tenet/topology/topology.hpp"

#include <bit>
#include <cstdio>
#include <limits>
#include <utility>

#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"

namespace tenet {

std::uint64_t GridLayout::size() const {
  std::uint64_t product = dims.empty() ? 0 : 1;
  for (int dim : dims) product *= static_cast<std::uint64_t>(dim);
  return product;
}

std::vector<int> GridLayout::coords(NodeId npu) const {
  std::vector<int> result(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) {
    result[d] = static_cast<int>(npu % static_cast<NodeId>(dims[d]));
    npu /= static_cast<NodeId>(dims[d]);
  }
  return result;
}

NodeId GridLayout::npu_at(const std::vector<int>& c) const {
  NodeId id = 0;
  for (std::size_t d = dims.size(); d-- > 0;) id = id * static_cast<NodeId>(dims[d]) + static_cast<NodeId>(c[d]);
  return id;
}

std::string GridLayout::describe() const {
  if (dims.empty()) return "";
  std::string text = wraps ? "torus " : "mesh ";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d > 0) text += 'x';
    text += std::to_string(dims[d]);
  }
  if (detected) text += ", detected";
  return text;
}

Topology::Topology(std::uint32_t npus, std::vector<std::string> switch_names)
    : npu_count_(npus), switch_names_(std::move(switch_names)) {
  if (npus > kMaxNpus) {
    throw InputError(
        "", "/npus",
        std::to_string(npus) + " NPUs is more than tenet supports (at most " + std::to_string(kMaxNpus) + ")");
  }
  if (switch_names_.size() > kMaxSwitches) {
    throw InputError("", "/switches", "more than " + std::to_string(kMaxSwitches) + " switches");
  }
  graph_ = std::make_unique<Graph>(node_count());
}

LinkId Topology::add_link(const Link& link) {
  LinkId id = static_cast<LinkId>(links_.size());
  links_.push_back(link);
  boost::add_edge(link.src, link.dst, Edge{id}, *graph_);
  return id;
}

LinkId Topology::add_duplex(NodeId src, NodeId dst, double latency_us, double bandwidth_GBps) {
  LinkId forward = add_link({src, dst, latency_us, bandwidth_GBps});
  add_link({dst, src, latency_us, bandwidth_GBps});
  return forward;
}

NodeId Topology::find_switch(const std::string& switch_name_wanted) const {
  for (std::size_t i = 0; i < switch_names_.size(); ++i) {
    if (switch_names_[i] == switch_name_wanted) return npu_count_ + static_cast<NodeId>(i);
  }
  return kNoNode;
}

std::string Topology::node_label(NodeId node) const {
  if (is_npu(node)) return "NPU " + std::to_string(original_npu_id(node));
  if (is_switch(node)) return "switch '" + switch_name(node) + "'";
  return "node " + std::to_string(node);
}

Topology::Topology(const Topology& other)
    : name(other.name),
      description(other.description),
      layout(other.layout),
      original_npu_ids(other.original_npu_ids),
      npu_count_(other.npu_count_),
      switch_names_(other.switch_names_),
      links_(other.links_),
      graph_(std::make_unique<Graph>(*other.graph_)) {}

Topology& Topology::operator=(const Topology& other) {
  if (this != &other) *this = Topology(other);
  return *this;
}

Topology::Topology(Topology&& other) : Topology() { *this = std::move(other); }

Topology& Topology::operator=(Topology&& other) {
  if (this == &other) return *this;
  name = std::move(other.name);
  description = std::move(other.description);
  layout = std::move(other.layout);
  original_npu_ids = std::move(other.original_npu_ids);
  npu_count_ = other.npu_count_;
  switch_names_ = std::move(other.switch_names_);
  links_ = std::move(other.links_);
  graph_.swap(other.graph_);
  // Left valid and empty, as a moved-from standard container is.
  other.npu_count_ = 0;
  other.switch_names_.clear();
  other.links_.clear();
  *other.graph_ = Graph();
  return *this;
}

LinkId Topology::find_link(NodeId src, NodeId dst) const {
  // From whichever end has fewer links: asking a switch with a million ports about one NPU reads
  // that NPU's single link, not the million (which made generating and loading a star quadratic).
  if (boost::out_degree(src, *graph_) <= boost::in_degree(dst, *graph_)) {
    for (auto [it, end] = boost::out_edges(src, *graph_); it != end; ++it) {
      if (boost::target(*it, *graph_) == dst) return (*graph_)[*it].id;
    }
  } else {
    for (auto [it, end] = boost::in_edges(dst, *graph_); it != end; ++it) {
      if (boost::source(*it, *graph_) == src) return (*graph_)[*it].id;
    }
  }
  return kNoLink;
}

std::vector<LinkId> Topology::out_links(NodeId node) const {
  std::vector<LinkId> ids;
  ids.reserve(out_degree(node));
  for (auto [it, end] = boost::out_edges(node, *graph_); it != end; ++it) ids.push_back((*graph_)[*it].id);
  return ids;
}

std::vector<LinkId> Topology::in_links(NodeId node) const {
  std::vector<LinkId> ids;
  ids.reserve(in_degree(node));
  for (auto [it, end] = boost::in_edges(node, *graph_); it != end; ++it) ids.push_back((*graph_)[*it].id);
  return ids;
}

double Topology::ingress_bandwidth_GBps(NodeId node) const {
  double total = 0.0;
  for (auto [it, end] = boost::in_edges(node, *graph_); it != end; ++it)
    total += links_[(*graph_)[*it].id].bandwidth_GBps;
  return total;
}

double Topology::egress_bandwidth_GBps(NodeId node) const {
  double total = 0.0;
  for (auto [it, end] = boost::out_edges(node, *graph_); it != end; ++it)
    total += links_[(*graph_)[*it].id].bandwidth_GBps;
  return total;
}

std::string Topology::fingerprint() const {
  // FNV-1a over the structure; doubles by their bit patterns, so any change of value shows.
  std::uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&hash](std::uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (value >> (8 * byte)) & 0xff;
      hash *= 0x100000001b3ull;
    }
  };
  mix(npu_count_);
  for (const std::string& switch_name_text : switch_names_) {
    for (char c : switch_name_text) mix(static_cast<unsigned char>(c));
    mix(0xff);
  }
  for (const Link& link : links_) {
    mix(link.src);
    mix(link.dst);
    mix(std::bit_cast<std::uint64_t>(link.latency_us));
    mix(std::bit_cast<std::uint64_t>(link.bandwidth_GBps));
  }
  for (NodeId npu = 0; npu < npu_count_; ++npu) mix(original_npu_id(npu));
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

Adjacency::Adjacency(const Topology& topology) {
  const std::uint32_t nodes = topology.node_count();
  out_offsets.assign(nodes + 1, 0);
  in_offsets.assign(nodes + 1, 0);
  for (const Link& link : topology.links()) {
    ++out_offsets[link.src + 1];
    ++in_offsets[link.dst + 1];
  }
  for (std::uint32_t v = 0; v < nodes; ++v) {
    out_offsets[v + 1] += out_offsets[v];
    in_offsets[v + 1] += in_offsets[v];
  }
  out_links.resize(topology.link_count());
  in_links.resize(topology.link_count());
  std::vector<std::uint32_t> out_fill(out_offsets.begin(), out_offsets.end() - 1);
  std::vector<std::uint32_t> in_fill(in_offsets.begin(), in_offsets.end() - 1);
  // Ascending link ids within each node: the order every deterministic tie-break relies on.
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    out_links[out_fill[link.src]++] = id;
    in_links[in_fill[link.dst]++] = id;
  }
}

double path_time_us(const Topology& topology, std::span<const LinkId> path, double bytes) {
  double alpha = 0.0;
  double slowest = std::numeric_limits<double>::infinity();
  for (LinkId id : path) {
    alpha += topology.link(id).latency_us;
    slowest = std::min(slowest, topology.link(id).bandwidth_GBps);
  }
  return link_time_us(bytes, alpha, slowest);
}

}  // namespace tenet
