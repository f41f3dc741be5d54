// SPDX-License-Identifier: MIT
// The interpreter's buffers and the collective's postcondition (see memory.hpp).

#include "memory.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tenet/common/random.hpp"

namespace tenet::msccl_detail {
namespace {

constexpr std::uint64_t kKeySeed = 0x5EED'4D53'4343'4Cull;

std::string contribution_name(int rank, int chunk) {
  return "rank " + std::to_string(rank) + "'s chunk " + std::to_string(chunk);
}

std::string format_float(float number) {
  if (std::isnan(number)) return "NaN";
  const auto whole = static_cast<long long>(number);
  return static_cast<float>(whole) == number ? std::to_string(whole) : std::to_string(number);
}

}  // namespace

Memory::Memory(const LoadedProgram& program)
    : program_(program),
      p_(program.ranks),
      n_(program.chunks),
      c_(program.chunks / program.ranks),
      value_range_(std::max(1, ((1 << 24) - 1) / std::max(1, program.ranks))) {
  arrays_.resize(static_cast<std::size_t>(p_));
  const bool ag = program_.coll == CollectiveKind::kAllGather;
  const bool rs = program_.coll == CollectiveKind::kReduceScatter;
  const auto input = static_cast<std::size_t>(ag ? c_ : n_);
  const auto output = static_cast<std::size_t>(rs ? c_ : n_);
  for (int r = 0; r < p_; ++r) {
    auto& arrays = arrays_[static_cast<std::size_t>(r)];
    // In place, the aliased buffer lives in the other one's array (resolve).
    const std::size_t sizes[3] = {program_.in_place && ag ? 0 : input, program_.in_place && !ag ? 0 : output,
                                  static_cast<std::size_t>(program_.by_rank[static_cast<std::size_t>(r)].s_chunks)};
    for (std::size_t a = 0; a < 3; ++a) {
      arrays[a].values.assign(sizes[a] * kElements, std::numeric_limits<float>::quiet_NaN());
      arrays[a].symbols.assign(sizes[a], Symbol{});
    }
    // Inputs as SPEC 9.2 has them: all-gather i[j] = (r, r*C + j), the others i[k] = (r, k).
    for (std::size_t j = 0; j < input; ++j) {
      const int chunk = ag ? r * c_ + static_cast<int>(j) : static_cast<int>(j);
      const Slot target = slot(r, MscclBuffer::kInput, static_cast<int>(j));
      for (int e = 0; e < kElements; ++e)
        target.array->values[target.index * kElements + static_cast<std::size_t>(e)] = value(r, chunk, e);
      target.array->symbols[target.index] = {key(r, chunk), 1, false};
    }
  }
}

void Memory::track_accesses() {
  for (auto& rank : arrays_) {
    for (Array& array : rank) array.history.resize(array.symbols.size());
  }
}

std::pair<int, int> Memory::resolve(int rank, MscclBuffer buffer, int index) const {
  if (buffer == MscclBuffer::kScratch) return {2, index};
  if (!program_.in_place) return {buffer == MscclBuffer::kInput ? 0 : 1, index};
  switch (program_.coll) {
    case CollectiveKind::kAllGather: return {1, buffer == MscclBuffer::kInput ? rank * c_ + index : index};
    case CollectiveKind::kReduceScatter: return {0, buffer == MscclBuffer::kOutput ? rank * c_ + index : index};
    case CollectiveKind::kAllReduce: return {0, index};
  }
  return {0, index};
}

Slot Memory::slot(int rank, MscclBuffer buffer, int index) {
  const auto [array, at] = resolve(rank, buffer, index);
  return {&arrays_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(array)], static_cast<std::size_t>(at)};
}

std::string Memory::slot_name(int rank, const Slot& slot) const {
  const Array* arrays = arrays_[static_cast<std::size_t>(rank)].data();
  const char* name = slot.array == &arrays[0] ? "i" : slot.array == &arrays[1] ? "o" : "s";
  return std::string(name) + "[" + std::to_string(slot.index) + "]";
}

float Memory::value(int rank, int chunk, int element) const {
  const long long id = (static_cast<long long>(rank) * n_ + chunk) * kElements + element;
  return static_cast<float>(1 + id % value_range_);
}

std::uint64_t Memory::key(int rank, int chunk) const {
  return mix_seed(
      kKeySeed, static_cast<std::uint64_t>(rank) * static_cast<std::uint64_t>(n_) + static_cast<std::uint64_t>(chunk));
}

bool Memory::find_contribution(std::uint64_t sum, int& rank, int& chunk) const {
  for (rank = 0; rank < p_; ++rank) {
    for (chunk = 0; chunk < n_; ++chunk) {
      if (key(rank, chunk) == sum) return true;
    }
  }
  return false;
}

std::string Memory::output_name(int rank, int j) const {
  // In-place reduce-scatter and all-reduce files keep their results in i.
  const bool in_input = program_.in_place && program_.coll != CollectiveKind::kAllGather;
  const int index = in_input && program_.coll == CollectiveKind::kReduceScatter ? rank * c_ + j : j;
  std::string text = in_input ? "i[" : "o[";
  text += std::to_string(index);
  text += "]";
  if (in_input) text += " (output chunk " + std::to_string(j) + ", in place)";
  return text;
}

std::string Memory::describe_symbol(const Symbol& actual, const Symbol& expected, int chunk) const {
  if (actual.undefined) return "holds uninitialised data (a scratch or output slot was read before anything wrote it)";
  const std::string of = std::to_string(actual.count) + " contribution(s) where " + std::to_string(expected.count) +
                         (expected.count == 1 ? " belongs" : " belong");
  int rank = 0;
  int other = 0;
  if (actual.count + 1 == expected.count && find_contribution(expected.sum - actual.sum, rank, other)) {
    return "is missing " + contribution_name(rank, other) + " (" + of + ")";
  }
  if (actual.count == expected.count + 1 && find_contribution(actual.sum - expected.sum, rank, other)) {
    std::string text = other == chunk ? "counts " + contribution_name(rank, other) + " twice"
                                      : "also adds " + contribution_name(rank, other);
    return text + " (" + of + ")";
  }
  if (actual.count == 1 && find_contribution(actual.sum, rank, other)) return "holds " + contribution_name(rank, other);
  if (actual.count == expected.count)
    return "holds " + std::to_string(actual.count) + " contributions, not the right ones";
  return "holds " + of;
}

std::string Memory::check_result() {
  const bool ag = program_.coll == CollectiveKind::kAllGather;
  const int outputs = program_.coll == CollectiveKind::kReduceScatter ? c_ : n_;
  // What each chunk should end as, once: every rank of an all-gather or all-reduce expects the
  // same (summing the ranks' contributions per rank was ngpus times the work, most of the check).
  std::vector<Symbol> expected_symbols(static_cast<std::size_t>(n_), Symbol{0, 0, false});
  std::vector<float> expected_all(static_cast<std::size_t>(n_) * kElements, 0.0f);
  for (int chunk = 0; chunk < n_; ++chunk) {
    Symbol& expected = expected_symbols[static_cast<std::size_t>(chunk)];
    float* values = &expected_all[static_cast<std::size_t>(chunk) * kElements];
    for (int q = 0; q < p_; ++q) {
      if (ag && q != chunk / c_) continue;
      expected.sum += key(q, chunk);
      ++expected.count;
      for (int e = 0; e < kElements; ++e) values[e] += value(q, chunk, e);
    }
  }
  for (int r = 0; r < p_; ++r) {
    for (int j = 0; j < outputs; ++j) {
      const int chunk = program_.coll == CollectiveKind::kReduceScatter ? r * c_ + j : j;
      const Symbol& expected = expected_symbols[static_cast<std::size_t>(chunk)];
      const float* expected_values = &expected_all[static_cast<std::size_t>(chunk) * kElements];
      const Slot s = slot(r, MscclBuffer::kOutput, j);
      const Symbol& actual = s.array->symbols[s.index];
      int wrong_element = -1;
      for (int e = 0; e < kElements && wrong_element < 0; ++e) {
        if (!(s.array->values[s.index * kElements + static_cast<std::size_t>(e)] == expected_values[e]))
          wrong_element = e;
      }
      const bool symbol_ok = !actual.undefined && actual.sum == expected.sum && actual.count == expected.count;
      if (symbol_ok && wrong_element < 0) continue;
      std::string text = "rank " + std::to_string(r) + " " + output_name(r, j) + " should hold ";
      text += ag ? "rank " + std::to_string(j / c_) + "'s chunk " + std::to_string(chunk)
                 : "the sum of chunk " + std::to_string(chunk) + " over all " + std::to_string(p_) + " ranks";
      text += " but ";
      text += symbol_ok ? std::string("has the right contributions") : describe_symbol(actual, expected, chunk);
      if (wrong_element >= 0) {
        const float got = s.array->values[s.index * kElements + static_cast<std::size_t>(wrong_element)];
        text += " (numerically element " + std::to_string(wrong_element) + " is " + format_float(got) + " instead of " +
                format_float(expected_values[wrong_element]) + ")";
      } else {
        text += " (numerically right)";
      }
      return text;
    }
  }
  return "";
}

}  // namespace tenet::msccl_detail
