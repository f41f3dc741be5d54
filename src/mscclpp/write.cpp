// SPDX-License-Identifier: MIT
// schedule_to_mscclpp_plan: nodes, the layout with shorter connection segments until every
// threadblock fits the op limit, the SPEC's limits, and a verification of the written text.

#include <algorithm>
#include <cctype>
#include <numeric>

#include "plan_model.hpp"
#include "tenet/common/error.hpp"
#include "tenet/sim/simulator.hpp"
#include "writer.hpp"

namespace tenet {

using namespace mscclpp_detail;
// Plan is named in full: in a unity batch after src/msccl/, msccl_detail::Plan is visible too.

std::vector<std::uint32_t> mscclpp_nodes(const Topology& topology, const std::vector<NodeId>& members) {
  // A node is what NVLink-class links join: NPUs linked directly, and NPUs on a switch that is
  // their fastest way out (an NVSwitch; a NIC's switch is slower than the NPU's other links).
  const std::uint32_t nodes = topology.node_count();
  std::vector<std::uint32_t> parent(nodes);
  std::iota(parent.begin(), parent.end(), 0u);
  const auto find = [&](std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    double fastest = 0.0;
    for (LinkId id : topology.out_links(npu)) fastest = std::max(fastest, topology.link(id).bandwidth_GBps);
    for (LinkId id : topology.out_links(npu)) {
      const Link& link = topology.link(id);
      if (topology.is_npu(link.dst) || link.bandwidth_GBps >= fastest) parent[find(npu)] = find(link.dst);
    }
  }
  std::vector<std::uint32_t> node_of(members.size());
  std::vector<std::uint32_t> seen;
  for (std::size_t r = 0; r < members.size(); ++r) {
    const std::uint32_t root = find(members[r]);
    auto it = std::find(seen.begin(), seen.end(), root);
    if (it == seen.end()) {
      seen.push_back(root);
      it = seen.end() - 1;
    }
    node_of[r] = static_cast<std::uint32_t>(it - seen.begin());
  }
  return node_of;
}

namespace {

/// Ops a transfer's end takes in a plan of the usual shape (mscclpp_transfer_room): the ring's
/// and the matching's plans take 3.7 (mesh-8x8 all-reduce), the trees' 6.5 (mesh-6x6: each piece
/// they forward crosses threadblocks by a semaphore). At 4 the trees of mesh-6x6's all-reduce of
/// 256 MiB were cut into 9 pieces, whose plan needs 113 threadblocks of 108.
constexpr std::uint64_t kOpsPerTransferEnd = 7;

std::vector<std::uint32_t> nodes_for(const Schedule& schedule, const Topology& topology,
                                     const MscclppOptions& options) {
  const std::size_t ranks = schedule.members().size();
  std::vector<std::uint32_t> node_of(ranks, 0);
  if (options.ranks_per_node > 0) {
    if (ranks % options.ranks_per_node != 0) {
      throw InputError(
          "", "--ranks-per-node",
          std::to_string(options.ranks_per_node) + " does not divide the " + std::to_string(ranks) + " ranks");
    }
    for (std::size_t r = 0; r < ranks; ++r) node_of[r] = static_cast<std::uint32_t>(r / options.ranks_per_node);
    return node_of;
  }
  if (topology.switch_count() == 0) return node_of;  // point-to-point: one node unless told
  node_of = mscclpp_nodes(topology, schedule.members());
  // MSCCL++ numbers the ranks of a node contiguously, and every node has as many (the shim matches
  // nRanksPerNode).
  const std::uint32_t node_count = *std::max_element(node_of.begin(), node_of.end()) + 1;
  const std::size_t per_node = ranks / node_count;
  bool regular = ranks % node_count == 0;
  for (std::size_t r = 0; r < ranks && regular; ++r) regular = node_of[r] == r / per_node;
  if (!regular) {
    throw InputError("", "--ranks-per-node",
                     "the topology's nodes (NPUs on one first-level switch or joined by direct links) are not "
                     "equal runs of consecutive ranks, as MSCCL++ requires; pass --ranks-per-node N");
  }
  return node_of;
}

std::string default_name(const Schedule& schedule) {
  std::string name = "tenet_" + schedule.algorithm() + "_" + collective_name(schedule.collective()) + "_" +
                     std::to_string(schedule.members().size());
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  }
  return name;
}

/// Each NPU's rank: its place among the schedule's members, -1 for the others.
std::vector<int> ranks_of(const Schedule& schedule, const Topology& topology) {
  std::vector<int> rank_of(topology.npu_count(), -1);
  for (std::size_t r = 0; r < schedule.members().size(); ++r) {
    if (schedule.members()[r] < rank_of.size()) rank_of[schedule.members()[r]] = static_cast<int>(r);
  }
  return rank_of;
}

/// The rank that needs the most ops at least, and how many: every send is at least one op (a
/// port's pwsf) and every receive two (wait or unpack, then a nop; writer_emit.cpp). Counted
/// before any layout, which takes seconds on the deep pipelines this turns away.
struct LeastOps {
  int rank = 0;
  std::uint64_t ops = 0;
};
LeastOps busiest_rank_least_ops(const Schedule& schedule, const std::vector<int>& rank_of) {
  std::vector<std::uint64_t> least(schedule.members().size(), 0);
  for (const Transfer& transfer : schedule.transfers()) {
    const int src = transfer.src < rank_of.size() ? rank_of[transfer.src] : -1;
    const int dst = transfer.dst < rank_of.size() ? rank_of[transfer.dst] : -1;
    if (src < 0 || dst < 0) return {};  // through a non-member: the layout says so
    least[static_cast<std::size_t>(src)] += 1;
    least[static_cast<std::size_t>(dst)] += 2;
  }
  LeastOps busiest;
  for (std::size_t r = 0; r < least.size(); ++r) {
    if (least[r] > busiest.ops) busiest = {static_cast<int>(r), least[r]};
  }
  return busiest;
}

std::uint64_t ops_room(const MscclppOptions& options) {
  return static_cast<std::uint64_t>(options.max_threadblocks) * kMaxOpsPerThreadblock;
}

/// The plan of the first layout, by shorter segments, whose threadblocks fit the limits; throws
/// InputError naming the limit and the option that helps where none does.
mscclpp_detail::Plan fitting_plan(const Schedule& schedule, const Topology& topology, const MscclppOptions& options,
                                  const std::string& name) {
  if (options.in_place && schedule.collective() == CollectiveKind::kReduceScatter) {
    throw InputError("", "--in-place",
                     "in-place reduce-scatter plans are not matched consistently by the MSCCL++ shim (only the "
                     "rank whose pointers coincide sees an in-place call); write it out of place");
  }
  if (options.max_threadblocks < 1) throw InputError("", "--max-threadblocks", "must be at least 1");
  const std::vector<int> rank_of = ranks_of(schedule, topology);
  // Fewer chunks per NPU make fewer transfers, where there are several; at one, only another
  // algorithm can help.
  const std::string fewer = schedule.chunks_per_member() > 1
                                ? "use fewer chunks per NPU (--chunks-per-npu)"
                                : "use an algorithm whose ranks have fewer transfers and peers (tenet compare -o "
                                  "writes the fastest one that fits)";
  if (const LeastOps busiest = busiest_rank_least_ops(schedule, rank_of); busiest.ops > ops_room(options)) {
    throw InputError("", "--max-threadblocks",
                     "rank " + std::to_string(busiest.rank) + " needs at least " + std::to_string(busiest.ops) +
                         " ops (one per send, two per receive) but its " + std::to_string(options.max_threadblocks) +
                         (options.max_threadblocks == 1 ? " threadblock holds " : " threadblocks hold ") +
                         std::to_string(ops_room(options)) + " (" + std::to_string(kMaxOpsPerThreadblock) +
                         " ops a threadblock); raise --max-threadblocks to the GPU's SM count, or " + fewer);
  }
  const std::vector<std::uint32_t> node_of = nodes_for(schedule, topology, options);

  // Shorter segments (more threadblocks, each with fewer ops) until every threadblock fits.
  std::string limit;
  bool pair_all = false;
  for (int cap : {0, 16, 12, 8, 6, 4, 3, 2, 1}) {
    Layout layout = lay_out(schedule, rank_of, node_of, options, cap, pair_all);
    if (!pair_all && std::any_of(layout.blocks.begin(), layout.blocks.end(),
                                 [&](const auto& blocks) { return blocks.size() > options.max_threadblocks; })) {
      pair_all = true;
      layout = lay_out(schedule, rank_of, node_of, options, cap, pair_all);
    }
    mscclpp_detail::Plan plan = emit_plan(layout, options, name);
    std::size_t most_ops = 0;
    std::size_t most_blocks = 0;
    int busiest_rank = 0;
    for (std::size_t r = 0; r < plan.gpus.size(); ++r) {
      if (plan.gpus[r].threadblocks.size() > most_blocks) {
        most_blocks = plan.gpus[r].threadblocks.size();
        busiest_rank = static_cast<int>(r);
      }
      for (const PlanThreadblock& block : plan.gpus[r].threadblocks) most_ops = std::max(most_ops, block.ops.size());
    }
    if (most_blocks > options.max_threadblocks) {
      throw InputError("", "--max-threadblocks",
                       "rank " + std::to_string(busiest_rank) + " needs " + std::to_string(most_blocks) +
                           " threadblocks (one per lane of transfers to or from a peer" +
                           (cap > 0 ? ", cut to fit 64 ops each" : std::string()) +
                           ") but MSCCL++ runs all of them at once and " + std::to_string(options.max_threadblocks) +
                           " fit; raise --max-threadblocks to the GPU's SM count, or " + fewer);
    }
    if (most_ops > static_cast<std::size_t>(kMaxOpsPerThreadblock)) {
      limit = std::to_string(most_ops) + " ops in one threadblock";
      continue;
    }
    return plan;
  }
  throw InputError("", "--output",
                   "the plan would need " + limit + " even with one transfer per threadblock; MSCCL++ allows " +
                       std::to_string(kMaxOpsPerThreadblock) +
                       (schedule.chunks_per_member() > 1
                            ? "; " + fewer
                            : " (a transfer takes an op per run of consecutive chunks it carries); use a schedule "
                              "whose transfers carry fewer chunks apart (synth --transfers chunk: one each)"));
}

/// The plan's text, read back and executed as a user's file would be (its transfers recorded
/// where `record`).
struct CheckedPlan {
  std::string text;
  mscclpp_detail::Plan reread;
  mscclpp_detail::ExecutionResult execution;
};
CheckedPlan checked_plan(const Schedule& schedule, const Topology& topology, const MscclppOptions& options,
                         bool record) {
  const std::string name = options.name.empty() ? default_name(schedule) : options.name;
  CheckedPlan checked;
  checked.text = plan_to_text(fitting_plan(schedule, topology, options, name));
  // The written text, not the plan in memory, is what the executor runs: check that.
  checked.reread = parse_plan(checked.text, name);
  std::string problem = check_plan_rules(checked.reread);
  if (problem.empty()) {
    checked.execution = execute_plan(checked.reread, true, record);
    problem = checked.execution.error;
  }
  if (!problem.empty()) throw std::logic_error("tenet wrote an MSCCL++ plan that does not verify: " + problem);
  return checked;
}

}  // namespace

std::string schedule_to_mscclpp_plan(const Schedule& schedule, const Topology& topology,
                                     const MscclppOptions& options) {
  return checked_plan(schedule, topology, options, false).text;
}

TimedMscclppPlan schedule_to_timed_mscclpp_plan(const Schedule& schedule, const Topology& topology,
                                                const MscclppOptions& options) {
  CheckedPlan checked = checked_plan(schedule, topology, options, true);
  const Schedule executed =
      mscclpp_detail::executed_schedule(checked.reread, checked.execution, schedule.size_bytes(), schedule.members());
  return {std::move(checked.text), simulate(topology, executed).time_us};
}

double mscclpp_plan_time_us(const Schedule& schedule, const Topology& topology, const MscclppOptions& options) {
  const std::string name = options.name.empty() ? default_name(schedule) : options.name;
  const mscclpp_detail::Plan plan = fitting_plan(schedule, topology, options, name);
  const mscclpp_detail::ExecutionResult execution = mscclpp_detail::execute_plan(plan, false, true);
  if (!execution.error.empty())
    throw std::logic_error("tenet laid out an MSCCL++ plan that does not execute: " + execution.error);
  return simulate(topology,
                  mscclpp_detail::executed_schedule(plan, execution, schedule.size_bytes(), schedule.members()))
      .time_us;
}

std::uint64_t mscclpp_transfer_room(const MscclppOptions& options) { return ops_room(options) / kOpsPerTransferEnd; }

bool mscclpp_threadblocks_suffice(const Schedule& schedule, const Topology& topology, const MscclppOptions& options) {
  const std::vector<int> rank_of = ranks_of(schedule, topology);
  if (busiest_rank_least_ops(schedule, rank_of).ops > ops_room(options)) return false;
  try {
    // The fewest threadblocks any layout has: every send paired with a receive, no segments.
    const Layout fewest = lay_out(schedule, rank_of, nodes_for(schedule, topology, options), options, 0, true);
    return std::none_of(fewest.blocks.begin(), fewest.blocks.end(),
                        [&](const auto& blocks) { return blocks.size() > options.max_threadblocks; });
  } catch (const InputError&) {
    return false;
  }
}

bool mscclpp_plan_fits(const Schedule& schedule, const Topology& topology, const MscclppOptions& options) {
  try {
    fitting_plan(schedule, topology, options, "fits");
    return true;
  } catch (const InputError&) {
    return false;
  }
}

namespace {

/// What `write` returns, or nullopt with `reason` set to the InputError's problems on one line
/// (where, then what).
template <class Write>
auto or_reason(const Write& write, std::string& reason) -> std::optional<decltype(write())> {
  try {
    return write();
  } catch (const InputError& error) {
    reason.clear();
    for (const InputProblem& problem : error.problems()) {
      if (!reason.empty()) reason += "; ";
      reason += problem.where.empty() ? problem.message : problem.where + ": " + problem.message;
    }
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> schedule_to_mscclpp_plan(const Schedule& schedule, const Topology& topology,
                                                    const MscclppOptions& options, std::string& reason) {
  return or_reason([&] { return schedule_to_mscclpp_plan(schedule, topology, options); }, reason);
}

std::optional<TimedMscclppPlan> schedule_to_timed_mscclpp_plan(const Schedule& schedule, const Topology& topology,
                                                               const MscclppOptions& options, std::string& reason) {
  return or_reason([&] { return schedule_to_timed_mscclpp_plan(schedule, topology, options); }, reason);
}

}  // namespace tenet
