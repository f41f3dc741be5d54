// SPDX-License-Identifier: MIT
// write_msccl_xml: lay out, add dependencies, check the limits, print, run the checker on the
// result, and time it as the runtime runs it. Layouts differ in channels (a connection's transfers
// dealt over 1, 2 or 4 channels) and in whether a forward is fused into the receive before it
// (fewer steps, but the threadblock then serves two peers in lockstep and publishes the received
// data only once it has also been sent on); which is faster depends on the schedule, so each is
// timed on the topology and the fastest is written. When a schedule does not fit the runtime's
// limits, the error names the limit and a change that fits: the number of channels is found by
// trying, the number of chunks per NPU estimated from how far over it is.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>

#include "tenet/common/error.hpp"
#include "tenet/common/parallel.hpp"
#include "tenet/common/units.hpp"
#include "tenet/sim/runtime_routes.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/routing.hpp"
#include "writer.hpp"

namespace tenet {
namespace {

using namespace msccl_detail;

/// The runtime uses a file for calls of minBytes <= bytes < maxBytes, maxBytes 128 MiB by default.
constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t{1} << 27;

/// Past the default, maxBytes must be written or the size the schedule was made for is never run
/// with it; twice that size leaves room around it.
std::uint64_t max_bytes(const Schedule& schedule) {
  return schedule.size_bytes() < kDefaultMaxBytes ? kDefaultMaxBytes : 2 * schedule.size_bytes();
}

/// Printable ASCII without "--", for comments (the reader ends a comment at the first "-->").
std::string comment_safe(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool printable = c >= ' ' && c <= '~';
    if (!printable) {
      out += '?';
    } else if (c == '-' && !out.empty() && out.back() == '-') {
      out += " -";
    } else {
      out += c;
    }
  }
  return out;
}

std::string default_name(const Schedule& schedule, const Topology& topology) {
  std::string name = "tenet_";
  name += schedule.algorithm();
  name += "_";
  name += collective_name(schedule.collective());
  name += "_";
  name += topology.name;
  for (char& c : name) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!keep) c = '_';
  }
  if (name.size() > 63) name.resize(63);
  return name;
}

void check_step_floor(const WriterContext& context, const Topology& topology);

WriterContext make_context(const Schedule& schedule, const MscclWriteOptions& options, const Topology& topology) {
  WriterContext context;
  context.schedule = &schedule;
  context.coll = schedule.collective();
  context.in_place = options.in_place;
  context.ranks = static_cast<int>(schedule.members().size());
  context.per_rank = static_cast<int>(schedule.chunks_per_member());
  context.fifo_calls = static_cast<int>(msccl_fifo_calls(options.protocol));
  if (context.ranks < 2) throw InputError("", "MSCCL XML", "an MSCCL algorithm needs at least 2 ranks");
  if (context.ranks > kMaxChildren) {
    throw InputError("", "MSCCL XML",
                     std::to_string(context.ranks) +
                         " ranks: the runtime's reader keeps at most 1024 <gpu> elements "
                         "(MAX_SUBS children of <algo>); use fewer NPUs (--members)");
  }
  const double chunks = static_cast<double>(context.ranks) * context.per_rank;
  if (chunks > kMaxOffset) {
    throw InputError("", "MSCCL XML",
                     "nchunksperloop would be " + std::to_string(static_cast<long long>(chunks)) +
                         " but the runtime stores chunk offsets in 16 bits (at most 32767): use at most " +
                         std::to_string(kMaxOffset / context.ranks) + " chunks per NPU (--chunks-per-npu)");
  }
  context.chunks = static_cast<int>(chunks);
  NodeId largest = 0;
  for (NodeId member : schedule.members()) largest = std::max(largest, member);
  for (const Transfer& transfer : schedule.transfers()) largest = std::max({largest, transfer.src, transfer.dst});
  context.rank_of.assign(static_cast<std::size_t>(largest) + 1, -1);
  for (std::size_t r = 0; r < schedule.members().size(); ++r)
    context.rank_of[schedule.members()[r]] = static_cast<int>(r);
  for (std::size_t t = 0; t < schedule.size(); ++t) {
    const Transfer& transfer = schedule.transfer(static_cast<TransferId>(t));
    for (NodeId npu : {transfer.src, transfer.dst}) {
      if (context.rank_of[npu] < 0) {
        throw InputError("", "MSCCL XML",
                         "transfer " + std::to_string(t) + " passes through NPU " +
                             std::to_string(topology.original_npu_id(npu)) +
                             ", which is not a member: MSCCL moves data only between the communicator's ranks; "
                             "choose members that are connected among themselves, or run on all NPUs");
      }
    }
  }
  check_step_floor(context, topology);
  return context;
}

/// Each rank's peers: how many it sends to ([0]) and receives from ([1]). `rank_of` gives each
/// end of a transfer its rank. Peers as a set of (rank, peer) would be ranks^2 bits; a sorted list
/// of each transfer's two sides is the transfers' size, which the schedule already is.
template <typename RankOf>
std::vector<std::array<std::uint64_t, 2>> count_peers(const Schedule& schedule, std::size_t ranks,
                                                      const RankOf& rank_of) {
  std::vector<std::uint64_t> sides;  // (rank * ranks + peer) * 2 + receiving
  sides.reserve(2 * schedule.size());
  const auto count = static_cast<std::uint64_t>(ranks);
  for (const Transfer& transfer : schedule.transfers()) {
    const auto src = static_cast<std::uint64_t>(rank_of(transfer.src));
    const auto dst = static_cast<std::uint64_t>(rank_of(transfer.dst));
    sides.push_back((src * count + dst) * 2);
    sides.push_back((dst * count + src) * 2 + 1);
  }
  std::sort(sides.begin(), sides.end());
  sides.erase(std::unique(sides.begin(), sides.end()), sides.end());
  std::vector<std::array<std::uint64_t, 2>> peers(ranks, {0, 0});
  for (const std::uint64_t side : sides) ++peers[side / 2 / count][side % 2];
  return peers;
}

/// Every transfer is at least one step on its sender or receiver (a fused step serves one of each),
/// so a rank with more receives or sends than the node limit allows cannot fit whatever the
/// layout: refused before the layout allocates its per-chunk tables.
void check_step_floor(const WriterContext& context, const Topology& topology) {
  const Schedule& schedule = *context.schedule;
  std::vector<std::uint64_t> receives(static_cast<std::size_t>(context.ranks), 0);
  std::vector<std::uint64_t> sends(static_cast<std::size_t>(context.ranks), 0);
  for (const Transfer& transfer : schedule.transfers()) {
    ++sends[static_cast<std::size_t>(context.rank_of[transfer.src])];
    ++receives[static_cast<std::size_t>(context.rank_of[transfer.dst])];
  }
  const std::uint64_t room = static_cast<std::uint64_t>(kMaxNodes - 1 - context.ranks);
  for (int rank = 0; rank < context.ranks; ++rank) {
    const std::uint64_t floor =
        std::max(receives[static_cast<std::size_t>(rank)], sends[static_cast<std::size_t>(rank)]);
    if (floor < room) continue;
    const double excess = static_cast<double>(floor) / static_cast<double>(std::max<std::uint64_t>(room, 1));
    const int chunks = static_cast<int>(std::floor(context.per_rank / excess * 0.9));
    std::string message = "rank " + std::to_string(rank) + " (NPU " +
                          std::to_string(topology.original_npu_id(schedule.members()[static_cast<std::size_t>(rank)])) +
                          ") receives " + std::to_string(receives[static_cast<std::size_t>(rank)]) +
                          " transfers and sends " + std::to_string(sends[static_cast<std::size_t>(rank)]) +
                          ", at least one step each, but the runtime's reader loads at most 4095 XML nodes per rank (" +
                          std::to_string(room) + " steps with " + std::to_string(context.ranks) + " gpus): ";
    message +=
        chunks >= 1
            ? "use fewer chunks per NPU (about " + std::to_string(chunks) + ", --chunks-per-npu " +
                  std::to_string(chunks) + ")"
            : std::string(
                  "even 1 chunk per NPU does not fit one MSCCL file on this many ranks; use fewer NPUs (--members)");
    throw InputError("", "MSCCL XML", message);
  }
  // A threadblock has one send peer and one receive peer: a rank with more peers of a direction
  // than the runtime's threadblocks fails every layout (each costing seconds to find out).
  const std::vector<std::array<std::uint64_t, 2>> peers =
      count_peers(schedule, static_cast<std::size_t>(context.ranks), [&](NodeId npu) { return context.rank_of[npu]; });
  for (int rank = 0; rank < context.ranks; ++rank) {
    const std::array<std::uint64_t, 2> count = peers[static_cast<std::size_t>(rank)];
    const bool receiving = count[1] > count[0];
    if (count[receiving ? 1 : 0] <= static_cast<std::uint64_t>(kMaxThreadblocks)) continue;
    throw InputError(
        "", "MSCCL XML",
        "rank " + std::to_string(rank) + " (NPU " +
            std::to_string(topology.original_npu_id(schedule.members()[static_cast<std::size_t>(rank)])) + ") " +
            (receiving ? "receives from " : "sends to ") + std::to_string(count[receiving ? 1 : 0]) +
            " peers, each in a threadblock of its own (a threadblock has one " + (receiving ? "receive" : "send") +
            " peer), but the runtime allows 216 threadblocks per rank: no MSCCL file holds this schedule; "
            "use an algorithm with fewer peers per rank, or fewer NPUs (--members)");
  }
}

}  // namespace

std::uint64_t msccl_step_room(std::size_t ranks) {
  const std::uint64_t used = 1 + 3 * static_cast<std::uint64_t>(ranks);
  return used < static_cast<std::uint64_t>(msccl_detail::kMaxNodes) ? msccl_detail::kMaxNodes - used : 0;
}

namespace {

/// Each rank's peers, or nothing where a transfer has an end that is not a member.
std::optional<std::vector<std::array<std::uint64_t, 2>>> member_peers(const Schedule& schedule,
                                                                      std::vector<std::uint64_t>* steps = nullptr) {
  const std::vector<NodeId>& members = schedule.members();
  const NodeId largest = members.empty() ? 0 : *std::max_element(members.begin(), members.end());
  std::vector<std::int64_t> rank_of(static_cast<std::size_t>(largest) + 1, -1);
  for (std::size_t rank = 0; rank < members.size(); ++rank) rank_of[members[rank]] = static_cast<std::int64_t>(rank);
  if (steps) steps->assign(members.size(), 0);
  for (const Transfer& transfer : schedule.transfers()) {
    const std::int64_t src = transfer.src <= largest ? rank_of[transfer.src] : -1;
    const std::int64_t dst = transfer.dst <= largest ? rank_of[transfer.dst] : -1;
    if (src < 0 || dst < 0) return std::nullopt;  // through a non-member: no file at all
    if (!steps) continue;
    ++(*steps)[static_cast<std::size_t>(src)];
    ++(*steps)[static_cast<std::size_t>(dst)];
  }
  return count_peers(schedule, members.size(), [&](NodeId npu) { return rank_of[npu]; });
}

}  // namespace

bool msccl_steps_fit(const Schedule& schedule) {
  std::vector<std::uint64_t> steps;
  const auto peers = member_peers(schedule, &steps);
  if (!peers) return false;
  const std::size_t ranks = peers->size();
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    const auto [sending, receiving] = (*peers)[rank];
    // A threadblock has one send peer and one receive peer at most: fewer than the most peers of
    // one direction cannot hold a rank's transfers, however they pair.
    if (std::max(sending, receiving) > static_cast<std::uint64_t>(msccl_detail::kMaxThreadblocks)) return false;
    const std::uint64_t nodes = 1 + ranks + sending + receiving + steps[rank] / msccl_detail::kMaxSteps + steps[rank];
    if (nodes > static_cast<std::uint64_t>(msccl_detail::kMaxNodes)) return false;
  }
  return true;
}

bool msccl_threadblocks_surely_fit(const Schedule& schedule) {
  const auto peers = member_peers(schedule);
  if (!peers) return false;
  return std::all_of(peers->begin(), peers->end(), [](const std::array<std::uint64_t, 2>& count) {
    return count[0] + count[1] <= static_cast<std::uint64_t>(msccl_detail::kMaxDependencyTb + 1);
  });
}

namespace {

/// One attempt: a plan within the limits, or false with the limit it exceeds.
bool plan_for(const WriterContext& context, const LayoutChoices& choices, Plan& plan, LimitProblem& problem) {
  return lay_out(context, choices, plan, problem) && add_dependencies(context, plan, problem);
}

std::string suggestion(const WriterContext& context, const LayoutChoices& choices, const LimitProblem& problem) {
  const auto fits = [&](std::uint32_t channels) {
    LayoutChoices other = choices;
    other.channels = channels;
    Plan plan;
    LimitProblem ignored;
    return plan_for(context, other, plan, ignored);
  };
  if (problem.channels_help) {
    for (std::uint32_t channels = choices.channels + 1; channels <= static_cast<std::uint32_t>(kMaxChannels);
         ++channels) {
      if (fits(channels)) {
        return "spread each connection over " + std::to_string(channels) + " channels (--channels " +
               std::to_string(channels) + ") or use fewer chunks per NPU";
      }
    }
  }
  if (problem.fewer_channels_help) {
    for (std::uint32_t channels = choices.channels - 1; channels >= 1; --channels) {
      if (fits(channels)) return "use fewer channels (--channels " + std::to_string(channels) + ")";
    }
  }
  if (context.per_rank > 1 && problem.excess > 1.0) {
    // Steps grow about linearly with chunks per NPU; aim 10% under to leave room for nops, and
    // spread the threadblocks that would still be too long over more channels.
    const int chunks = std::max(1, static_cast<int>(std::floor(context.per_rank / problem.excess * 0.9)));
    const double tb_steps = problem.tb_steps * static_cast<double>(chunks) / context.per_rank * 1.1;
    const auto channels = static_cast<std::uint32_t>(std::ceil(choices.channels * tb_steps / kMaxSteps));
    std::string text =
        "use fewer chunks per NPU (about " + std::to_string(chunks) + ", --chunks-per-npu " + std::to_string(chunks);
    if (channels > choices.channels) text += " with --channels " + std::to_string(channels);
    return text + ")";
  }
  if (context.per_rank > 1)
    return "even 1 chunk per NPU does not fit one MSCCL file on this many ranks; use fewer NPUs (--members)";
  return "use an algorithm whose ranks have fewer transfers and peers (tenet compare -o writes the fastest one "
         "that fits), or fewer NPUs (--members)";
}

const char* coll_name(CollectiveKind coll) {
  switch (coll) {
    case CollectiveKind::kAllGather: return "allgather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllReduce: return "allreduce";
  }
  return "allreduce";
}

/// One comment line; appended in pieces (GCC 12 warns falsely on "literal" + temporary string).
void print_comment(std::string& out, const std::string& text) {
  out += "<!-- ";
  out += comment_safe(text);
  out += " -->\n";
}

void print_provenance(std::string& out, const WriterContext& context, const Schedule& schedule,
                      const Topology& topology, const MscclWriteOptions& options) {
  std::string line = "tenet " TENET_VERSION ": ";
  line += schedule.algorithm();
  line += ' ';
  line += collective_name(schedule.collective());
  line += " on topology ";
  line += topology.name;
  line += ", " + std::to_string(context.ranks) + " ranks, " + std::to_string(context.per_rank) +
          " chunk(s) per NPU, made for ";
  line += format_size(schedule.size_bytes());
  line += " (" + std::to_string(schedule.size_bytes()) + " bytes)";
  if (options.seed) line += ", seed " + std::to_string(*options.seed);
  print_comment(out, line);
  std::string use = "protocol ";
  use += msccl_protocol_name(options.protocol);
  use += options.in_place ? ", in-place" : ", out-of-place";
  use += ": the runtime uses it for ";
  use += options.in_place ? "in-place " : "out-of-place ";
  use += coll_name(context.coll);
  use += " calls on " + std::to_string(context.ranks) + " ranks whose element count";
  if (context.coll != CollectiveKind::kAllReduce) use += " times " + std::to_string(context.ranks);
  use += " is a multiple of " + std::to_string(context.chunks) + ", of 0 <= bytes < " +
         std::to_string(max_bytes(schedule));
  if (max_bytes(schedule) == kDefaultMaxBytes) use += " (the default: no minBytes/maxBytes given)";
  print_comment(out, use);
  std::string mapping = "rank_to_npu:";
  for (NodeId member : schedule.members()) {
    mapping += ' ';
    mapping += std::to_string(topology.original_npu_id(member));
  }
  print_comment(out, mapping);
}

/// What every layout's file has in common: the comments before <algo> and the algo's own fields
/// (plan_program adds the channels and the ranks).
struct FileHead {
  std::string preamble;
  MscclProgram header;
};

FileHead file_head(const WriterContext& context, const Schedule& schedule, const Topology& topology,
                   const MscclWriteOptions& options, const std::string& name) {
  FileHead head;
  if (options.provenance) {
    print_provenance(head.preamble, context, schedule, topology, options);
    // What the parser reads back from those comments.
    for (NodeId member : schedule.members()) head.header.rank_to_npu.push_back(topology.original_npu_id(member));
    head.header.size_bytes = schedule.size_bytes();
  }
  MscclProgram& header = head.header;
  header.name = name;
  header.coll = coll_name(context.coll);
  header.protocol = options.protocol;
  header.ngpus = context.ranks;
  header.nchunksperloop = context.chunks;
  header.in_place = options.in_place;
  if (max_bytes(schedule) != kDefaultMaxBytes) {
    header.min_bytes = 0;
    header.max_bytes = static_cast<std::int64_t>(max_bytes(schedule));
  }
  header.line = static_cast<int>(std::count(head.preamble.begin(), head.preamble.end(), '\n')) + 1;
  return head;
}

std::string checked_name(const MscclWriteOptions& options, const Schedule& schedule, const Topology& topology) {
  if (options.name.empty()) return default_name(schedule, topology);
  const bool plain = std::all_of(options.name.begin(), options.name.end(), [](char c) {
    return c > ' ' && c <= '~' && c != '"' && c != '<' && c != '>' && c != '&';
  });
  if (!plain || options.name.size() > 63) {
    throw InputError("", "MSCCL XML",
                     "algorithm name '" + options.name +
                         "': at most 63 printable characters without spaces, quotes, '<', '>' or '&'");
  }
  return options.name;
}

/// The file's time as the runtime would run it (msccl_to_schedule's model) on `topology`; its ranks
/// are the schedule's members in order, as its rank_to_npu comment says when it has one.
double runtime_time_us(const MscclProgram& program, const Schedule& schedule, const Topology& topology) {
  return remembered_runtime_time_us(program, schedule.size_bytes(), schedule.members(), topology, [&] {
    return simulate(topology,
                    msccl_to_schedule(program, topology, schedule.size_bytes(), "MSCCL XML", schedule.members()))
        .time_us;
  });
}

/// Channel counts `--channels auto` tries, fewest first: more channels let transfers of one
/// connection overtake each other when the plan's timing slips, at the cost of threadblocks.
constexpr std::uint32_t kAutoChannels[] = {1, 2, 4};

/// Lanes per pair the runtime can hold: channels (32, shared by peer groups of 32) and threadblocks
/// (216 per rank, one per peer, lane and direction).
int lane_budget(const WriterContext& context) {
  const Schedule& schedule = *context.schedule;
  std::vector<std::vector<int>> send_peers(static_cast<std::size_t>(context.ranks));
  std::vector<std::vector<int>> recv_peers(static_cast<std::size_t>(context.ranks));
  for (std::size_t t = 0; t < schedule.size(); ++t) {
    const int from = context.rank_of[schedule.src(static_cast<TransferId>(t))];
    const int to = context.rank_of[schedule.dst(static_cast<TransferId>(t))];
    send_peers[static_cast<std::size_t>(from)].push_back(to);
    recv_peers[static_cast<std::size_t>(to)].push_back(from);
  }
  std::size_t most_peers = 1;
  std::size_t most_directions = 1;
  for (int rank = 0; rank < context.ranks; ++rank) {
    for (auto* peers : {&send_peers[static_cast<std::size_t>(rank)], &recv_peers[static_cast<std::size_t>(rank)]}) {
      std::sort(peers->begin(), peers->end());
      peers->erase(std::unique(peers->begin(), peers->end()), peers->end());
      most_peers = std::max(most_peers, peers->size());
    }
    most_directions = std::max(most_directions, send_peers[static_cast<std::size_t>(rank)].size() +
                                                    recv_peers[static_cast<std::size_t>(rank)].size());
  }
  const std::size_t groups = (most_peers + kMaxPeersPerChannel - 1) / kMaxPeersPerChannel;
  const std::size_t by_channels = static_cast<std::size_t>(kMaxChannels) / groups;
  const std::size_t by_threadblocks = static_cast<std::size_t>(kMaxThreadblocks) / most_directions;
  return static_cast<int>(std::max<std::size_t>(1, std::min(by_channels, by_threadblocks)));
}

/// Whether at least a quarter of the transfers wait for a transfer between the same pair of
/// ranks: chains of pieces, as trees' pipelines send them. Only a transfer's first few
/// dependencies are looked at (a direct all-reduce's sends each wait on p - 1 reductions).
bool mostly_chained(const Schedule& schedule) {
  constexpr std::size_t kLookedAt = 32;
  std::size_t chained = 0;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer& transfer = schedule.transfer(id);
    const std::span<const TransferId> deps = schedule.deps_of(id);
    for (std::size_t i = 0; i < std::min(deps.size(), kLookedAt); ++i) {
      const Transfer& before = schedule.transfer(deps[i]);
      if (before.src == transfer.src && before.dst == transfer.dst) {
        ++chained;
        break;
      }
    }
  }
  return 4 * chained >= schedule.size() && chained > 0;
}

/// Whether some transfer's data is sent on by two or more transfers of its receiver (a tree's
/// fan-out, a direct all-reduce's last reduction): where fusing the receive into one of those
/// sends holds up the others (LayoutChoices::fuse_shared).
bool sends_on_shared(const Schedule& schedule) {
  std::vector<std::uint8_t> senders_on(schedule.size(), 0);
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const NodeId sender = schedule.transfer(id).src;
    for (const TransferId before : schedule.deps_of(id)) {
      if (schedule.transfer(before).dst != sender) continue;
      if (++senders_on[before] == 2) return true;
    }
  }
  return false;
}

/// The fastest verified layout of `schedule` (see the top of the file). `in_order_only`: only
/// layouts that keep the schedule's order (where its order dependencies are what make it run as
/// planned, as calls_side_by_side's do).
MscclWritten write_layouts(const Schedule& schedule, const Topology& topology, const MscclWriteOptions& options,
                           const std::string& name, bool in_order_only) {
  WriterContext context = make_context(schedule, options, topology);
  context.places = place_chunks(context);
  const int fifo = context.fifo_calls;
  const bool automatic = options.channels == 0;
  std::vector<std::uint32_t> channel_counts;
  if (automatic)
    channel_counts.assign(std::begin(kAutoChannels), std::end(kAutoChannels));
  else
    channel_counts.push_back(options.channels);

  // Every layout within the limits is timed as the runtime runs it; then the fastest whose file
  // the interpreter runs to the right result at every call split is written (ties: the one made
  // first, i.e. fewer channels, fused forwards). Verifying is the costly part, so it goes in order
  // of time and stops at the first file that passes.
  const FileHead head = file_head(context, schedule, topology, options, name);
  /// A layout's program, timed; printed only when its turn to be verified comes.
  struct Timed {
    MscclProgram program;
    MscclWritten written;  ///< all but the text
    LayoutChoices choices;
  };
  std::vector<Timed> timed;
  std::string first_failure;
  std::string first_limit;
  std::exception_ptr too_many_slices;
  /// One layout: timed, or why not.
  struct Attempt {
    std::optional<Timed> layout;
    std::optional<LimitProblem> limit;  ///< past a limit (the change that fits is found only for the first)
    std::string failure;
    /// Past what tenet times at this size (msccl_to_schedule's slices and calls): not a fault of
    /// the layout, and the reason given when no layout could be timed.
    std::exception_ptr too_many_slices;
  };
  const auto attempt = [&](const LayoutChoices& choices) {
    Attempt result;
    Plan plan;
    LimitProblem problem;
    if (!plan_for(context, choices, plan, problem)) {
      result.limit = std::move(problem);
      return result;
    }
    MscclProgram program = plan_program(context, plan, head.header);
    try {
      const double time_us = runtime_time_us(program, schedule, topology);
      result.layout = Timed{
          std::move(program),
          {"", time_us, static_cast<std::uint32_t>(plan.nchannels), choices.pair, choices.cap, choices.schedule_order},
          choices};
      result.layout->written.peer_threadblocks = choices.pair_peers;
      for (const MscclGpu& gpu : result.layout->program.gpus)
        result.layout->written.scratch_chunks =
            std::max(result.layout->written.scratch_chunks, static_cast<std::uint32_t>(gpu.s_chunks));
      result.layout->written.loop_chunks = static_cast<std::uint32_t>(result.layout->program.nchunksperloop);
    } catch (const InputError& error) {
      if (!error.problems().empty() && error.problems().front().where == "--size")
        result.too_many_slices = std::current_exception();
      else
        result.failure = error.what();  // deadlocks at this size: the interpreter says why below
    }
    return result;
  };
  // The layouts of one round at once (each is laid out, run and simulated on its own), kept in
  // the order they are listed, so the file and the reasons given do not depend on the threads.
  const auto consider = [&](const std::vector<LayoutChoices>& round) {
    std::vector<Attempt> attempts(round.size());
    parallel_for(std::size_t{0}, round.size(), [&](std::size_t i) { attempts[i] = attempt(round[i]); });
    for (std::size_t i = 0; i < round.size(); ++i) {
      Attempt& tried = attempts[i];
      if (first_limit.empty() && tried.limit)
        first_limit = tried.limit->message + ": " + suggestion(context, round[i], *tried.limit);
      if (first_failure.empty()) first_failure = std::move(tried.failure);
      if (!too_many_slices) too_many_slices = tried.too_many_slices;
      if (tried.layout) timed.push_back(std::move(*tried.layout));
    }
  };
  const auto fastest = [&]() -> double {
    double best = 0.0;
    for (const Timed& layout : timed)
      best = best == 0.0 ? layout.written.time_us : std::min(best, layout.written.time_us);
    return best;
  };
  // The text itself is checked, as a user's file would be. Races are excluded by construction
  // (deps.cpp); deadlocks and the result are checked.
  const auto verified = [&](Timed& layout) -> std::optional<MscclWritten> {
    std::string text = print_program(layout.program, head.preamble);
    const MscclVerifyResult check = verify_msccl_xml(text, nullptr, false);
    if (!check.ok) {
      if (first_failure.empty()) first_failure = check.error;
      return std::nullopt;
    }
    layout.written.text = std::move(text);
    return std::move(layout.written);
  };
  // In order of time. The fastest staged layout that fails is laid out again with more room
  // (LayoutChoices::staging_room), once; where that verifies, the layouts no faster than it are
  // not checked (a failing check runs the whole file to its deadlock: seconds on 130 ranks).
  const auto verified_fastest = [&]() -> std::optional<MscclWritten> {
    std::vector<std::size_t> order(timed.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return timed[a].written.time_us < timed[b].written.time_us; });
    std::optional<MscclWritten> roomy;
    bool roomy_tried = false;
    std::optional<MscclWritten> found;
    for (std::size_t i : order) {
      if (roomy && roomy->time_us <= timed[i].written.time_us) break;
      found = verified(timed[i]);
      if (found) break;
      if (roomy_tried || !timed[i].choices.stage || timed[i].choices.staging_room >= kRoomyStaging) continue;
      roomy_tried = true;
      LayoutChoices roomier = timed[i].choices;
      roomier.staging_room = kRoomyStaging;
      Attempt tried = attempt(roomier);
      if (tried.layout) roomy = verified(*tried.layout);
    }
    timed.clear();
    if (roomy && (!found || roomy->time_us < found->time_us)) return roomy;
    return found;
  };
  // The schedule's port order matters only where transfers through switches were planned on
  // routes (switch-native plans make the order dependencies).
  const bool has_order = schedule.route_count() > 0;
  // Transfers of chunks that lie apart: each also as one step through scratch (layout.cpp). Both
  // are tried: staged alone, some baselines' files ran slower (mi250-2x16-ib all-gather of 64 MiB,
  // the ring's 595 us as steps, 1084 staged) and so did some synthesized ones.
  bool apart = false;
  for (TransferId id = 0; id < schedule.size() && !apart; ++id)
    apart = consecutive_runs(schedule.chunks_of(schedule.transfer(id))) > 1;
  // Pieces that follow one another between a pair (a tree edge's pipeline) are also laid out
  // with each such chain kept to one lane (LayoutChoices::chain_lanes): that wins where late pieces
  // would hold up other chains' (hypercube3d-4x4x4 all-reduce of 16 MiB on 32 trees: 242.0 ->
  // 227.7 us) and loses a little elsewhere (a100-2x8-ib all-reduce of 64 MiB: 398.1 -> 399.9).
  const bool chains = mostly_chained(schedule);
  bool shared = false;  // sends_on_shared, asked only where threadblocks go per peer
  const auto consider_all = [&](std::uint32_t channels, bool pair_peers = false) {
    std::vector<LayoutChoices> round;
    for (bool stage : {false, true}) {
      if (stage && !apart) continue;
      for (bool pair : {true, false}) {
        if (in_order_only) {
          round.push_back({pair, kMaxCount, channels, true, stage, false});
          continue;
        }
        for (bool chain_lanes : {false, true}) {
          if (chain_lanes && !chains) continue;
          round.push_back({pair, kMaxCount, channels, false, stage, chain_lanes});
          if (has_order) round.push_back({pair, kMaxCount, channels, true, stage, chain_lanes});
        }
      }
    }
    for (LayoutChoices& choices : round) choices.pair_peers = pair_peers;
    // Fused forwards of shared data can win or lose: with a threadblock per peer (where every
    // threadblock can fuse) both are timed. Elsewhere the layouts without pairing fuse nothing;
    // also timing both there gained 0.3% in 2 of 90 files (dgx1-8 and ring-fc-switch-2x4x8
    // all-gathers of 64 MiB) for up to 1.8x the writer's time.
    for (std::size_t i = 0, made = round.size(); shared && pair_peers && i < made; ++i) {
      if (!round[i].pair) continue;
      round.push_back(round[i]);
      round.back().fuse_shared = false;
    }
    consider(round);
  };
  const auto search_channels = [&](bool pair_peers) {
    double previous_best = 0.0;
    for (std::uint32_t channels : channel_counts) {
      consider_all(channels, pair_peers);
      // More channels only while they pay: stop at the first count that gains under 1%.
      const double best = fastest();
      if (automatic && best > 0.0 && previous_best > 0.0 && best > previous_best * 0.99) break;
      if (best > 0.0) previous_best = best;
    }
    // Threadblocks too long for the runtime: automatic channels go on doubling.
    for (std::uint32_t channels = 2 * channel_counts.back();
         automatic && timed.empty() && channels <= static_cast<std::uint32_t>(kMaxChannels); channels *= 2) {
      consider_all(channels, pair_peers);
    }
  };
  search_channels(false);
  // Past the runtime's 128 threadblocks that others can wait for (an all-to-all on a 72-GPU
  // switch: a send and a receive threadblock per peer, 141 awaited): each peer's sides share one.
  // Where that fails too, its limit is the one to report: it needs the fewest threadblocks.
  if (timed.empty()) {
    first_limit.clear();
    shared = sends_on_shared(schedule);
    search_channels(true);
  }
  if (!options.verify && !timed.empty()) {
    const auto first_fastest = std::min_element(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) {
      return a.written.time_us < b.written.time_us;
    });
    return std::move(first_fastest->written);
  }
  std::optional<MscclWritten> best = verified_fastest();
  // Safer layouts: steps no longer than a FIFO holds, then single chunks.
  for (int cap : {fifo, 1}) {
    if (best) break;
    consider({{false, cap, channel_counts.front(), false}});
    best = verified_fastest();
  }
  if (best) return std::move(*best);
  // Too large a size to time the file (1 TiB over two NPUs: 262,144 slices a chunk): that is the
  // input's limit, not a writer's fault.
  if (too_many_slices && first_failure.empty()) std::rethrow_exception(too_many_slices);
  if (!first_limit.empty() && first_failure.empty()) throw InputError("", "MSCCL XML", first_limit);
  if (!first_limit.empty()) {
    throw InputError("", "MSCCL XML",
                     "the layouts within the runtime's limits fail (" + first_failure +
                         "), and the others exceed them: " + first_limit);
  }
  throw std::logic_error("the MSCCL writer produced no layout that passes its own verification: " + first_failure);
}

}  // namespace

namespace {

/// write_msccl_xml with the schedule's chunks as they are, on the runtime's routes (layouts as
/// write_layouts's `in_order_only` says).
MscclWritten write_on_routes(const Schedule& schedule, const Topology& topology, const MscclWriteOptions& options,
                             bool in_order_only = false) {
  const std::string name = checked_name(options, schedule, topology);
  // More transfers in flight between a pair of ranks than the runtime's channels and threadblocks
  // hold: run them on fewer lanes (timed, so the cost shows), halving while a limit is still hit.
  const EffectiveTimes times = effective_times(schedule);
  const int needed = lanes_needed(schedule, times);
  const int budget = lane_budget(make_context(schedule, options, topology));
  const auto on_fewer_lanes = [&](const MscclWriteOptions& choice) {
    int lanes = needed > budget ? budget : 0;
    while (true) {
      try {
        if (lanes == 0) return write_layouts(schedule, topology, choice, name, in_order_only);
        const Schedule serialized = serialized_pairs(schedule, times, topology, lanes);
        MscclWritten written = write_layouts(serialized, topology, choice, name, in_order_only);
        written.serialized_lanes = lanes;
        written.serialized_schedule_us = serialized.planned_time_us();
        return written;
      } catch (const InputError&) {
        if (lanes == 1 || needed == 1) throw;
        lanes = lanes == 0 ? std::min(budget, needed - 1) : lanes / 2;
      }
    }
  };
  // Serialized with automatic channels: the first lane count at which some channel count fits
  // took the fewest channels; more channels fit fewer lanes per pair but run a connection's steps
  // side by side, and can be faster (h100-4x8-rail spanning-tree all-reduce of 1 GiB at 32 chunks
  // per NPU: 4857.0 us on 7 lanes of one channel, 4220.3 on 1 lane of 4 channels). So each channel
  // count finds its own lanes too, and the fastest file is kept (ties: the automatic one, then
  // fewer channels).
  const bool search = options.channels == 0 && options.search_channels_when_serialized;
  if (!search) return on_fewer_lanes(options);
  std::vector<MscclWriteOptions> choices(1, options);
  for (std::uint32_t channels : kAutoChannels) {
    choices.push_back(options);
    choices.back().channels = channels;
  }
  // Where the lanes surely run out, every channel count's file at once (a100-4x8-ib all-reduce of
  // 64 MiB: synth -o x.xml 15.2 -> 11.9 s on two cores); else the others only where the automatic
  // file serialized.
  std::vector<std::optional<MscclWritten>> files(choices.size());
  const auto write_choice = [&](std::size_t i) {
    try {
      files[i] = on_fewer_lanes(choices[i]);
    } catch (const InputError&) {
      // Not within the runtime's limits on this many channels at any lane count; the automatic
      // choice's reason is the one reported.
      if (i == 0) throw;
    }
  };
  if (needed > budget) {
    std::exception_ptr automatic_failure;
    parallel_for(std::size_t{0}, choices.size(), [&](std::size_t i) {
      try {
        write_choice(i);
      } catch (const InputError&) {
        automatic_failure = std::current_exception();  // only i == 0 rethrows
      }
    });
    if (automatic_failure) std::rethrow_exception(automatic_failure);
  } else {
    write_choice(0);
    if (files[0]->serialized_lanes == 0) return std::move(*files[0]);
    for (std::size_t i = 1; i < choices.size(); ++i) {
      if (choices[i].channels != files[0]->channels) write_choice(i);
    }
  }
  MscclWritten written = std::move(*files[0]);
  const std::uint32_t automatic_channels = written.channels;
  for (std::size_t i = 1; i < choices.size(); ++i) {
    if (choices[i].channels == automatic_channels || !files[i]) continue;
    if (files[i]->time_us < written.time_us) written = std::move(*files[i]);
  }
  return written;
}

/// write_on_routes, and where that file runs slower than the schedule and the schedule has
/// aggregated transfers, also the equivalent schedules below, keeping the fastest file.
/// Aggregated transfers cost more in a file than in the schedule in two ways: chunks that lie
/// apart cost a step or a staging copy per run (each member's chunks renumbered to lie side by
/// side, chunk_order.cpp), and a step of more chunks than one primitive call moves pays an alpha
/// per call (cut into transfers side by side, serialize.cpp). torus-8x8 reduce-scatter of 64 MiB,
/// 16 chunks per NPU: 338.4 us as scheduled, 337.1 renumbered, 335.6 renumbered and cut (the
/// schedule's time). The schedule as it is goes first: its file can run far faster than the
/// schedule (mi250-2x16-ib rhd all-gather of 64 MiB: 595 us, its schedule 1063 on the switches),
/// where the equivalents' stop at the schedule's time. Renumbered chunks are kept on ties too: the
/// staging copies they spare cost no time in the runtime's model, but do on a GPU.
MscclWritten write_equivalents(const Schedule& schedule, const Topology& topology, const MscclWriteOptions& options) {
  MscclWritten written = write_on_routes(schedule, topology, options);
  const auto slower_than_planned = [&] { return written.time_us > schedule.planned_time_us() * (1.0 + 1e-9); };
  const std::uint64_t all_chunks = std::uint64_t{schedule.chunks_per_member()} * schedule.members().size();
  if (!slower_than_planned() || schedule.at_most_one_chunk_each() ||
      all_chunks > static_cast<std::uint64_t>(kMaxOffset))
    return written;
  const auto keep_if_faster = [&](const Schedule& equivalent, bool renumbered, bool cut) {
    try {
      MscclWritten file = write_on_routes(equivalent, topology, options, cut);
      if (!(file.time_us < written.time_us) && !(renumbered && !cut && file.time_us == written.time_us)) return;
      written = std::move(file);
      written.chunks_renumbered = renumbered;
      written.calls_side_by_side = cut;
    } catch (const InputError&) {
      // Past a runtime limit where the schedule as it is fits: keep that file.
    }
  };
  const std::optional<Schedule> renumbered = chunks_side_by_side(schedule);
  const int per_call =
      msccl_runtime_model(options.protocol, static_cast<int>(all_chunks), schedule.size_bytes()).max_allowed_count;
  // Transfers side by side take channels of their own, beside those a user's --channels gives.
  const std::optional<Schedule> cut =
      options.channels == 0 ? calls_side_by_side(renumbered ? *renumbered : schedule, per_call) : std::nullopt;
  if (cut) keep_if_faster(*cut, renumbered.has_value(), true);
  if (renumbered && slower_than_planned()) keep_if_faster(*renumbered, true, false);
  return written;
}

/// The fewest pieces of a chunk the writer tries (write_msccl_xml).
constexpr std::uint32_t kFirstSplit = 2;

}  // namespace

MscclWritten write_msccl_xml(const Schedule& schedule, const Topology& topology, const MscclWriteOptions& options) {
  if (options.channels > static_cast<std::uint32_t>(kMaxChannels)) {
    throw InputError("", "--channels", "must be auto or 1..32 (the runtime's channels)");
  }
  if (const std::size_t off_route = transfers_off_runtime_routes(schedule, topology); off_route > 0) {
    // The file names no routes, so it runs on the runtime's. Laid out from that replay's order
    // or from the plan's, whichever file runs faster there (mi250-2x16-ib spanning-tree
    // reduce-scatter of 64 MiB: 274.3 us from the plan's order, slower from the replay's).
    const Schedule rerouted = on_runtime_routes(schedule, topology);
    MscclWritten written = write_msccl_xml(rerouted, topology, options);
    try {
      Schedule planned = schedule;
      planned.forget_links();
      MscclWritten from_plan = write_msccl_xml(planned, topology, options);
      if (from_plan.time_us < written.time_us) written = std::move(from_plan);
    } catch (const InputError&) {
      // The plan's order does not fit the runtime's limits; the replay's did.
    }
    written.off_route_transfers = off_route;
    written.runtime_routes_us = rerouted.planned_time_us();
    return written;
  }
  MscclWritten written = write_equivalents(schedule, topology, options);
  // Chunks larger than a slice run as that many passes of the whole program (SPEC 6.2), each
  // paying every step's alphas again: the synthesized reduce-scatter of 1 GiB on fat-tree-8x4, one
  // chunk per NPU, ran 31 steps x 16 slices of 1 us alphas behind its schedule (21.36 ms as a file,
  // 20.84 as a schedule). Cut into k pieces, the pieces of a transfer overlap, so each takes a lane
  // and channels of its own (layout.cpp): k copies of the program run side by side on the same
  // links, each with k times fewer slices, and the alphas behind the schedule shrink k-fold (at 16
  // pieces that file runs 20.84 ms; ring's file 21.10 -> 20.84). Only with automatic channels (a
  // user's --channels is per lane, and pieces multiply the lanes).
  if (options.channels != 0 || options.max_chunk_split < kFirstSplit || !schedule.at_most_one_chunk_each())
    return written;
  const std::uint64_t chunks = std::uint64_t{schedule.chunks_per_member()} * schedule.members().size();
  if (chunks == 0 || chunks > static_cast<std::uint64_t>(kMaxOffset)) return written;
  const std::uint64_t iterations =
      msccl_runtime_model(options.protocol, static_cast<int>(chunks), schedule.size_bytes()).iterations;
  const std::uint64_t most =
      std::min({std::uint64_t{options.max_chunk_split}, iterations, static_cast<std::uint64_t>(kMaxChannels),
                static_cast<std::uint64_t>(kMaxOffset) / chunks});
  if (most < kFirstSplit) return written;
  // Most pieces first, fewer where that file is slower or past a limit; the first that gains is
  // kept. Each step from 2 pieces to 16 gained on fat-tree-8x4 (21.08, 20.94, 20.87, 20.84 ms), and
  // writing every count costs their sum in layouts (all-reduce of 1 GiB: 2.4 -> 7.1 s of
  // synthesis with -o x.xml; most first, 1.2 -> 1.9 s).
  for (std::uint64_t pieces = std::bit_floor(most); pieces >= kFirstSplit; pieces /= 2) {
    try {
      MscclWritten split =
          write_on_routes(split_chunks(schedule, static_cast<std::uint32_t>(pieces)), topology, options);
      if (!(split.time_us < written.time_us)) continue;
      written = std::move(split);
      written.chunk_split = static_cast<std::uint32_t>(pieces);
      break;
    } catch (const InputError&) {
      // Past a runtime limit (threadblocks, channels, steps): fewer pieces need less.
    }
  }
  return written;
}

double msccl_expected_time_us(const Schedule& schedule, const Topology& topology) {
  if (!msccl_steps_fit(schedule)) return std::numeric_limits<double>::infinity();
  try {
    const int budget = lane_budget(make_context(schedule, {}, topology));
    // The file names no routes: planned on others, the schedule runs on the runtime's.
    std::optional<Schedule> rerouted;
    if (transfers_off_runtime_routes(schedule, topology) > 0) rerouted = on_runtime_routes(schedule, topology);
    const Schedule& routed = rerouted ? *rerouted : schedule;
    const std::optional<Schedule> stepped = one_transfer_per_step(routed, topology);
    const Schedule& timed = stepped ? *stepped : routed;
    const EffectiveTimes times = effective_times(timed);
    if (lanes_needed(timed, times) <= budget) return timed.planned_time_us();
    return serialized_pairs(timed, times, topology, budget).planned_time_us();
  } catch (const InputError&) {
    return std::numeric_limits<double>::infinity();
  }
}

double msccl_pipelined_time_us(const Schedule& schedule, const Topology& topology, MscclProtocol protocol,
                               double whole_us) {
  if (!std::isfinite(whole_us) || !msccl_runtime_slices(schedule, protocol))
    return std::numeric_limits<double>::infinity();
  // Bytes per pair of ranks, then per link of the runtime's route between them.
  std::map<std::pair<NodeId, NodeId>, double> pair_bytes;
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    pair_bytes[{transfer.src, transfer.dst}] += schedule.bytes_of(transfer);
  }
  const Router router(topology);
  std::vector<double> link_bytes(topology.link_count(), 0.0);
  std::optional<RouteTree> tree;
  for (const auto& [pair, bytes] : pair_bytes) {
    if (!tree || tree->source != pair.first) tree = router.tree_from(pair.first);
    for (LinkId link : router.path_in(*tree, pair.second)) link_bytes[link] += bytes;
  }
  double busiest_us = 0.0;
  for (LinkId id = 0; id < link_bytes.size(); ++id)
    busiest_us = std::max(busiest_us, link_bytes[id] / bytes_per_us(topology.link(id).bandwidth_GBps));
  // The first slice takes the whole program's time at 1/slices of the bytes (alphas are not
  // scaled down: optimistic), and each later one adds the busiest link's time for a slice.
  const auto slices = static_cast<double>(
      msccl_runtime_model(protocol, static_cast<int>(schedule.chunks_per_member() * schedule.members().size()),
                          schedule.size_bytes())
          .iterations);
  return whole_us / slices + (slices - 1.0) / slices * busiest_us;
}

std::string schedule_to_msccl_xml(const Schedule& schedule, const Topology& topology,
                                  const MscclWriteOptions& options) {
  return write_msccl_xml(schedule, topology, options).text;
}

}  // namespace tenet
