// SPDX-License-Identifier: MIT
#include "tenet/collective.hpp"

#include <algorithm>
#include <numeric>

#include "tenet/common/error.hpp"

namespace tenet {

std::string collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather: return "allgather";
    case CollectiveKind::kReduceScatter: return "reducescatter";
    case CollectiveKind::kAllReduce: return "allreduce";
  }
  return "unknown";
}

CollectiveKind parse_collective(const std::string& text, const std::string& option) {
  std::string key;
  for (char c : text) {
    if (c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (key == "allgather" || key == "ag") return CollectiveKind::kAllGather;
  if (key == "reducescatter" || key == "rs") return CollectiveKind::kReduceScatter;
  if (key == "allreduce" || key == "ar") return CollectiveKind::kAllReduce;
  std::string message = "unknown collective '" + text + "'";
  std::string suggestion = closest_match(key, {"allgather", "reducescatter", "allreduce"});
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  throw InputError("", option, message + "; expected allgather, reducescatter or allreduce");
}

std::vector<NodeId> Collective::participants(const Topology& topology) const {
  if (!members.empty()) return members;
  std::vector<NodeId> all(topology.npu_count());
  std::iota(all.begin(), all.end(), NodeId{0});
  return all;
}

}  // namespace tenet
