// SPDX-License-Identifier: MIT
#pragma once
// Private to the topology generators: reading and validating the parameters of a `generator`
// object, and counting what a generator would build with saturating arithmetic, so that absurd
// sizes are refused before anything is allocated.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tenet/common/error.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet::generator_detail {

/// Counts saturate here, so no product of user-given sizes can overflow; anything this large is
/// reported as "more than 10^18".
constexpr std::uint64_t kCountCap = 1'000'000'000'000'000'000ull;

/// Shape arrays (dims, fanout) longer than this are refused: 2^20 NPUs need at most 20 dimensions
/// of size >= 2, and a long run of size-1 dimensions would only slow the builders down.
constexpr std::size_t kMaxShapeEntries = 32;

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_product(const std::vector<std::uint64_t>& values);

/// What a generator is about to build, counted before building. Directed links.
struct SizeCounts {
  std::uint64_t npus = 0;
  std::uint64_t switches = 0;
  std::uint64_t links = 0;
};

/// Link attributes per dimension (or tree level). A single entry applies to every dimension, so a
/// huge dimension count never expands into a huge vector.
class LevelAttributes {
 public:
  LevelAttributes(std::vector<double> bandwidths_GBps, std::vector<double> latencies_us)
      : bandwidths_GBps_(std::move(bandwidths_GBps)), latencies_us_(std::move(latencies_us)) {}

  double bandwidth_GBps(std::size_t level) const { return pick(bandwidths_GBps_, level); }
  double latency_us(std::size_t level) const { return pick(latencies_us_, level); }
  /// "50 GB/s, 0.5 us" or "[300, 25] GB/s, 0.5 us", for descriptions.
  std::string describe() const;

 private:
  static double pick(const std::vector<double>& values, std::size_t level) {
    return values.size() == 1 ? values[0] : values[level];
  }

  std::vector<double> bandwidths_GBps_;
  std::vector<double> latencies_us_;
};

/// Reads the parameters of one generator object. Every read validates and records problems in the
/// shared ProblemList instead of throwing, so one run reports every mistake; a read returns
/// nullopt when the value is missing-and-required or invalid. Builders read every parameter they
/// accept unconditionally, then call check_size, then throw_if_any, and only then allocate.
class ParamReader {
 public:
  /// `params` are the parameter names this kind accepts besides kind, bandwidth_GBps and latency_us.
  ParamReader(const nlohmann::json& object, std::string kind, std::vector<std::string> params, std::string pointer,
              const LinkDefaults& defaults, ProblemList& problems);

  const std::string& kind() const { return kind_; }
  /// The JSON pointer of a parameter, for messages.
  std::string where(const std::string& name) const { return pointer_ + "/" + name; }
  bool has(const std::string& name) const { return object_.contains(name); }
  void fail(const std::string& name, std::string message) { problems_.add(where(name), std::move(message)); }

  /// Records every key the kind does not accept, with a suggestion.
  void reject_unknown_params();

  /// A non-negative integer >= min; `fallback` when absent (nullopt fallback: required).
  std::optional<std::uint64_t> integer(const std::string& name, std::uint64_t min,
                                       std::optional<std::uint64_t> fallback = std::nullopt);
  /// A non-empty array of integers >= min with `exact_size` entries (0: any number up to
  /// kMaxShapeEntries); `example` such as "[4, 4]" goes into messages.
  std::optional<std::vector<std::uint64_t>> integers(const std::string& name, std::uint64_t min, std::size_t exact_size,
                                                     const std::string& example,
                                                     std::optional<std::vector<std::uint64_t>> fallback = std::nullopt);
  std::optional<bool> boolean(const std::string& name, bool fallback);
  /// A finite number >= min.
  std::optional<double> number(const std::string& name, double min, double fallback);

  /// bandwidth_GBps and latency_us: one number, or an array with `levels` entries; absent, the
  /// defaults. `levels` is nullopt when the shape was invalid, and then only the values are checked.
  /// `unit` names one entry in messages ("dimension", "level").
  LevelAttributes levels(std::optional<std::uint64_t> levels, const std::string& unit);

  /// The NPU count the file says the generator builds (its "npus"), checked by check_size.
  void expect_npus(std::uint64_t npus) { expected_npus_ = npus; }

  /// Records a problem at `name` when the counts pass the limits or there are fewer than 2 NPUs,
  /// and at /npus when they differ from the expected count; true when they fit.
  bool check_size(const std::string& name, const SizeCounts& counts);

  void throw_if_any() const { problems_.throw_if_any(); }

 private:
  std::optional<std::vector<double>> attribute(const std::string& name, std::optional<std::uint64_t> levels,
                                               const std::string& unit, double fallback, bool is_bandwidth);

  const nlohmann::json& object_;
  std::string kind_;
  std::vector<std::string> params_;
  std::string pointer_;
  LinkDefaults defaults_;
  ProblemList& problems_;
  std::optional<std::uint64_t> expected_npus_;
};

/// 1234567 -> "1,234,567"; kCountCap and above -> "more than 10^18".
std::string format_count(std::uint64_t count);
/// Shortest decimal text that reads back as the same double ("0.5", "300").
std::string format_number(double value);
/// [4, 4] -> "4x4".
std::string join_shape(const std::vector<std::uint64_t>& shape);
/// Sets name ("torus-4x4") and description ("torus 4x4: 16 NPUs, 64 links; 50 GB/s, 0.5 us");
/// `links_text` is what follows the semicolon.
void name_topology(Topology& topology, const std::string& kind, const std::string& shape,
                   const std::string& links_text);
/// Narrows a size that check_size accepted.
inline std::uint32_t narrow(std::uint64_t value) { return static_cast<std::uint32_t>(value); }

// One builder per kind: reads its parameters from the reader, validates, builds.
Topology build_ring(ParamReader& in);
Topology build_fully_connected(ParamReader& in);
Topology build_mesh(ParamReader& in);
Topology build_torus(ParamReader& in);
Topology build_hypercube(ParamReader& in);
Topology build_hypercube_3d(ParamReader& in);
Topology build_hyperx(ParamReader& in);
Topology build_switch(ParamReader& in);
Topology build_two_level_switch(ParamReader& in);
Topology build_ring_fc_switch(ParamReader& in);
Topology build_dragonfly(ParamReader& in);
Topology build_hammingmesh(ParamReader& in);
Topology build_fat_tree(ParamReader& in);
Topology build_tree(ParamReader& in);
Topology build_random(ParamReader& in);

}  // namespace tenet::generator_detail
