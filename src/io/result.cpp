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
  object["time_us"] = result.time_us;
  object["algbw_GBps"] = result.algbw_GBps();
  object["lower_bound_us"] = result.lower_bound_us;
  object["verified"] = result.verified;
  if (result.synthesis_ms) object["synthesis_ms"] = *result.synthesis_ms;
  if (result.transfers) object["transfers"] = *result.transfers;
  for (auto it = result.extra.begin(); it != result.extra.end(); ++it) object[it.key()] = it.value();
  return object;
}

}  // namespace tenet
