#include "tenet/schedule/schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace tenet {

Schedule::Schedule(CollectiveKind collective, std::uint64_t size_bytes, std::vector<NodeId> members,
                   std::uint32_t chunks_per_member, std::string algorithm)
    : collective_(collective),
      size_bytes_(size_bytes),
      members_(std::move(members)),
      chunks_per_member_(chunks_per_member),
      algorithm_(std::move(algorithm)) {
  if (members_.empty() || chunks_per_member_ == 0) throw std::logic_error("Schedule: no members or no chunks");
}

TransferId Schedule::add(NodeId src, NodeId dst, TransferKind kind, std::span<const ChunkId> chunks,
                         std::span<const TransferId> deps, double start_us, double end_us, LinkId link) {
  const TransferId id = static_cast<TransferId>(transfers_.size());
  for (TransferId dep : deps) {
    if (dep >= id) throw std::logic_error("Schedule::add: dependency on a later transfer");
  }
  Transfer transfer;
  transfer.src = src;
  transfer.dst = dst;
  transfer.link = link;
  transfer.kind = kind;
  transfer.chunk_begin = chunk_ids_.size();
  transfer.chunk_count = static_cast<std::uint32_t>(chunks.size());
  transfer.dep_begin = dep_ids_.size();
  transfer.dep_count = static_cast<std::uint32_t>(deps.size());
  transfer.start_us = start_us;
  transfer.end_us = end_us;
  chunk_ids_.insert(chunk_ids_.end(), chunks.begin(), chunks.end());
  dep_ids_.insert(dep_ids_.end(), deps.begin(), deps.end());
  transfers_.push_back(transfer);
  return id;
}

double Schedule::planned_time_us() const {
  double latest = 0.0;
  for (const Transfer& transfer : transfers_) latest = std::max(latest, transfer.end_us);
  return latest;
}

void Schedule::reserve(std::size_t transfers, std::size_t chunk_entries, std::size_t dep_entries) {
  transfers_.reserve(transfers);
  chunk_ids_.reserve(chunk_entries);
  dep_ids_.reserve(dep_entries);
}

Schedule::Extension Schedule::extend(std::size_t transfers, std::size_t chunk_entries, std::size_t dep_entries) {
  Extension extension;
  extension.first_id = static_cast<TransferId>(transfers_.size());
  extension.chunk_base = chunk_ids_.size();
  extension.dep_base = dep_ids_.size();
  transfers_.resize(transfers_.size() + transfers);
  chunk_ids_.resize(chunk_ids_.size() + chunk_entries);
  dep_ids_.resize(dep_ids_.size() + dep_entries);
  extension.transfers = {transfers_.data() + extension.first_id, transfers};
  extension.chunk_ids = {chunk_ids_.data() + extension.chunk_base, chunk_entries};
  extension.dep_ids = {dep_ids_.data() + extension.dep_base, dep_entries};
  return extension;
}

void Schedule::forget_links() {
  for (Transfer& transfer : transfers_) transfer.link = kNoLink;
}

}  // namespace tenet
