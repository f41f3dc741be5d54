// SPDX-License-Identifier: MIT
// Member lists ("0,1,4-7") for collectives that run on a subset of the NPUs. Users write the ids
// of their topology file, so the list is read in original ids and mapped to the current numbering.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tenet/common/error.hpp"
#include "tenet/topology/transforms.hpp"

namespace tenet {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

/// A whole non-negative decimal number, or false. Anything that does not fit in 64 bits cannot
/// be an NPU id either, so overflow is just "not a number".
bool parse_id(std::string_view text, std::uint64_t* value) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc{} && end == text.data() + text.size();
}

/// Maps original ids to current ones without a table as large as the original NPU count.
class IdMap {
 public:
  explicit IdMap(const Topology& topology) : topology_(topology) {
    for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
      const NodeId original = topology.original_npu_id(npu);
      largest_ = std::max<std::uint64_t>(largest_, original);
      if (!topology.original_npu_ids.empty()) current_.emplace(original, npu);
    }
  }

  bool renumbered() const { return !topology_.original_npu_ids.empty(); }
  /// Past this no id needs looking at: there is no such NPU, failed or not.
  std::uint64_t largest() const { return largest_; }

  /// The current id, or kNoNode when the NPU does not exist (any more).
  NodeId find(std::uint64_t original) const {
    if (!renumbered()) return original < topology_.npu_count() ? static_cast<NodeId>(original) : kNoNode;
    const auto it = current_.find(static_cast<NodeId>(original));
    return it == current_.end() ? kNoNode : it->second;
  }

 private:
  const Topology& topology_;
  std::uint64_t largest_ = 0;
  std::unordered_map<NodeId, NodeId> current_;
};

}  // namespace

std::vector<NodeId> parse_members(const std::string& text, const Topology& topology, const std::string& option) {
  ProblemList problems("");
  const IdMap ids(topology);
  std::vector<NodeId> members;
  std::vector<char> listed(topology.npu_count(), 0);

  auto missing = [&](std::uint64_t id) {
    if (!ids.renumbered()) {
      return "there is no NPU " + std::to_string(id) + " (NPU ids are 0.." +
             std::to_string(topology.npu_count() == 0 ? 0 : topology.npu_count() - 1) + ")";
    }
    // Below the largest survivor an absent id can only have failed; above it the topology no
    // longer records whether it ever existed.
    if (id < ids.largest()) return "NPU " + std::to_string(id) + " failed and cannot be a member";
    return "there is no NPU " + std::to_string(id) + " among the surviving NPUs (the largest is " +
           std::to_string(ids.largest()) + ")";
  };
  auto add = [&](std::uint64_t id) {
    const NodeId npu = ids.find(id);
    if (npu == kNoNode) {
      problems.add(option, missing(id));
    } else if (listed[npu]) {
      problems.add(option, "NPU " + std::to_string(id) + " is listed twice");
    } else {
      listed[npu] = 1;
      members.push_back(npu);
    }
  };

  const std::string_view all(text);
  if (trim(all).empty()) {
    throw InputError("", option, "the member list is empty; expected NPU ids such as 0,1,4-7");
  }
  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t comma = all.find(',', start);
    if (comma == std::string_view::npos) comma = all.size();
    const std::string_view entry = trim(all.substr(start, comma - start));
    start = comma + 1;

    if (entry.empty()) {
      problems.add(option, "empty entry in the member list '" + text + "'; expected NPU ids such as 0,1,4-7");
      continue;
    }
    const std::size_t dash = entry.find('-');
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    const bool ok = dash == std::string_view::npos ? parse_id(entry, &first)
                                                   : parse_id(trim(entry.substr(0, dash)), &first) &&
                                                         parse_id(trim(entry.substr(dash + 1)), &last);
    if (!ok && topology.find_switch(std::string(entry)) != kNoNode) {
      problems.add(option, "switch '" + std::string(entry) + "' cannot be a member: only NPUs own data");
      continue;
    }
    if (!ok) {
      std::string message = "'";
      message += entry;
      message += "' is not an NPU id or a range such as 4-7";
      problems.add(option, message);
      continue;
    }
    if (dash == std::string_view::npos) {
      add(first);
      continue;
    }
    if (first > last) {
      problems.add(option, "range " + std::to_string(first) + "-" + std::to_string(last) + " is backwards; write " +
                               std::to_string(last) + "-" + std::to_string(first));
      continue;
    }
    // Ids past the largest NPU are reported once for the whole range instead of one by one, so
    // a typo such as 0-1000000000 neither floods the output nor loops for long.
    const std::uint64_t stop = std::min(last, ids.largest());
    for (std::uint64_t id = first; id <= stop; ++id) add(id);
    if (last > ids.largest()) {
      problems.add(option, "range " + std::to_string(first) + "-" + std::to_string(last) +
                               " goes past the largest NPU id " + std::to_string(ids.largest()));
    }
  }
  problems.throw_if_any();

  if (members.size() < 2) {
    throw InputError("", option, "a collective needs at least 2 members, got " + std::to_string(members.size()));
  }
  std::sort(members.begin(), members.end());
  return members;
}

}  // namespace tenet
