// SPDX-License-Identifier: MIT
#include "json_fields.hpp"

#include <algorithm>
#include <cmath>

#include "tenet/topology/topology.hpp"

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

std::optional<std::int64_t> read_integer(const nlohmann::json& value, const std::string& pointer, std::int64_t min,
                                         std::int64_t max, ProblemList& problems) {
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

std::optional<double> read_number(const nlohmann::json& value, const std::string& pointer, double min, double max,
                                  const char* expected, ProblemList& problems) {
  if (value.is_number()) {
    double raw = value.get<double>();
    if (raw >= min && raw <= max) return raw == 0.0 ? 0.0 : raw;  // -0 reads as 0
  }
  problems.add(pointer, std::string("must be ") + expected + " (got " + describe_type(value) + ")");
  return std::nullopt;
}

}  // namespace

const char* const kBandwidthRange = "a bandwidth from 1e-6 to 1e6 GB/s";
const char* const kLatencyRange = "a latency from 0 to 1e6 microseconds";

std::optional<double> read_bandwidth(const nlohmann::json& value, const std::string& pointer, ProblemList& problems) {
  return read_number(value, pointer, kMinBandwidth_GBps, kMaxBandwidth_GBps, kBandwidthRange, problems);
}

std::optional<double> read_latency(const nlohmann::json& value, const std::string& pointer, ProblemList& problems) {
  return read_number(value, pointer, 0.0, kMaxLatency_us, kLatencyRange, problems);
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

namespace {

template <typename Input>
std::string pointer_where_parsing_stops(Input&& input) {
  struct Open {
    bool array = false;
    std::size_t index = 0;  ///< array: elements completed
    std::string key;        ///< object: the latest key
  };
  std::vector<Open> open;
  using Event = nlohmann::json::parse_event_t;
  // Values are dropped as soon as they complete, so memory stays at the open path.
  const auto track = [&open](int, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start: open.push_back({event == Event::array_start, 0, ""}); return true;
      case Event::key: open.back().key = parsed.get<std::string>(); return true;
      case Event::object_end:
      case Event::array_end: open.pop_back(); [[fallthrough]];
      case Event::value:
        if (!open.empty() && open.back().array) ++open.back().index;
        return false;
    }
    return false;
  };
  try {
    [[maybe_unused]] const nlohmann::json kept = nlohmann::json::parse(std::forward<Input>(input), track);
  } catch (const nlohmann::json::exception&) {
  }
  std::string pointer;
  for (const Open& level : open) {
    pointer += '/';
    pointer += level.array ? std::to_string(level.index) : escape_token(level.key);
  }
  return pointer;
}

}  // namespace

std::string pointer_where_parse_fails(const std::string& text) { return pointer_where_parsing_stops(text); }

std::string pointer_where_parse_fails(std::istream& in) { return pointer_where_parsing_stops(in); }

InputProblem number_overflow_problem(const nlohmann::json::out_of_range& error, std::string pointer) {
  // what(): "[json.exception.out_of_range.406] number overflow parsing '1e400'".
  std::string number = error.what();
  const std::size_t open = number.find('\'');
  const std::size_t close = number.rfind('\'');
  number = open != std::string::npos && close > open ? number.substr(open + 1, close - open - 1) : "";
  constexpr std::size_t kShown = 20;
  if (number.size() > kShown)
    number = number.substr(0, kShown) + "... (" + std::to_string(number.size()) + " characters)";
  return {std::move(pointer),
          "the number " + number + " is out of range (JSON numbers must fit a double: at most about 1.8e308)"};
}

namespace {

/// At 1-based `line` and `column`; 0 when the stream cannot tell.
InputProblem nul_byte_problem(std::uint64_t line, std::uint64_t column) {
  const std::string at = line == 0 ? "" : " at line " + std::to_string(line) + ", column " + std::to_string(column);
  return {"", "invalid JSON: a NUL byte" + at + "; a JSON file is text, and nothing may follow its value"};
}

}  // namespace

std::optional<InputProblem> find_nul_byte(const std::string& text) {
  const std::size_t nul = text.find('\0');
  if (nul == std::string::npos) return std::nullopt;
  const std::size_t line_start = text.rfind('\n', nul) + 1;  // npos + 1 == 0 on the first line
  const auto lines_before = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
  return nul_byte_problem(static_cast<std::uint64_t>(lines_before) + 1, nul - line_start + 1);
}

std::optional<InputProblem> nul_byte_after_parse(std::istream& in) {
  // The parser reads its input to the end, setting eofbit, unless a NUL byte stopped it.
  if (in.eof() || in.bad()) return std::nullopt;
  const std::istream::pos_type after_nul = in.tellg();
  in.clear();
  in.seekg(0);
  if (after_nul <= 0 || !in) return nul_byte_problem(0, 0);  // a pipe: no going back
  std::uint64_t line = 1;
  std::uint64_t column = 1;
  for (std::streamoff i = 0; i + 1 < static_cast<std::streamoff>(after_nul); ++i) {
    if (in.get() == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return nul_byte_problem(line, column);
}

}  // namespace tenet::json_fields
