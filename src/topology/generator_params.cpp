// SPDX-License-Identifier: MIT
#include "generator_params.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "json_fields.hpp"

namespace tenet::generator_detail {
namespace {

using nlohmann::json;

/// The value as the user wrote it, short enough for one message line.
std::string render_value(const json& value) {
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::isnan(number)) return "NaN";
    if (std::isinf(number)) return number > 0 ? "inf" : "-inf";
  }
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr std::size_t kMaxShown = 40;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown - 3) + "...";
  return text;
}

/// Integral JSON numbers >= 0, including integral floats such as 1e6 (a common way to write a
/// count); nullopt for negatives, fractions and non-numbers.
std::optional<std::uint64_t> nonnegative_integer(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer()) {
    const std::int64_t number = value.get<std::int64_t>();
    if (number < 0) return std::nullopt;
    return static_cast<std::uint64_t>(number);
  }
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (!std::isfinite(number) || number < 0 || std::floor(number) != number) return std::nullopt;
    if (number >= 0x1.0p64) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(number);
  }
  return std::nullopt;
}

std::string escape_pointer_token(const std::string& token) {
  std::string escaped;
  for (char c : token) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) text += (i ? separator : "") + words[i];
  return text;
}

std::string entries(std::uint64_t count) { return std::to_string(count) + (count == 1 ? " entry" : " entries"); }

std::string describe_values(const std::vector<double>& values, const std::string& unit) {
  if (values.size() == 1) return format_number(values[0]) + " " + unit;
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + format_number(values[i]);
  return text + "] " + unit;
}

}  // namespace

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return (a >= kCountCap || b >= kCountCap - a) ? kCountCap : a + b;
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a >= kCountCap || b >= kCountCap || a > kCountCap / b) return kCountCap;
  return std::min(a * b, kCountCap);
}

std::uint64_t saturating_product(const std::vector<std::uint64_t>& values) {
  std::uint64_t product = 1;
  for (std::uint64_t value : values) product = saturating_mul(product, value);
  return product;
}

std::string LevelAttributes::describe() const {
  return describe_values(bandwidths_GBps_, "GB/s") + ", " + describe_values(latencies_us_, "us");
}

ParamReader::ParamReader(const json& object, std::string kind, std::vector<std::string> params, std::string pointer,
                         const LinkDefaults& defaults, ProblemList& problems)
    : object_(object),
      kind_(std::move(kind)),
      params_(std::move(params)),
      pointer_(std::move(pointer)),
      defaults_(defaults),
      problems_(problems) {}

void ParamReader::reject_unknown_params() {
  std::vector<std::string> accepted{"kind"};
  accepted.insert(accepted.end(), params_.begin(), params_.end());
  accepted.push_back("bandwidth_GBps");
  accepted.push_back("latency_us");
  for (const auto& [key, value] : object_.items()) {
    if (std::find(accepted.begin(), accepted.end(), key) != accepted.end()) continue;
    std::string message = "unknown parameter for " + kind_;
    const std::string suggestion = closest_match(key, accepted);
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    message += "; " + kind_ + " takes " + join(accepted, ", ");
    problems_.add(pointer_ + "/" + escape_pointer_token(key), message);
  }
}

std::optional<std::uint64_t> ParamReader::integer(const std::string& name, std::uint64_t min,
                                                  std::optional<std::uint64_t> fallback) {
  const std::string expected = "an integer >= " + std::to_string(min);
  auto it = object_.find(name);
  if (it == object_.end()) {
    if (!fallback) fail(name, "missing: " + kind_ + " needs " + expected);
    return fallback;
  }
  std::optional<std::uint64_t> value = nonnegative_integer(*it);
  if (!value || *value < min) {
    fail(name, "must be " + expected + " (got " + render_value(*it) + ")");
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<std::uint64_t>> ParamReader::integers(const std::string& name, std::uint64_t min,
                                                                std::size_t exact_size, const std::string& example,
                                                                std::optional<std::vector<std::uint64_t>> fallback) {
  const std::string expected = "a non-empty array of integers >= " + std::to_string(min) + ", e.g. " + example;
  auto it = object_.find(name);
  if (it == object_.end()) {
    if (!fallback) fail(name, "missing: " + kind_ + " needs " + expected);
    return fallback;
  }
  if (!it->is_array() || it->empty()) {
    fail(name, "must be " + expected + " (got " + render_value(*it) + ")");
    return std::nullopt;
  }
  bool valid = true;
  if (exact_size != 0 && it->size() != exact_size) {
    fail(name, "must have " + entries(exact_size) + ", e.g. " + example + " (got " + std::to_string(it->size()) + ")");
    valid = false;
  }
  if (it->size() > kMaxShapeEntries) {
    fail(name, "must have at most " + entries(kMaxShapeEntries) + " (got " + std::to_string(it->size()) + ")");
    return std::nullopt;
  }
  std::vector<std::uint64_t> values;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& element = (*it)[i];
    std::optional<std::uint64_t> value = nonnegative_integer(element);
    if (!value || *value < min) {
      problems_.add(where(name) + "/" + std::to_string(i),
                    "must be an integer >= " + std::to_string(min) + " (got " + render_value(element) + ")");
      valid = false;
    } else {
      values.push_back(*value);
    }
  }
  if (!valid) return std::nullopt;
  return values;
}

std::optional<bool> ParamReader::boolean(const std::string& name, bool fallback) {
  auto it = object_.find(name);
  if (it == object_.end()) return fallback;
  if (!it->is_boolean()) {
    fail(name, "must be true or false (got " + render_value(*it) + ")");
    return std::nullopt;
  }
  return it->get<bool>();
}

std::optional<double> ParamReader::number(const std::string& name, double min, double fallback) {
  auto it = object_.find(name);
  if (it == object_.end()) return fallback;
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < min) {
    fail(name, "must be a number >= " + format_number(min) + " (got " + render_value(*it) + ")");
    return std::nullopt;
  }
  return it->get<double>();
}

std::optional<std::vector<double>> ParamReader::attribute(const std::string& name, std::optional<std::uint64_t> levels,
                                                          const std::string& unit, double fallback, bool is_bandwidth) {
  const std::string expected = is_bandwidth ? json_fields::kBandwidthRange : json_fields::kLatencyRange;
  auto valid_number = [is_bandwidth](const json& value) {
    if (!value.is_number()) return false;
    const double number = value.get<double>();
    return is_bandwidth ? number >= kMinBandwidth_GBps && number <= kMaxBandwidth_GBps
                        : number >= 0.0 && number <= kMaxLatency_us;
  };
  auto it = object_.find(name);
  if (it == object_.end()) return std::vector<double>{fallback};
  if (it->is_number()) {
    if (!valid_number(*it)) {
      fail(name, "must be " + expected + " (got " + render_value(*it) + ")");
      return std::nullopt;
    }
    return std::vector<double>{it->get<double>()};
  }
  if (!it->is_array()) {
    fail(name,
         "must be " + expected + ", or an array of them with one per " + unit + " (got " + render_value(*it) + ")");
    return std::nullopt;
  }
  bool valid = true;
  if (it->empty() || (levels && it->size() != *levels)) {
    const std::string wanted = levels ? entries(*levels) + ", one per " + unit : "one entry per " + unit;
    fail(name, "must have " + wanted + " (got " + std::to_string(it->size()) + ")");
    valid = false;
  }
  // No valid shape has more levels than this; checking a huge array would only flood the report.
  if (it->size() > kMaxShapeEntries) return std::nullopt;
  std::vector<double> values;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& element = (*it)[i];
    if (!valid_number(element)) {
      problems_.add(where(name) + "/" + std::to_string(i),
                    "must be " + expected + " (got " + render_value(element) + ")");
      valid = false;
    } else {
      values.push_back(element.get<double>());
    }
  }
  if (!valid) return std::nullopt;
  return values;
}

LevelAttributes ParamReader::levels(std::optional<std::uint64_t> levels, const std::string& unit) {
  std::optional<std::vector<double>> bandwidths =
      attribute("bandwidth_GBps", levels, unit, defaults_.bandwidth_GBps, true);
  std::optional<std::vector<double>> latencies = attribute("latency_us", levels, unit, defaults_.latency_us, false);
  // Invalid values are already reported and the builder throws before using these.
  return LevelAttributes(bandwidths.value_or(std::vector<double>{1.0}), latencies.value_or(std::vector<double>{0.0}));
}

bool ParamReader::check_size(const std::string& name, const SizeCounts& counts) {
  bool fits = true;
  auto refuse = [&](std::uint64_t count, std::uint64_t limit, const std::string& what) {
    if (count <= limit) return;
    fail(name, "too large: " + format_count(count) + " " + what + " (at most " + format_count(limit) + ")");
    fits = false;
  };
  refuse(counts.npus, kMaxNpus, "NPUs");
  refuse(counts.switches, kMaxSwitches, "switches");
  refuse(counts.links, kMaxLinks, "directed links");
  if (counts.npus < 2) {
    fail(name, "too small: " + format_count(counts.npus) + (counts.npus == 1 ? " NPU" : " NPUs") + " (at least 2)");
    fits = false;
  }
  // Checked here, before building: a small file could otherwise build a huge network only to be
  // refused for a count it never meant.
  if (fits && expected_npus_ && counts.npus != *expected_npus_) {
    problems_.add("/npus", std::to_string(*expected_npus_) + " does not match the " + std::to_string(counts.npus) +
                               " NPUs the generator builds");
    fits = false;
  }
  return fits;
}

std::string format_count(std::uint64_t count) {
  if (count >= kCountCap) return "more than 10^18";
  std::string digits = std::to_string(count);
  std::string text;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

std::string format_number(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (error != std::errc{}) return "?";
  return std::string(buffer, end);
}

std::string join_shape(const std::vector<std::uint64_t>& shape) {
  std::string text;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

void name_topology(Topology& topology, const std::string& kind, const std::string& shape,
                   const std::string& links_text) {
  std::string dashed = kind;
  std::string spaced = kind;
  for (std::size_t i = 0; i < kind.size(); ++i) {
    if (kind[i] == '_') {
      dashed[i] = '-';
      spaced[i] = ' ';
    }
  }
  topology.name = dashed + "-" + shape;
  std::string summary = format_count(topology.npu_count()) + " NPUs";
  if (topology.switch_count() != 0) {
    summary += ", " + format_count(topology.switch_count()) + (topology.switch_count() == 1 ? " switch" : " switches");
  }
  summary += ", " + format_count(topology.link_count()) + " links";
  topology.description = spaced + " " + shape + ": " + summary + "; " + links_text;
}

}  // namespace tenet::generator_detail
