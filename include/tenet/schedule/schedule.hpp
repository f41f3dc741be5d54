// SPDX-License-Identifier: MIT
#pragma once
// The one IR every producer (synthesizer, baselines) emits and every consumer (verifier,
// simulator, MSCCL writer, reports) reads: a DAG of transfers over chunks.
//
// Chunks. The collective's vector of `size_bytes` is cut into members.size() * chunks_per_member
// equal chunks. Chunk c belongs to member index c / chunks_per_member, i.e. NPU
// members[c / chunks_per_member]: in all-gather that member starts with it, in reduce-scatter
// that member must end with its fully reduced value, in all-reduce every member ends with every
// chunk fully reduced.
//
// Transfers. A transfer moves a set of chunks (one for synthesized schedules, a block for
// baselines) from NPU src to NPU dst. kCopy overwrites dst's copy of each chunk; kReduce combines
// src's value into dst's (dst must not already hold any of the same contributions). Transfers are
// stored in a topological order: every dependency has a smaller index. A transfer may start when
// all its dependencies have finished; start_us/end_us are what the producer planned.
// `link` names the single link a neighbour transfer was planned on (synthesized schedules);
// `route` names the path of physical links a transfer through switches was planned on (switch-
// native synthesis: the sender's port into a switch, fabric links, the port into the receiver),
// from the schedule's table of routes. With neither, the simulator routes the transfer (baselines
// whose peers need not be neighbours).
//
// Storage is by column, sized for the largest synthesized schedules (268 million transfers on a
// 128x128 mesh): endpoints, link and kind per transfer, start and end as indices into a table of
// distinct times (schedules are built from events and steps, so times repeat), and chunk and
// dependency lists in ListColumns that cost 4 bytes a transfer while each list has at most one
// entry. About 29 bytes a synthesized transfer. `Transfer` is a view assembled from the columns.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/common/uninitialized.hpp"
#include "tenet/schedule/list_column.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

using TransferId = std::uint32_t;
using ChunkId = std::uint32_t;
using RouteId = std::uint32_t;
constexpr RouteId kNoRoute = ~RouteId{0};

enum class TransferKind : std::uint8_t { kCopy, kReduce };

/// One transfer as read from a Schedule (a copy assembled from its columns, not storage).
struct Transfer {
  std::uint64_t chunk_begin = 0;  ///< where the chunk list starts (read it with chunks_of)
  std::uint64_t dep_begin = 0;    ///< where the dependency list starts (read it with deps_of)
  double start_us = 0.0;          ///< planned start
  double end_us = 0.0;            ///< planned end
  NodeId src = kNoNode;
  NodeId dst = kNoNode;
  LinkId link = kNoLink;     ///< planned link, or kNoLink when the transfer is routed
  RouteId route = kNoRoute;  ///< planned route through switches (Schedule::route_links)
  std::uint32_t chunk_count = 0;
  std::uint32_t dep_count = 0;
  TransferKind kind = TransferKind::kCopy;
};

class Schedule {
 public:
  Schedule() = default;
  Schedule(CollectiveKind collective, std::uint64_t size_bytes, std::vector<NodeId> members,
           std::uint32_t chunks_per_member, std::string algorithm);

  /// Appends a transfer; every id in `deps` must be smaller than the new transfer's id (checked
  /// with an exception: producers are code, not users, so a violation is a bug).
  TransferId add(NodeId src, NodeId dst, TransferKind kind, std::span<const ChunkId> chunks,
                 std::span<const TransferId> deps, double start_us, double end_us, LinkId link = kNoLink);
  /// Appends a transfer with the same dependencies as `sibling`, sharing its list: a level of a
  /// tree that waits on the same hundreds of reductions stores that list once.
  TransferId add_sharing_deps(TransferId sibling, NodeId src, NodeId dst, TransferKind kind,
                              std::span<const ChunkId> chunks, double start_us, double end_us, LinkId link = kNoLink);

  CollectiveKind collective() const { return collective_; }
  std::uint64_t size_bytes() const { return size_bytes_; }
  const std::vector<NodeId>& members() const { return members_; }
  std::uint32_t chunks_per_member() const { return chunks_per_member_; }
  std::uint32_t chunk_count() const { return static_cast<std::uint32_t>(members_.size()) * chunks_per_member_; }
  /// Bytes of one chunk (a double: the size need not divide evenly).
  double chunk_bytes() const { return static_cast<double>(size_bytes_) / chunk_count(); }
  /// The NPU chunk c belongs to.
  NodeId owner(ChunkId chunk) const { return members_[chunk / chunks_per_member_]; }
  const std::string& algorithm() const { return algorithm_; }
  /// The same transfers for a collective of another size (chunk sizes scale, planned times stay).
  Schedule resized(std::uint64_t size_bytes) const;
  /// No transfers yet, the rest as here (collective, size, members, algorithm, notes, routes) at
  /// `chunks_per_member` chunks per member: what a copy with edited transfers starts from.
  Schedule empty_like(std::uint32_t chunks_per_member) const;

  std::size_t size() const { return src_.size(); }
  Transfer transfer(TransferId id) const {
    Transfer transfer;
    transfer.chunk_begin = chunks_.begin_of(id);
    transfer.chunk_count = chunks_.count_of(id);
    transfer.dep_begin = deps_.begin_of(id);
    transfer.dep_count = deps_.count_of(id);
    transfer.start_us = times_[start_at_[id]];
    transfer.end_us = times_[end_at_[id]];
    transfer.src = src_[id];
    transfer.dst = dst_[id];
    transfer.link = decoded_link(link_[id]);
    transfer.route = decoded_route(link_[id]);
    transfer.kind = kind_[id];
    return transfer;
  }
  NodeId src(TransferId id) const { return src_[id]; }
  std::uint32_t chunk_count(TransferId id) const { return chunks_.count_of(id); }
  NodeId dst(TransferId id) const { return dst_[id]; }
  LinkId link(TransferId id) const { return decoded_link(link_[id]); }
  RouteId route(TransferId id) const { return decoded_route(link_[id]); }
  /// What add() took as the transfer's `link`: its link, on_route(its route), or kNoLink.
  LinkId planned_link(TransferId id) const { return link_[id]; }

  /// Adds a route (physical links in order, from a transfer's src through switches to its dst)
  /// and returns its id. Transfers name it by passing on_route(id) as their link.
  RouteId add_route(std::span<const LinkId> links);
  std::uint32_t route_count() const { return static_cast<std::uint32_t>(route_offsets_.size() - 1); }
  std::span<const LinkId> route_links(RouteId route) const {
    return {route_links_.data() + route_offsets_[route], route_offsets_[route + 1] - route_offsets_[route]};
  }
  /// The value to pass as `link` to add() (or write into Extension::link) for a transfer planned
  /// on a route: routes share the link column, tagged by its top bit.
  static LinkId on_route(RouteId route) { return route | kRouteTag; }
  TransferKind kind(TransferId id) const { return kind_[id]; }
  double start_us(TransferId id) const { return times_[start_at_[id]]; }
  double end_us(TransferId id) const { return times_[end_at_[id]]; }
  /// Asks the cache for a transfer's time indices ahead of a random access to them.
  void prefetch_times(TransferId id) const {
    __builtin_prefetch(start_at_.data() + id);
    __builtin_prefetch(end_at_.data() + id);
  }
  std::span<const ChunkId> chunks_of(TransferId id) const { return chunks_.at(id); }
  std::span<const TransferId> deps_of(TransferId id) const { return deps_.at(id); }
  /// True when two transfers name one stored dependency list (add_sharing_deps): 1,023 sends of
  /// a 1,024-NPU direct all-reduce share each list of 1,023, and a consumer that walks the list
  /// once per sender takes 10^9 steps.
  bool same_deps(TransferId a, TransferId b) const {
    return deps_.begin_of(a) == deps_.begin_of(b) && deps_.count_of(a) == deps_.count_of(b);
  }
  std::span<const ChunkId> chunks_of(const Transfer& transfer) const {
    return chunks_.range(transfer.chunk_begin, transfer.chunk_count);
  }
  std::span<const TransferId> deps_of(const Transfer& transfer) const {
    return deps_.range(transfer.dep_begin, transfer.dep_count);
  }
  double bytes_of(const Transfer& transfer) const { return chunk_bytes() * transfer.chunk_count; }
  /// Chunk list entries stored in all.
  std::size_t chunk_entries() const { return chunks_.entries(); }
  /// True when no transfer moves more than one chunk (every synthesized schedule).
  bool at_most_one_chunk_each() const { return chunks_.single(); }

  /// Every transfer in id order, as views: `for (const Transfer& transfer : schedule.transfers())`.
  class TransferRange {
   public:
    class Iterator {
     public:
      Iterator(const Schedule* schedule, TransferId id) : schedule_(schedule), id_(id) {}
      Transfer operator*() const { return schedule_->transfer(id_); }
      Iterator& operator++() {
        ++id_;
        return *this;
      }
      bool operator!=(const Iterator& other) const { return id_ != other.id_; }

     private:
      const Schedule* schedule_;
      TransferId id_;
    };
    explicit TransferRange(const Schedule* schedule) : schedule_(schedule) {}
    Iterator begin() const { return {schedule_, 0}; }
    Iterator end() const { return {schedule_, static_cast<TransferId>(schedule_->size())}; }

   private:
    const Schedule* schedule_;
  };
  TransferRange transfers() const { return TransferRange(this); }

  /// Latest planned end (0 for an empty schedule).
  double planned_time_us() const;

  void reserve(std::size_t transfers, std::size_t chunk_entries, std::size_t dep_entries);

  /// Bulk appending, for producers that fill millions of transfers in parallel. add_times stores
  /// a table of times and returns the index of its first entry; extend appends `count` transfers
  /// of one chunk each, the i-th with dep_counts[i] dependencies. The producer then writes every
  /// column entry of the new transfers (start_at/end_at are indices into the time tables), each
  /// chunk through chunk_slot and each dependency list through dep_slots. Nothing is checked
  /// here; the verifier checks the result.
  std::uint32_t add_times(std::span<const double> times);
  struct Extension {
    TransferId first_id;
    std::span<NodeId> src;
    std::span<NodeId> dst;
    std::span<LinkId> link;
    std::span<TransferKind> kind;
    std::span<std::uint32_t> start_at;
    std::span<std::uint32_t> end_at;
  };
  Extension extend(std::size_t count, std::span<const std::uint32_t> dep_counts);
  ChunkId* chunk_slot(TransferId id) { return chunks_.slots(id); }
  TransferId* dep_slots(TransferId id) { return deps_.slots(id); }

  /// Marks every transfer as routed (no link, no route): for a schedule planned on a derived
  /// topology (switches unwound) whose links the user's topology does not have.
  void forget_links();

  /// Replaces every transfer's planned start and end (one entry per transfer, in id order).
  void retime(std::span<const double> starts, std::span<const double> ends);

  /// Free-form notes a producer wants the user to see (e.g. "swing on a non-torus: logical 1D").
  std::vector<std::string> notes;

 private:
  static constexpr LinkId kRouteTag = LinkId{1} << 31;
  static LinkId decoded_link(LinkId stored) {
    return stored == kNoLink || (stored & kRouteTag) == 0 ? stored : kNoLink;
  }
  static RouteId decoded_route(LinkId stored) {
    return stored == kNoLink || (stored & kRouteTag) == 0 ? kNoRoute : stored & ~kRouteTag;
  }
  std::uint32_t time_index(double us);
  /// Every column but the dependencies, for one new transfer.
  void push_columns(NodeId src, NodeId dst, TransferKind kind, std::span<const ChunkId> chunks, double start_us,
                    double end_us, LinkId link);

  CollectiveKind collective_ = CollectiveKind::kAllReduce;
  std::uint64_t size_bytes_ = 0;
  std::vector<NodeId> members_;
  std::uint32_t chunks_per_member_ = 1;
  std::string algorithm_;
  UninitializedVector<NodeId> src_;
  UninitializedVector<NodeId> dst_;
  UninitializedVector<LinkId> link_;
  UninitializedVector<TransferKind> kind_;
  UninitializedVector<std::uint32_t> start_at_;  ///< index into times_
  UninitializedVector<std::uint32_t> end_at_;
  std::vector<double> times_;
  /// A small direct-mapped cache of recently added times (index + 1; 0 is empty), so add()
  /// reuses table entries without a map that could outgrow the columns.
  std::vector<std::uint32_t> recent_times_;
  ListColumn chunks_;
  ListColumn deps_;
  std::vector<std::uint64_t> route_offsets_ = {0};
  std::vector<LinkId> route_links_;
};

}  // namespace tenet
