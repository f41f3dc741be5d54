#pragma once
// Typed reads of JSON fields that report problems by JSON pointer instead of throwing at the
// first one, so a file's every mistake is listed in one run.

#include <cstdint>
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
std::optional<std::int64_t> read_integer(const nlohmann::json& value, const std::string& pointer,
                                         std::int64_t min, std::int64_t max, ProblemList& problems);

/// A finite number > 0 (bandwidth, GB/s).
std::optional<double> read_bandwidth(const nlohmann::json& value, const std::string& pointer, ProblemList& problems);

/// A finite number >= 0 (latency, microseconds).
std::optional<double> read_latency(const nlohmann::json& value, const std::string& pointer, ProblemList& problems);

/// A string; nullopt (with a problem added) otherwise.
std::optional<std::string> read_string(const nlohmann::json& value, const std::string& pointer, ProblemList& problems);

/// A boolean; nullopt (with a problem added) otherwise.
std::optional<bool> read_bool(const nlohmann::json& value, const std::string& pointer, ProblemList& problems);

}  // namespace tenet::json_fields
