// SPDX-License-Identifier: MIT
// The survey: structural checks (everything decidable from one transfer at a time, before any data
// moves), reported in transfer order so the first problem of the earliest bad transfer wins, plus
// the facts later passes need, gathered in the same walk.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tenet/common/error.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/common/units.hpp"
#include "verify_internal.hpp"

namespace tenet::verify_detail {
namespace {

/// Transfers per parallel task of the survey.
constexpr std::size_t kSurveyGrain = 16384;
/// How many transfers ahead the survey prefetches dependencies' times.
constexpr std::size_t kPrefetchDistance = 16;

std::string topology_size(const Topology& topology) {
  std::string size = cat(topology.npu_count(), " NPUs");
  if (topology.switch_count() > 0) size += cat(" and ", topology.switch_count(), " switches");
  return size;
}

/// "" when `node` is an NPU of the topology.
std::string endpoint_problem(const Topology& topology, TransferId id, NodeId node, const char* role) {
  if (topology.is_npu(node)) return "";
  if (node >= topology.node_count()) {
    return cat("transfer ", id, ": ", role, " node ", node, " does not exist (the topology has ",
               topology_size(topology), ")");
  }
  return cat("transfer ", id, ": ", role, " is ", topology.node_label(node), ", not an NPU (switches hold no data)");
}

std::string schedule_problem(const Topology& topology, const Schedule& schedule) {
  const std::vector<NodeId>& members = schedule.members();
  if (members.empty()) return "the schedule has no members";
  if (schedule.chunks_per_member() == 0) return "the schedule has 0 chunks per member";
  if (static_cast<std::uint64_t>(members.size()) * schedule.chunks_per_member() > UINT32_MAX) {
    return cat("the schedule has ", members.size(), " members x ", schedule.chunks_per_member(),
               " chunks, more than tenet supports (at most ", UINT32_MAX, " chunks)");
  }
  std::vector<bool> is_member(topology.npu_count(), false);
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i] >= topology.npu_count()) {
      return cat("member ", i, " is NPU id ", members[i], ", but the topology has ", topology.npu_count(),
                 " NPUs (ids 0 to ", topology.npu_count() - 1, ")");
    }
    if (is_member[members[i]]) return cat(topology.node_label(members[i]), " is listed twice among the members");
    is_member[members[i]] = true;
  }
  if (schedule.size() > kMaxTransfers) {
    return cat("the schedule has ", schedule.size(), " transfers, more than the verifier supports (at most ",
               kMaxTransfers, ")");
  }
  return "";
}

/// The first problem of one transfer, or "".
std::string transfer_problem(const Topology& topology, const Schedule& schedule, TransferId id,
                             std::vector<TransferId>& seen_in) {
  const Transfer& transfer = schedule.transfer(id);
  if (std::string problem = endpoint_problem(topology, id, transfer.src, "source"); !problem.empty()) return problem;
  if (std::string problem = endpoint_problem(topology, id, transfer.dst, "destination"); !problem.empty())
    return problem;
  if (transfer.src == transfer.dst)
    return cat("transfer ", id, ": ", topology.node_label(transfer.src), " sends to itself");
  // Built only for a message: a schedule has millions of transfers and (almost) no problems.
  const auto label = [&] { return transfer_label(topology, schedule, id); };
  if (transfer.chunk_count == 0) return cat(label(), ": moves no chunks");
  const ChunkId chunk_count = schedule.chunk_count();
  for (ChunkId chunk : schedule.chunks_of(transfer)) {
    if (chunk >= chunk_count) {
      return cat(transfer_label(topology, schedule, id, chunk), ": chunk ", chunk, " does not exist (the schedule has ",
                 chunk_count, " chunks)");
    }
    if (seen_in[chunk] == id + 1)
      return cat(transfer_label(topology, schedule, id, chunk), ": chunk ", chunk, " is listed twice");
    seen_in[chunk] = id + 1;
  }
  if (transfer.kind != TransferKind::kCopy && transfer.kind != TransferKind::kReduce) {
    return cat(label(), ": unknown transfer kind ", static_cast<int>(transfer.kind));
  }
  if (schedule.collective() == CollectiveKind::kAllGather && transfer.kind == TransferKind::kReduce) {
    return cat(label(), ": a reduce in an all-gather (all-gather moves copies only)");
  }
  if (schedule.collective() == CollectiveKind::kReduceScatter && transfer.kind == TransferKind::kCopy) {
    return cat(label(), ": a copy in a reduce-scatter (reduce-scatter moves reduces only)");
  }
  // A list shared with the transfer before (a direct all-reduce's sends from one NPU) was checked
  // there against a smaller id.
  if (id == 0 || !schedule.same_deps(id - 1, id)) {
    for (TransferId dep : schedule.deps_of(transfer)) {
      if (dep >= id) return cat(label(), ": dependency ", dep, " is not an earlier transfer");
    }
  }
  if (!std::isfinite(transfer.start_us) || transfer.start_us < 0.0) {
    return cat(label(), ": starts at ", transfer.start_us, " us (times must be finite and >= 0)");
  }
  if (!std::isfinite(transfer.end_us) || transfer.end_us < 0.0) {
    return cat(label(), ": ends at ", transfer.end_us, " us (times must be finite and >= 0)");
  }
  if (!time_leq(transfer.start_us, transfer.end_us)) {
    return cat(label(), ": ends at ", transfer.end_us, " us, before it starts at ", transfer.start_us, " us");
  }
  if (transfer.route != kNoRoute) {
    if (transfer.route >= schedule.route_count())
      return cat(label(), ": planned route ", transfer.route, " does not exist");
    NodeId at = transfer.src;
    const std::span<const LinkId> path = schedule.route_links(transfer.route);
    for (std::size_t i = 0; i < path.size(); ++i) {
      if (path[i] >= topology.link_count() || topology.link(path[i]).src != at ||
          (i + 1 < path.size() && !topology.is_switch(topology.link(path[i]).dst))) {
        return cat(label(), ": its planned route is not a chain of links through switches from ",
                   topology.node_label(transfer.src));
      }
      at = topology.link(path[i]).dst;
    }
    if (at != transfer.dst)
      return cat(label(), ": its planned route ends at ", topology.node_label(at), ", not at its dst");
  }
  if (transfer.link != kNoLink) {
    if (transfer.link >= topology.link_count()) {
      return cat(label(), ": planned link ", transfer.link, " does not exist (the topology has ", topology.link_count(),
                 " links)");
    }
    const Link& link = topology.link(transfer.link);
    if (link.src != transfer.src || link.dst != transfer.dst) {
      return cat(label(), ": planned link ", transfer.link, " goes ", topology.node_label(link.src), " -> ",
                 topology.node_label(link.dst), ", not ", topology.node_label(transfer.src), " -> ",
                 topology.node_label(transfer.dst));
    }
  }
  return "";
}

}  // namespace

Survey survey_schedule(const Topology& topology, const Schedule& schedule) {
  Survey survey;
  survey.problem = schedule_problem(topology, schedule);
  if (!survey.problem.empty()) return survey;
  const std::size_t count = schedule.size();

  // Blocks of transfers are checked in parallel; each block stops at its own first problem and
  // the earliest block's wins, so the message is the one a walk in transfer order would give.
  struct Facts {
    TransferId first_problem = kNoTransfer;
    bool links_planned = true;
    bool starts_sorted = true;
    bool times_monotone = true;
    bool durations_and_deps_hold = true;
    bool any_routed = false;
    std::uint64_t chunk_entries = 0;
  };
  // seen_in[c] == id + 1 while transfer `id` is checked: finds a chunk listed twice in O(chunks).
  ThreadLocal<std::vector<TransferId>> seen([&] { return std::vector<TransferId>(schedule.chunk_count(), 0); });
  Facts facts = parallel_reduce(
      std::size_t{0}, count, kSurveyGrain, Facts{},
      [&](std::size_t first, std::size_t last, Facts facts) {
        if (facts.first_problem != kNoTransfer && facts.first_problem < first) return facts;
        std::vector<TransferId>& seen_in = seen.local();
        double latest_dep_end = 0.0;  // of the dependency list the last transfer named
        for (std::size_t i = first; i != last; ++i) {
          const TransferId id = static_cast<TransferId>(i);
          if (!transfer_problem(topology, schedule, id, seen_in).empty()) {
            facts.first_problem = std::min(facts.first_problem, id);
            return facts;
          }
          // The dependencies' end times are the one random access here: ask for them early.
          if (const std::size_t ahead = i + kPrefetchDistance;
              ahead < last && !schedule.same_deps(static_cast<TransferId>(ahead - 1), static_cast<TransferId>(ahead))) {
            for (TransferId dep : schedule.deps_of(static_cast<TransferId>(ahead))) schedule.prefetch_times(dep);
          }
          const Transfer transfer = schedule.transfer(id);
          facts.links_planned = facts.links_planned && transfer.link != kNoLink;
          facts.any_routed = facts.any_routed || (transfer.link == kNoLink && transfer.route == kNoRoute);
          facts.starts_sorted = facts.starts_sorted && (id == 0 || schedule.start_us(id - 1) <= transfer.start_us);
          facts.times_monotone = facts.times_monotone && transfer.start_us <= transfer.end_us;
          if (i == first || !schedule.same_deps(id - 1, id)) {
            latest_dep_end = 0.0;
            for (TransferId dep : schedule.deps_of(transfer))
              latest_dep_end = std::max(latest_dep_end, schedule.end_us(dep));
          }
          // Both checks hold for every dependency exactly when they hold for the latest (end times
          // are finite here: transfer_problem checked each dependency as a transfer of its own).
          facts.times_monotone = facts.times_monotone && latest_dep_end <= transfer.start_us;
          facts.durations_and_deps_hold = facts.durations_and_deps_hold && time_leq(latest_dep_end, transfer.start_us);
          if (transfer.link != kNoLink) {
            const Link& link = topology.link(transfer.link);
            const double needed = link_time_us(schedule.bytes_of(transfer), link.latency_us, link.bandwidth_GBps);
            facts.durations_and_deps_hold =
                facts.durations_and_deps_hold && time_leq(transfer.start_us + needed, transfer.end_us);
          } else if (transfer.route != kNoRoute) {
            const double needed =
                path_time_us(topology, schedule.route_links(transfer.route), schedule.bytes_of(transfer));
            facts.durations_and_deps_hold =
                facts.durations_and_deps_hold && time_leq(transfer.start_us + needed, transfer.end_us);
          }
          facts.chunk_entries += transfer.chunk_count;
        }
        return facts;
      },
      [](Facts a, const Facts& b) {
        a.first_problem = std::min(a.first_problem, b.first_problem);
        a.links_planned = a.links_planned && b.links_planned;
        a.starts_sorted = a.starts_sorted && b.starts_sorted;
        a.times_monotone = a.times_monotone && b.times_monotone;
        a.durations_and_deps_hold = a.durations_and_deps_hold && b.durations_and_deps_hold;
        a.any_routed = a.any_routed || b.any_routed;
        a.chunk_entries += b.chunk_entries;
        return a;
      });
  if (facts.first_problem != kNoTransfer) {
    std::vector<TransferId> seen_in(schedule.chunk_count(), 0);
    survey.problem = transfer_problem(topology, schedule, facts.first_problem, seen_in);
    return survey;
  }
  if (facts.any_routed) {
    // The simulator routes these; a time shorter than the route's is a time no network gives.
    try {
      survey.routes = std::make_shared<const sim::RouteTable>(topology, schedule, RoutingPolicy::kAuto);
    } catch (const InputError& error) {
      const InputProblem& first = error.problems().front();
      survey.problem = cat(first.where, ": ", first.message);
      return survey;
    }
    const sim::RouteTable& routes = *survey.routes;
    facts.durations_and_deps_hold =
        facts.durations_and_deps_hold &&
        parallel_reduce(
            std::size_t{0}, count, kSurveyGrain, true,
            [&](std::size_t first, std::size_t last, bool hold) {
              for (std::size_t i = first; i != last && hold; ++i) {
                const Transfer transfer = schedule.transfer(static_cast<TransferId>(i));
                if (transfer.link != kNoLink || transfer.route != kNoRoute) continue;
                hold = time_leq(transfer.start_us + routed_time_us(routes, transfer, schedule.bytes_of(transfer)),
                                transfer.end_us);
              }
              return hold;
            },
            [](bool a, bool b) { return a && b; });
  }
  survey.links_planned = count != 0 && facts.links_planned;
  survey.starts_sorted = facts.starts_sorted;
  survey.times_monotone = facts.times_monotone;
  survey.durations_and_deps_hold = facts.durations_and_deps_hold;
  survey.chunk_entries = facts.chunk_entries;

  // Rows: members first, then the other NPUs in order of first appearance (a transfer's source
  // before its destination). Endpoints are valid NPUs here.
  SlotRows& rows = survey.rows;
  rows.row_of.assign(topology.npu_count(), SlotRows::kNoRow);
  for (NodeId member : schedule.members()) rows.row_of[member] = rows.rows++;
  std::vector<std::uint64_t> first_seen(topology.npu_count(), ~std::uint64_t{0});
  for (std::size_t id = 0; id < count; ++id) {
    first_seen[schedule.src(static_cast<TransferId>(id))] =
        std::min<std::uint64_t>(first_seen[schedule.src(static_cast<TransferId>(id))], 2 * id);
    first_seen[schedule.dst(static_cast<TransferId>(id))] =
        std::min<std::uint64_t>(first_seen[schedule.dst(static_cast<TransferId>(id))], 2 * id + 1);
  }
  std::vector<std::pair<std::uint64_t, NodeId>> others;
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    if (rows.row_of[npu] == SlotRows::kNoRow && first_seen[npu] != ~std::uint64_t{0})
      others.push_back({first_seen[npu], npu});
  }
  std::sort(others.begin(), others.end());
  for (const auto& [seen_at, npu] : others) rows.row_of[npu] = rows.rows++;
  return survey;
}

}  // namespace tenet::verify_detail
