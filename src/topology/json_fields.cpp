#include "json_fields.hpp"

#include <cmath>

namespace tenet::json_fields {
namespace {

/// RFC 6901 escaping of one pointer token ('~' -> "~0", '/' -> "~1").
std::string escape_token(const std::string& token) {
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

}  // namespace

std::string describe_type(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_float: return "the number " + value.dump();
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "the integer " + value.dump();
    default: return "an unsupported value";
  }
}

void reject_unknown_keys(const nlohmann::json& object, const std::string& pointer,
                         const std::vector<std::string>& known, ProblemList& problems) {
  if (!object.is_object()) return;
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool is_known = false;
    for (const std::string& key : known) is_known = is_known || key == it.key();
    if (is_known) continue;
    std::string message = "unknown field '" + it.key() + "'";
    std::string suggestion = closest_match(it.key(), known);
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    problems.add(pointer + "/" + escape_token(it.key()), message);
  }
}

std::optional<std::int64_t> read_integer(const nlohmann::json& value, const std::string& pointer,
                                         std::int64_t min, std::int64_t max, ProblemList& problems) {
  std::string range = max == INT64_MAX ? "an integer >= " + std::to_string(min)
                                       : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  std::optional<std::int64_t> result;
  if (value.is_number_unsigned()) {
    std::uint64_t raw = value.get<std::uint64_t>();
    if (raw <= static_cast<std::uint64_t>(INT64_MAX)) result = static_cast<std::int64_t>(raw);
  } else if (value.is_number_integer()) {
    result = value.get<std::int64_t>();
  } else if (value.is_number_float()) {
    // 4.0 is an integer written with a decimal point; 4.5 is not.
    double raw = value.get<double>();
    if (std::isfinite(raw) && raw == std::floor(raw) && std::fabs(raw) < 9e15) result = static_cast<std::int64_t>(raw);
  }
  if (!result || *result < min || *result > max) {
    problems.add(pointer, "must be " + range + " (got " + describe_type(value) + ")");
    return std::nullopt;
  }
  return result;
}

namespace {

std::optional<double> read_number(const nlohmann::json& value, const std::string& pointer, bool allow_zero,
                                  const std::string& expected, ProblemList& problems) {
  if (value.is_number()) {
    double raw = value.get<double>();
    if (std::isfinite(raw) && (raw > 0.0 || (allow_zero && raw == 0.0))) return raw;
  }
  problems.add(pointer, "must be " + expected + " (got " + describe_type(value) + ")");
  return std::nullopt;
}

}  // namespace

std::optional<double> read_bandwidth(const nlohmann::json& value, const std::string& pointer, ProblemList& problems) {
  return read_number(value, pointer, false, "a bandwidth > 0 in GB/s", problems);
}

std::optional<double> read_latency(const nlohmann::json& value, const std::string& pointer, ProblemList& problems) {
  return read_number(value, pointer, true, "a latency >= 0 in microseconds", problems);
}

std::optional<std::string> read_string(const nlohmann::json& value, const std::string& pointer, ProblemList& problems) {
  if (value.is_string()) return value.get<std::string>();
  problems.add(pointer, "must be a string (got " + describe_type(value) + ")");
  return std::nullopt;
}

std::optional<bool> read_bool(const nlohmann::json& value, const std::string& pointer, ProblemList& problems) {
  if (value.is_boolean()) return value.get<bool>();
  problems.add(pointer, "must be true or false (got " + describe_type(value) + ")");
  return std::nullopt;
}

}  // namespace tenet::json_fields
