// SPDX-License-Identifier: MIT
#pragma once
// Typed reads of JSON fields that report problems by JSON pointer instead of throwing at the
// first one, so a file's every mistake is listed in one run.

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tenet/common/error.hpp"

namespace tenet::json_fields {

/// Short name of a JSON value's type for messages: "a string", "an array", "a fractional number".
std::string describe_type(const nlohmann::json& value);

/// Adds a problem for every key of `object` not in `known`, suggesting the closest known key.
void reject_unknown_keys(const nlohmann::json& object, const std::string& pointer,
                         const std::vector<std::string>& known, ProblemList& problems);

/// An integer in [min, max]; nullopt (with a problem added) otherwise.
std::optional<std::int64_t> read_integer(const nlohmann::json& value, const std::string& pointer, std::int64_t min,
                                         std::int64_t max, ProblemList& problems);

/// A bandwidth in GB/s, kMinBandwidth_GBps to kMaxBandwidth_GBps.
std::optional<double> read_bandwidth(const nlohmann::json& value, const std::string& pointer, ProblemList& problems);

/// A latency in microseconds, 0 to kMaxLatency_us.
std::optional<double> read_latency(const nlohmann::json& value, const std::string& pointer, ProblemList& problems);

/// What read_bandwidth and read_latency accept, for messages: "a bandwidth from 1e-6 to 1e6 GB/s".
extern const char* const kBandwidthRange;
extern const char* const kLatencyRange;

/// A string; nullopt (with a problem added) otherwise.
std::optional<std::string> read_string(const nlohmann::json& value, const std::string& pointer, ProblemList& problems);

/// A boolean; nullopt (with a problem added) otherwise.
std::optional<bool> read_bool(const nlohmann::json& value, const std::string& pointer, ProblemList& problems);

/// The JSON pointer of the value where parsing `text` fails ("" for the top level), found by
/// parsing it again while keeping only the containers still open; for failures nlohmann reports
/// without a position (a number too large for a double).
std::string pointer_where_parse_fails(const std::string& text);
/// The same for a stream, read again from where it is now.
std::string pointer_where_parse_fails(std::istream& in);

/// The problem nlohmann reports as "number overflow parsing '1e400'", at `pointer`: the number,
/// shortened when long, and the range of a double that JSON numbers must be in.
InputProblem number_overflow_problem(const nlohmann::json::out_of_range& error, std::string pointer);

/// nlohmann's parser takes a NUL byte for the end of the text, so anything after one (appended
/// garbage) would be ignored. The problem of the first NUL byte in `text`, if there is one.
std::optional<InputProblem> find_nul_byte(const std::string& text);
/// The same after `in` was parsed without error: the parse stopped at a NUL byte when the stream
/// is not at its end (a stream that is not seekable reports no position).
std::optional<InputProblem> nul_byte_after_parse(std::istream& in);

}  // namespace tenet::json_fields
