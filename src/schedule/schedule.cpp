// SPDX-License-Identifier: MIT
#include "tenet/schedule/schedule.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

namespace tenet {
namespace {

/// Slots of the recent-times cache: a baseline's steps and a JSON file's events repeat far fewer
/// distinct times than this at a time.
constexpr std::size_t kRecentTimes = 4096;

}  // namespace

Schedule::Schedule(CollectiveKind collective, std::uint64_t size_bytes, std::vector<NodeId> members,
                   std::uint32_t chunks_per_member, std::string algorithm)
    : collective_(collective),
      size_bytes_(size_bytes),
      members_(std::move(members)),
      chunks_per_member_(chunks_per_member),
      algorithm_(std::move(algorithm)) {
  if (members_.empty() || chunks_per_member_ == 0) throw std::logic_error("Schedule: no members or no chunks");
}

std::uint32_t Schedule::time_index(double us) {
  if (recent_times_.empty()) recent_times_.assign(kRecentTimes, 0);
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(us);
  std::uint32_t& slot = recent_times_[(bits * 0x9E3779B97F4A7C15ull) >> 52];
  if (slot != 0 && std::bit_cast<std::uint64_t>(times_[slot - 1]) == bits) return slot - 1;
  if (times_.size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("Schedule: too many distinct times");
  times_.push_back(us);
  slot = static_cast<std::uint32_t>(times_.size());
  return slot - 1;
}

TransferId Schedule::add(NodeId src, NodeId dst, TransferKind kind, std::span<const ChunkId> chunks,
                         std::span<const TransferId> deps, double start_us, double end_us, LinkId link) {
  const TransferId id = static_cast<TransferId>(size());
  for (TransferId dep : deps) {
    if (dep >= id) throw std::logic_error("Schedule::add: dependency on a later transfer");
  }
  deps_.push(deps);
  push_columns(src, dst, kind, chunks, start_us, end_us, link);
  return id;
}

TransferId Schedule::add_sharing_deps(TransferId sibling, NodeId src, NodeId dst, TransferKind kind,
                                      std::span<const ChunkId> chunks, double start_us, double end_us, LinkId link) {
  if (sibling >= size()) throw std::logic_error("Schedule::add_sharing_deps: no such sibling");
  const TransferId id = static_cast<TransferId>(size());
  deps_.push_same_as(sibling);
  push_columns(src, dst, kind, chunks, start_us, end_us, link);
  return id;
}

void Schedule::push_columns(NodeId src, NodeId dst, TransferKind kind, std::span<const ChunkId> chunks, double start_us,
                            double end_us, LinkId link) {
  chunks_.push(chunks);
  src_.push_back(src);
  dst_.push_back(dst);
  link_.push_back(link);
  kind_.push_back(kind);
  start_at_.push_back(time_index(start_us));
  end_at_.push_back(time_index(end_us));
}

Schedule Schedule::empty_like(std::uint32_t chunks_per_member) const {
  Schedule copy(collective_, size_bytes_, members_, chunks_per_member, algorithm_);
  copy.notes = notes;
  for (RouteId route = 0; route < route_count(); ++route) copy.add_route(route_links(route));
  return copy;
}

Schedule Schedule::resized(std::uint64_t size_bytes) const {
  Schedule copy = *this;
  copy.size_bytes_ = size_bytes;
  return copy;
}

double Schedule::planned_time_us() const {
  double latest = 0.0;
  for (std::uint32_t at : end_at_) latest = std::max(latest, times_[at]);
  return latest;
}

void Schedule::reserve(std::size_t transfers, std::size_t chunk_entries, std::size_t dep_entries) {
  src_.reserve(transfers);
  dst_.reserve(transfers);
  link_.reserve(transfers);
  kind_.reserve(transfers);
  start_at_.reserve(transfers);
  end_at_.reserve(transfers);
  chunks_.reserve(transfers, chunk_entries);
  deps_.reserve(transfers, dep_entries);
}

std::uint32_t Schedule::add_times(std::span<const double> times) {
  if (times_.size() + times.size() >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("Schedule: too many distinct times");
  }
  const auto first = static_cast<std::uint32_t>(times_.size());
  times_.insert(times_.end(), times.begin(), times.end());
  return first;
}

Schedule::Extension Schedule::extend(std::size_t count, std::span<const std::uint32_t> dep_counts) {
  if (dep_counts.size() != count) throw std::logic_error("Schedule::extend: one dependency count per transfer");
  const std::size_t first = size();
  src_.resize(first + count);
  dst_.resize(first + count);
  link_.resize(first + count);
  kind_.resize(first + count);
  start_at_.resize(first + count);
  end_at_.resize(first + count);
  chunks_.extend_single(count);
  deps_.extend(dep_counts);
  Extension extension;
  extension.first_id = static_cast<TransferId>(first);
  extension.src = {src_.data() + first, count};
  extension.dst = {dst_.data() + first, count};
  extension.link = {link_.data() + first, count};
  extension.kind = {kind_.data() + first, count};
  extension.start_at = {start_at_.data() + first, count};
  extension.end_at = {end_at_.data() + first, count};
  return extension;
}

void Schedule::forget_links() {
  std::fill(link_.begin(), link_.end(), kNoLink);
  route_offsets_ = {0};
  route_links_.clear();
}

RouteId Schedule::add_route(std::span<const LinkId> links) {
  if (links.empty()) throw std::logic_error("Schedule::add_route: an empty route");
  if (route_count() + 1 >= kRouteTag - 1) throw std::length_error("Schedule: too many routes");
  route_links_.insert(route_links_.end(), links.begin(), links.end());
  route_offsets_.push_back(route_links_.size());
  return route_count() - 1;
}

void Schedule::retime(std::span<const double> starts, std::span<const double> ends) {
  if (starts.size() != size() || ends.size() != size())
    throw std::logic_error("Schedule::retime: one time per transfer");
  std::vector<double> distinct(starts.begin(), starts.end());
  distinct.insert(distinct.end(), ends.begin(), ends.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("Schedule: too many distinct times");
  auto index_of = [&](double us) {
    return static_cast<std::uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), us) - distinct.begin());
  };
  for (std::size_t id = 0; id < size(); ++id) {
    start_at_[id] = index_of(starts[id]);
    end_at_[id] = index_of(ends[id]);
  }
  times_ = std::move(distinct);
  recent_times_.clear();
}

}  // namespace tenet
