// SPDX-License-Identifier: MIT
// Replay order, start-time checks and ancestry queries (see verify_internal.hpp).

#include <algorithm>
#include <utility>

#include "tenet/common/parallel.hpp"
#include "tenet/common/units.hpp"
#include "verify_internal.hpp"

namespace tenet::verify_detail {

ReplayOrder::ReplayOrder(const Schedule& schedule, const Survey& survey) : schedule_(&schedule) {
  const std::size_t count = schedule.size();
  if (survey.times_monotone && survey.starts_sorted) return;
  if (!survey.times_monotone) {
    effective_start_.resize(count);
    effective_end_.resize(count);
    for (std::size_t id = 0; id < count; ++id) {
      const Transfer transfer = schedule.transfer(static_cast<TransferId>(id));
      double start = transfer.start_us;
      for (TransferId dep : schedule.deps_of(transfer)) start = std::max(start, effective_end_[dep]);
      effective_start_[id] = start;
      effective_end_[id] = std::max(start, transfer.end_us);
    }
  }
  // Effective starts may be in id order even when the planned ones are not, and vice versa.
  bool sorted = survey.starts_sorted;
  if (!survey.times_monotone) {
    sorted = true;
    for (std::size_t id = 1; id < count && sorted; ++id) sorted = effective_start_[id - 1] <= effective_start_[id];
  }
  if (sorted) return;
  // Sorting (time, id) pairs rather than ids with a comparator that looks times up keeps the sort
  // cache-friendly on tens of millions of transfers.
  std::vector<std::pair<double, TransferId>> keys(count);
  for (std::size_t id = 0; id < count; ++id)
    keys[id] = {start(static_cast<TransferId>(id)), static_cast<TransferId>(id)};
  parallel_sort(keys.begin(), keys.end());
  order_.resize(count);
  for (std::size_t i = 0; i < count; ++i) order_[i] = keys[i].second;
}

TimingChecks::TimingChecks(const Topology& topology, const Schedule& schedule, const ReplayOrder& order,
                           const Survey& survey)
    : topology_(topology), schedule_(schedule), routes_(survey.routes.get()), links_planned_(survey.links_planned) {
  all_hold_ = survey.durations_and_deps_hold && (!links_planned_ || links_never_overlap(order));
  if (links_planned_ && !all_hold_) last_on_link_.assign(topology.link_count(), kNoTransfer);
}

bool TimingChecks::links_never_overlap(const ReplayOrder& order) const {
  // In start order, each link's transfer must start after the previous one on it ends: one walk,
  // a time per link.
  std::vector<double> link_free_at(topology_.link_count(), 0.0);
  std::vector<char> used(topology_.link_count(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const TransferId id = order.at(i);
    const LinkId link = schedule_.link(id);
    if (used[link] && !time_leq(link_free_at[link], schedule_.start_us(id))) return false;
    used[link] = 1;
    link_free_at[link] = schedule_.end_us(id);
  }
  return true;
}

bool TimingChecks::check_start(TransferId id, std::string& error) {
  if (all_hold_) return true;
  const Transfer& transfer = schedule_.transfer(id);
  for (TransferId dep : schedule_.deps_of(transfer)) {
    const double dep_end = schedule_.transfer(dep).end_us;
    if (!time_leq(dep_end, transfer.start_us)) {
      error = cat("transfer ", id, " starts at ", transfer.start_us, " us before its dependency ", dep, " ends at ",
                  dep_end, " us");
      return false;
    }
  }
  if (transfer.route != kNoRoute) {
    const double bytes = schedule_.bytes_of(transfer);
    const double needed = path_time_us(topology_, schedule_.route_links(transfer.route), bytes);
    if (!time_leq(transfer.start_us + needed, transfer.end_us)) {
      error = cat(transfer_label(topology_, schedule_, id), " lasts ", transfer.end_us - transfer.start_us,
                  " us on its route through switches but needs at least ", needed, " us for ", bytes, " bytes");
      return false;
    }
  }
  if (transfer.link == kNoLink && transfer.route == kNoRoute && routes_ != nullptr) {
    const double bytes = schedule_.bytes_of(transfer);
    const double needed = routed_time_us(*routes_, transfer, bytes);
    if (!time_leq(transfer.start_us + needed, transfer.end_us)) {
      const std::size_t hops = routes_->links(routes_->route_of(transfer)).size();
      error = cat(transfer_label(topology_, schedule_, id), " lasts ", transfer.end_us - transfer.start_us,
                  " us but needs at least ", needed, " us for ", bytes, " bytes on its route (", hops,
                  hops == 1 ? " link" : " links", ", the route the simulator takes)");
      return false;
    }
  }
  if (!links_planned_) return true;
  const Link& link = topology_.link(transfer.link);
  const auto link_name = [&] {
    return cat("link ", topology_.node_label(link.src), " -> ", topology_.node_label(link.dst));
  };
  const TransferId previous = last_on_link_[transfer.link];
  if (previous != kNoTransfer && !time_leq(schedule_.transfer(previous).end_us, transfer.start_us)) {
    const Transfer& other = schedule_.transfer(previous);
    error = cat("transfers ", previous, " and ", id, " overlap on ", link_name(), " (", other.start_us, " us to ",
                other.end_us, " us and ", transfer.start_us, " us to ", transfer.end_us, " us)");
    return false;
  }
  last_on_link_[transfer.link] = id;
  const double bytes = schedule_.bytes_of(transfer);
  const double needed = link_time_us(bytes, link.latency_us, link.bandwidth_GBps);
  if (!time_leq(transfer.start_us + needed, transfer.end_us)) {
    error = cat(transfer_label(topology_, schedule_, id), " lasts ", transfer.end_us - transfer.start_us, " us on ",
                link_name(), " but needs at least ", needed, " us (", link.latency_us, " us latency + ", bytes,
                " bytes at ", link.bandwidth_GBps, " GB/s)");
    return false;
  }
  return true;
}

Ancestry::Ancestry(const Schedule& schedule, const ReplayOrder& order) : schedule_(schedule), order_(order) {}

bool Ancestry::is_ancestor(TransferId writer, TransferId reader) {
  // Dependencies point to smaller ids, so an ancestor always has a smaller id.
  if (writer >= reader) return false;
  if (reader != reader_) {
    reader_ = reader;
    last_found_ = kNoTransfer;
    reader_deps_marked_ = false;
    reader_grandparents_marked_ = false;
  }
  if (writer == last_found_) return true;
  const std::span<const TransferId> deps = schedule_.deps_of(schedule_.transfer(reader));
  // A short dependency list is cheaper to scan than to stamp; a long one (a reduce tree's root
  // waits on hundreds of reduces, each a writer) is stamped once per reader.
  constexpr std::size_t kScanLimit = 16;
  if (deps.size() <= kScanLimit) {
    if (std::find(deps.begin(), deps.end(), writer) != deps.end()) {
      last_found_ = writer;
      return true;
    }
    ensure_scratch();
  } else {
    ensure_scratch();
    if (!reader_deps_marked_) {
      for (TransferId dep : deps) known_[dep] = reader + 1;
      reader_deps_marked_ = true;
    }
  }
  if (known_[writer] != reader + 1 && !reader_grandparents_marked_) {
    // Before a search, the dependencies' own dependencies, stamped once per reader: a transfer
    // that waits on a gate (the first of a pipeline's steps, itself waiting on hundreds of
    // reductions) finds every writer there, where a depth-first search would walk down the
    // pipeline's chain first, once per writer.
    reader_grandparents_marked_ = true;
    std::size_t budget = kGrandparentLimit;
    for (TransferId dep : deps) {
      known_[dep] = reader + 1;
      const std::span<const TransferId> more = schedule_.deps_of(schedule_.transfer(dep));
      if (more.size() > budget) break;
      budget -= more.size();
      for (TransferId grandparent : more) known_[grandparent] = reader + 1;
    }
  }
  if (known_[writer] == reader + 1 || search(writer, reader)) {
    last_found_ = writer;
    return true;
  }
  return false;
}

void Ancestry::ensure_scratch() {
  if (!known_.empty()) return;
  known_.assign(schedule_.size(), 0);
  visited_.assign(schedule_.size(), 0);
}

bool Ancestry::search(TransferId writer, TransferId reader) {
  if (++epoch_ == 0) {
    std::fill(visited_.begin(), visited_.end(), 0);
    epoch_ = 1;
  }
  // A descendant of `writer` has a larger id and, in effective times, ends no earlier than it:
  // anything else cannot lead back to it.
  const double writer_end = order_.end(writer);
  stack_.clear();
  auto consider = [&](TransferId candidate) {
    if (candidate < writer || visited_[candidate] == epoch_ || order_.end(candidate) < writer_end) return false;
    if (candidate == writer) return true;
    visited_[candidate] = epoch_;
    stack_.push_back(candidate);
    return false;
  };
  for (TransferId dep : schedule_.deps_of(schedule_.transfer(reader))) {
    if (consider(dep)) return true;
  }
  while (!stack_.empty()) {
    const TransferId current = stack_.back();
    stack_.pop_back();
    // Everything reached from the reader is its ancestor: later writers found here cost nothing.
    known_[current] = reader + 1;
    for (TransferId dep : schedule_.deps_of(schedule_.transfer(current))) {
      if (consider(dep)) return true;
    }
  }
  return false;
}

}  // namespace tenet::verify_detail
