// SPDX-License-Identifier: MIT
#pragma once
// The interpreter's buffers (private to src/msccl): every rank's input, output and scratch chunks with
// the runtime's in-place aliasing (SPEC section 4), the contributions they start with (SPEC 9.2),
// and the postcondition the result is checked against.
//
// Every chunk holds kElements floats and a symbol. Contribution (rank q, chunk k) has the value
// 1 + ((q*N + k)*kElements + e) mod V, with V small enough that the sum of ngpus values is an exact
// integer in float, and a random 64-bit key; a symbol is (count, sum of keys), so a slot holding
// the wrong set is seen with probability 1 - 2^-64, and one missing or doubled contribution is
// named by its key. Scratch and out-of-place output start as NaN and "uninitialised".

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "internal.hpp"

namespace tenet::msccl_detail {

constexpr int kElements = 2;
constexpr std::uint32_t kNobody = ~std::uint32_t{0};

struct Symbol {
  std::uint64_t sum = 0;
  std::uint32_t count = 0;
  bool undefined = true;
};

inline Symbol combine(const Symbol& a, const Symbol& b) {
  if (a.undefined || b.undefined) return {};
  return {a.sum + b.sum, a.count + b.count, false};
}

/// One access for the race check: which tb, at which of its calls, from which line.
struct Access {
  std::uint32_t tb = kNobody;
  std::uint32_t epoch = 0;
  int line = 0;
};

struct History {
  Access write;
  std::vector<Access> reads;
};

/// One buffer of one rank (in-place aliases share one).
struct Array {
  std::vector<float> values;
  std::vector<Symbol> symbols;
  std::vector<History> history;  ///< empty unless races are checked
};

struct Slot {
  Array* array;
  std::size_t index;
};

class Memory {
 public:
  explicit Memory(const LoadedProgram& program);

  /// Room for the race check's access histories.
  void track_accesses();
  Slot slot(int rank, MscclBuffer buffer, int index);
  /// "o[3]": the slot as the file names its array.
  std::string slot_name(int rank, const Slot& slot) const;
  /// The first output slot that is not the collective's result, described; "" when all are.
  std::string check_result();

 private:
  /// Which array and index a buffer slot is, with in-place aliasing.
  std::pair<int, int> resolve(int rank, MscclBuffer buffer, int index) const;
  float value(int rank, int chunk, int element) const;
  std::uint64_t key(int rank, int chunk) const;
  bool find_contribution(std::uint64_t sum, int& rank, int& chunk) const;
  std::string output_name(int rank, int j) const;
  std::string describe_symbol(const Symbol& actual, const Symbol& expected, int chunk) const;

  const LoadedProgram& program_;
  int p_;
  int n_;
  int c_;
  int value_range_;
  std::vector<std::array<Array, 3>> arrays_;
};

}  // namespace tenet::msccl_detail
