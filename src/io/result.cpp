// SPDX-License-Identifier: MIT
#include "tenet/io/result.hpp"

namespace tenet {

nlohmann::json result_to_json(const CollectiveResult& result) {
  nlohmann::json object = {
      {"algorithm", result.algorithm},
      {"collective", collective_name(result.collective)},
      {"npus", result.npus},
      {"size_bytes", result.size_bytes},
  };
  if (!result.applicable) {
    object["applicable"] = false;
    object["reason"] = result.reason;
    object["verified"] = false;
    return object;
  }
  object["applicable"] = true;
  if (result.time_at_least_us) {
    object["time_us"] = nullptr;
    object["algbw_GBps"] = nullptr;
    object["simulated"] = false;
    object["time_at_least_us"] = *result.time_at_least_us;
  } else {
    object["time_us"] = result.time_us;
    object["algbw_GBps"] = result.algbw_GBps();
  }
  object["lower_bound_us"] = result.bound.total_us;
  object["lower_bound_term"] = result.bound.binding_name();
  object["lower_bound_terms"] = lower_bound_terms_json(result.bound);
  if (result.bound.total_us > 0.0 && !result.time_at_least_us)
    object["time_over_lower_bound"] = result.time_us / result.bound.total_us;
  object["verified"] = result.verified;
  if (result.synthesis_ms) object["synthesis_ms"] = *result.synthesis_ms;
  if (result.transfers) object["transfers"] = *result.transfers;
  for (auto it = result.extra.begin(); it != result.extra.end(); ++it) object[it.key()] = it.value();
  return object;
}

nlohmann::json lower_bound_terms_json(const LowerBound& bound) {
  nlohmann::json terms = {
      {"ingress_us", bound.ingress_us}, {"cut_us", bound.cut_us},       {"cut_bandwidth_us", bound.cut_bandwidth_us},
      {"latency_us", bound.latency_us}, {"cut_exact", bound.cut.exact}, {"groups_us", bound.groups_us}};
  if (bound.groups.groups != 0) {
    terms["groups"] = bound.groups.groups;
    terms["groups_bandwidth_GBps"] = bound.groups.bandwidth_GBps;
  }
  if (!bound.cut.exact) {
    terms["cut_members_checked"] = bound.cut.sinks;
    terms["cut_note"] = cut_coverage_note(bound.cut);
  }
  return terms;
}

}  // namespace tenet
