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
// `link` names the single link a neighbour transfer was planned on (synthesized schedules); kNoLink
// means "routed by the simulator" (baselines whose peers need not be neighbours).
//
// Storage is flat: dependency and chunk lists live in two shared arrays indexed by ranges, so a
// ring all-reduce on 4,096 NPUs (33 million transfers) stays around 1.5 GB.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tenet/collective.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

using TransferId = std::uint32_t;
using ChunkId = std::uint32_t;

enum class TransferKind : std::uint8_t { kCopy, kReduce };

/// 56 bytes; fields ordered largest first so no padding is wasted on millions of transfers.
struct Transfer {
  std::uint64_t chunk_begin = 0;  ///< index into the schedule's chunk id array
  std::uint64_t dep_begin = 0;    ///< index into the schedule's dependency array
  double start_us = 0.0;          ///< planned start
  double end_us = 0.0;            ///< planned end
  NodeId src = kNoNode;
  NodeId dst = kNoNode;
  LinkId link = kNoLink;          ///< planned link, or kNoLink when the transfer is routed
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

  std::size_t size() const { return transfers_.size(); }
  const Transfer& transfer(TransferId id) const { return transfers_[id]; }
  const std::vector<Transfer>& transfers() const { return transfers_; }
  std::span<const ChunkId> chunks_of(const Transfer& transfer) const {
    return {chunk_ids_.data() + transfer.chunk_begin, transfer.chunk_count};
  }
  std::span<const TransferId> deps_of(const Transfer& transfer) const {
    return {dep_ids_.data() + transfer.dep_begin, transfer.dep_count};
  }
  double bytes_of(const Transfer& transfer) const { return chunk_bytes() * transfer.chunk_count; }

  /// Latest planned end (0 for an empty schedule).
  double planned_time_us() const;

  void reserve(std::size_t transfers, std::size_t chunk_entries, std::size_t dep_entries);

  /// Room for `transfers` more transfers whose chunk and dependency lists take `chunk_entries`
  /// and `dep_entries` in all, for producers that fill them in parallel. The producer writes
  /// every Transfer (with chunk_begin/dep_begin inside the given ranges) and every list entry;
  /// nothing is checked here, the verifier checks the result.
  struct Extension {
    TransferId first_id;
    std::span<Transfer> transfers;
    std::uint64_t chunk_base;   ///< chunk_begin of the first new list entry
    std::span<ChunkId> chunk_ids;
    std::uint64_t dep_base;
    std::span<TransferId> dep_ids;
  };
  Extension extend(std::size_t transfers, std::size_t chunk_entries, std::size_t dep_entries);

  /// Marks every transfer as routed (link = kNoLink): for a schedule planned on a derived
  /// topology (switches unwound) whose links the user's topology does not have.
  void forget_links();

  /// Free-form notes a producer wants the user to see (e.g. "swing on a non-torus: logical 1D").
  std::vector<std::string> notes;

 private:
  CollectiveKind collective_ = CollectiveKind::kAllReduce;
  std::uint64_t size_bytes_ = 0;
  std::vector<NodeId> members_;
  std::uint32_t chunks_per_member_ = 1;
  std::string algorithm_;
  std::vector<Transfer> transfers_;
  std::vector<ChunkId> chunk_ids_;
  std::vector<TransferId> dep_ids_;
};

}  // namespace tenet
