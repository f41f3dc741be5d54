// SPDX-License-Identifier: MIT
#include "even_split.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "tenet/common/units.hpp"

namespace tenet::synth {
namespace {

/// A member's links on one side: (alpha, bandwidth) pairs, sorted. Members with the same
/// multiset take in the same time, so each distinct one is evaluated once (a torus has one).
using Side = std::vector<std::pair<double, double>>;
struct Profile {
  Side in;
  Side out;
  bool operator==(const Profile&) const = default;
  auto operator<=>(const Profile&) const = default;
};

Side side_of(const Topology& topology, const std::vector<LinkId>& links) {
  Side side;
  side.reserve(links.size());
  for (LinkId id : links) side.emplace_back(topology.link(id).latency_us, topology.link(id).bandwidth_GBps);
  std::sort(side.begin(), side.end());
  return side;
}

std::vector<Profile> distinct_profiles(const Topology& topology, const std::vector<NodeId>& members,
                                       CollectiveKind kind) {
  std::vector<Profile> profiles;
  profiles.reserve(members.size());
  for (NodeId member : members) {
    Profile profile;
    if (kind != CollectiveKind::kReduceScatter) profile.in = side_of(topology, topology.in_links(member));
    if (kind != CollectiveKind::kAllGather) profile.out = side_of(topology, topology.out_links(member));
    profiles.push_back(std::move(profile));
  }
  std::sort(profiles.begin(), profiles.end());
  profiles.erase(std::unique(profiles.begin(), profiles.end()), profiles.end());
  return profiles;
}

/// The least T at which links landing a chunk every alpha + chunk / bandwidth land `chunks`:
/// sum over links of floor(T / t) >= chunks. Found by bisection between the fluid bound and the
/// fastest link alone, to a relative 1e-12 (the count only ranks chunk counts).
double whole_chunk_time(const Side& side, double chunks, double chunk_bytes) {
  if (chunks <= 0.0) return 0.0;
  if (side.empty()) return std::numeric_limits<double>::infinity();
  double rate = 0.0;
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& [alpha, bandwidth] : side) {
    const double t = link_time_us(chunk_bytes, alpha, bandwidth);
    rate += 1.0 / t;
    fastest = std::min(fastest, t);
  }
  auto landed = [&](double time) {
    double count = 0.0;
    for (const auto& [alpha, bandwidth] : side) count += std::floor(time / link_time_us(chunk_bytes, alpha, bandwidth));
    return count;
  };
  double low = chunks / rate;
  double high = chunks * fastest;
  while (high - low > 1e-12 * high) {
    const double mid = 0.5 * (low + high);
    (landed(mid) >= chunks ? high : low) = mid;
  }
  return high;
}

double ingress_of(const std::vector<Profile>& profiles, std::size_t members, double size_bytes,
                  std::uint32_t chunks_per_member) {
  const double chunk_bytes = size_bytes / (static_cast<double>(members) * chunks_per_member);
  const double chunks = static_cast<double>(members - 1) * chunks_per_member;
  double worst = 0.0;
  for (const Profile& profile : profiles) {
    worst = std::max(worst, whole_chunk_time(profile.in, profile.in.empty() ? 0.0 : chunks, chunk_bytes) +
                                whole_chunk_time(profile.out, profile.out.empty() ? 0.0 : chunks, chunk_bytes));
  }
  return worst;
}

}  // namespace

double whole_chunk_ingress_us(const Topology& topology, const std::vector<NodeId>& members, CollectiveKind kind,
                              double size_bytes, std::uint32_t chunks_per_member) {
  return ingress_of(distinct_profiles(topology, members, kind), members.size(), size_bytes, chunks_per_member);
}

std::optional<std::uint32_t> even_split_chunk_count(const Topology& topology, const std::vector<NodeId>& members,
                                                    CollectiveKind kind, double size_bytes, std::uint32_t max_count) {
  if (topology.switch_count() > 0 || members.size() < 2 || max_count == 0) return std::nullopt;
  const std::vector<Profile> profiles = distinct_profiles(topology, members, kind);
  std::uint32_t best = 1;
  double best_us = ingress_of(profiles, members.size(), size_bytes, 1);
  for (std::uint32_t count = 2; count <= max_count; ++count) {
    const double us = ingress_of(profiles, members.size(), size_bytes, count);
    // Strictly better beyond rounding: ties keep the smaller count (fewer alphas, fewer transfers).
    if (us < best_us * (1.0 - 1e-9)) {
      best = count;
      best_us = us;
    }
  }
  return best;
}

}  // namespace tenet::synth
