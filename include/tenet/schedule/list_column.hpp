// SPDX-License-Identifier: MIT
#pragma once
// One short list of 32-bit ids per row (a transfer's chunks, a transfer's dependencies), stored
// for hundreds of millions of rows.
//
// Synthesized schedules move one chunk per transfer and depend on at most one transfer, so the
// column starts "single": one slot per row, kNone for an empty list, 4 bytes a row and no offsets.
// The first row with two or more entries (a baseline's block of chunks, a reduction tree's root)
// turns it into "ranges": every row gets a begin and a count into a shared entry array, 12 bytes a
// row plus the entries, and rows may share one range (a whole level of a tree waiting on the same
// reductions costs one list, not one per transfer).

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "tenet/common/uninitialized.hpp"

namespace tenet {

class ListColumn {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  std::size_t rows() const { return single_ ? values_.size() : counts_.size(); }
  /// Entries stored (shared ranges count once).
  std::size_t entries() const { return values_.size(); }
  bool single() const { return single_; }

  std::uint64_t begin_of(std::size_t row) const { return single_ ? row : begins_[row]; }
  std::uint32_t count_of(std::size_t row) const { return single_ ? (values_[row] == kNone ? 0 : 1) : counts_[row]; }
  std::span<const std::uint32_t> at(std::size_t row) const { return {values_.data() + begin_of(row), count_of(row)}; }
  /// The entries behind a (begin, count) pair read from begin_of/count_of.
  std::span<const std::uint32_t> range(std::uint64_t begin, std::uint32_t count) const {
    return {values_.data() + begin, count};
  }

  void push(std::span<const std::uint32_t> list) {
    if (single_ && list.size() <= 1 && (list.empty() || list[0] != kNone)) {
      values_.push_back(list.empty() ? kNone : list[0]);
      return;
    }
    if (single_) to_ranges();
    begins_.push_back(values_.size());
    counts_.push_back(static_cast<std::uint32_t>(list.size()));
    values_.insert(values_.end(), list.begin(), list.end());
  }

  /// Appends a row with the same list as `row` (sharing its entries when ranges are in use).
  void push_same_as(std::size_t row) {
    if (single_) {
      values_.push_back(values_[row]);
      return;
    }
    begins_.push_back(begins_[row]);
    counts_.push_back(counts_[row]);
  }

  /// Appends `counts.size()` rows with the given list lengths, entries unset; a producer filling
  /// millions of rows in parallel then writes each row's entries through slots(row). Stays
  /// single when every count is at most 1 (rows with count 0 read as empty).
  void extend(std::span<const std::uint32_t> counts) {
    bool fits_single = single_;
    for (std::size_t i = 0; i < counts.size() && fits_single; ++i) fits_single = counts[i] <= 1;
    if (fits_single) {
      const std::size_t base = values_.size();
      values_.resize(base + counts.size(), kNone);
      return;
    }
    if (single_) to_ranges();
    const std::size_t first = counts_.size();
    begins_.resize(first + counts.size());
    counts_.resize(first + counts.size());
    std::uint64_t next = values_.size();
    for (std::size_t i = 0; i < counts.size(); ++i) {
      begins_[first + i] = next;
      counts_[first + i] = counts[i];
      next += counts[i];
    }
    values_.resize(next);
  }
  /// Appends `rows` rows of exactly one entry each, entries unset.
  void extend_single(std::size_t rows) {
    if (single_) {
      values_.resize(values_.size() + rows);
      return;
    }
    std::uint64_t next = values_.size();
    for (std::size_t i = 0; i < rows; ++i) {
      begins_.push_back(next++);
      counts_.push_back(1);
    }
    values_.resize(next);
  }
  /// Where row `row` of an extend() writes its entries. In single mode a row extended with count 0
  /// has no slot; one with count 1 has one.
  std::uint32_t* slots(std::size_t row) { return values_.data() + begin_of(row); }

  /// Reserves for either mode: address space only, pages are touched when rows are written.
  void reserve(std::size_t rows, std::size_t entries) {
    begins_.reserve(rows);
    counts_.reserve(rows);
    values_.reserve(std::max(rows, entries));
  }

 private:
  void to_ranges() {
    UninitializedVector<std::uint32_t> packed;
    packed.reserve(values_.capacity());  // keep what reserve() asked for
    begins_.resize(values_.size());
    counts_.resize(values_.size());
    for (std::size_t row = 0; row < values_.size(); ++row) {
      begins_[row] = packed.size();
      counts_[row] = values_[row] == kNone ? 0 : 1;
      if (values_[row] != kNone) packed.push_back(values_[row]);
    }
    values_ = std::move(packed);
    single_ = false;
  }

  bool single_ = true;
  UninitializedVector<std::uint64_t> begins_;  ///< per row, ranges mode only
  UninitializedVector<std::uint32_t> counts_;  ///< per row, ranges mode only
  UninitializedVector<std::uint32_t> values_;  ///< single: one slot per row; ranges: the entries
};

}  // namespace tenet
