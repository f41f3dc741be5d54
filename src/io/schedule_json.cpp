// SPDX-License-Identifier: MIT
// The schedule file (format in schedule_json.hpp).
//
// Reading streams: nlohmann's parser calls back at every value, and each transfer object is
// validated, added to the schedule and dropped as soon as it closes, so memory stays at the size
// of the Schedule instead of a DOM of tens of millions of small objects (~1 KB each). The header
// fields usually come first (the writer puts them there); they are captured on the way so the
// transfers go straight into a Schedule with the right header. If they come later, transfers go
// into a placeholder Schedule that is copied once the header is known. The callback also refuses
// nesting past kMaxJsonDepth, the same limit parse_json_text enforces (the parser itself keeps an
// explicit stack, so deep input cannot overflow ours).

#include "tenet/io/schedule_json.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "../topology/json_fields.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/units.hpp"
#include "tenet/topology/topology_json.hpp"

namespace tenet {
namespace {

using nlohmann::json;
using namespace json_fields;

constexpr const char* kFormat = "tenet-schedule";
constexpr std::int64_t kVersion = 1;

const std::vector<std::string> kTopLevelKeys = {"format",
                                                "version",
                                                "algorithm",
                                                "collective",
                                                "size_bytes",
                                                "chunks_per_member",
                                                "members",
                                                "npus",
                                                "npu_ids_in_topology_file",
                                                "topology",
                                                "topology_fingerprint",
                                                "planned_time_us",
                                                "notes",
                                                "transfers"};
/// Hops a route may have: switch fabrics are a few levels deep.
constexpr std::size_t kMaxRouteHops = 64;

const std::vector<std::string> kTransferKeys = {"id",   "src",      "dst",    "kind", "chunks",
                                                "deps", "start_us", "end_us", "link", "route"};

// ---------------------------------------------------------------------------------------------
// Writing

void append_integer(std::string& out, std::uint64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

/// Shortest text that reads back as the same double, always with a '.' or an exponent so that it
/// reads back as a floating-point number.
void append_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  const std::string_view text(buffer, static_cast<std::size_t>(result.ptr - buffer));
  out += text;
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

void append_string(std::string& out, const std::string& value) {
  out += json(value).dump(-1, ' ', false, json::error_handler_t::replace);
}

template <typename Ids>
void append_id_list(std::string& out, const Ids& ids) {
  out += '[';
  bool first = true;
  for (auto id : ids) {
    if (!first) out += ", ";
    first = false;
    append_integer(out, id);
  }
  out += ']';
}

void append_transfer(std::string& out, const Schedule& schedule, TransferId id) {
  const Transfer& transfer = schedule.transfer(id);
  out += "{\"id\": ";
  append_integer(out, id);
  out += ", \"src\": ";
  append_integer(out, transfer.src);
  out += ", \"dst\": ";
  append_integer(out, transfer.dst);
  out += transfer.kind == TransferKind::kReduce ? ", \"kind\": \"reduce\", \"chunks\": "
                                                : ", \"kind\": \"copy\", \"chunks\": ";
  append_id_list(out, schedule.chunks_of(transfer));
  out += ", \"deps\": ";
  append_id_list(out, schedule.deps_of(transfer));
  out += ", \"start_us\": ";
  append_double(out, transfer.start_us);
  out += ", \"end_us\": ";
  append_double(out, transfer.end_us);
  if (transfer.link != kNoLink) {
    out += ", \"link\": ";
    append_integer(out, transfer.link);
  }
  if (transfer.route != kNoRoute) {
    out += ", \"route\": ";
    append_id_list(out, schedule.route_links(transfer.route));
  }
  out += '}';
}

// ---------------------------------------------------------------------------------------------
// Reading

std::string at_index(const std::string& base, std::size_t index) { return base + "/" + std::to_string(index); }

/// An unsigned integer <= max. `pointer` is a string or a function making it: a schedule has
/// millions of ids, and the pointer is needed only when one is wrong.
template <typename Pointer>
std::optional<std::uint64_t> read_index(const json& value, const Pointer& pointer, std::uint64_t max,
                                        ProblemList& problems) {
  if (value.is_number_unsigned()) {
    const std::uint64_t raw = value.get<std::uint64_t>();
    if (raw <= max) return raw;
  }
  std::optional<std::int64_t> result;
  if constexpr (std::is_invocable_v<Pointer>) {
    result = read_integer(value, pointer(), 0, static_cast<std::int64_t>(max), problems);
  } else {
    result = read_integer(value, pointer, 0, static_cast<std::int64_t>(max), problems);
  }
  if (!result) return std::nullopt;
  return static_cast<std::uint64_t>(*result);
}

std::optional<double> read_time(const json& value, const std::string& pointer, ProblemList& problems) {
  if (value.is_number()) {
    const double raw = value.get<double>();
    if (std::isfinite(raw) && raw >= 0.0) return raw;
  }
  problems.add(pointer, "must be a time >= 0 in microseconds (got " + describe_type(value) + ")");
  return std::nullopt;
}

/// The fields that make a Schedule (plus its notes).
struct Header {
  CollectiveKind collective = CollectiveKind::kAllReduce;
  std::uint64_t size_bytes = 0;
  std::vector<NodeId> members;
  std::uint32_t chunks_per_member = 1;
  std::string algorithm;
  std::vector<std::string> notes;

  bool makes(const Schedule& schedule) const {
    return schedule.collective() == collective && schedule.size_bytes() == size_bytes &&
           schedule.members() == members && schedule.chunks_per_member() == chunks_per_member &&
           schedule.algorithm() == algorithm;
  }
};

std::optional<CollectiveKind> read_collective(const json& value, ProblemList& problems) {
  const std::vector<std::string> names = {collective_name(CollectiveKind::kAllGather),
                                          collective_name(CollectiveKind::kReduceScatter),
                                          collective_name(CollectiveKind::kAllReduce)};
  if (value.is_string()) {
    const std::string name = value.get<std::string>();
    for (CollectiveKind kind :
         {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce}) {
      if (name == collective_name(kind)) return kind;
    }
    std::string message = "unknown collective '" + name + "'";
    const std::string suggestion = closest_match(name, names);
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    problems.add("/collective", message + "; expected allgather, reducescatter or allreduce");
    return std::nullopt;
  }
  problems.add("/collective", "must be allgather, reducescatter or allreduce (got " + describe_type(value) + ")");
  return std::nullopt;
}

/// Checks that the schedule was made for this topology: same NPU count, same original ids.
bool check_npus(const json& root, const Topology& topology, ProblemList& problems) {
  const auto npus = read_integer(root["npus"], "/npus", 1, static_cast<std::int64_t>(kMaxNpus), problems);
  if (!npus) return false;
  if (static_cast<std::uint64_t>(*npus) != topology.npu_count()) {
    problems.add("/npus", "the schedule was made for a topology with " + std::to_string(*npus) +
                              " NPUs, but this one has " + std::to_string(topology.npu_count()) +
                              " (after failures); give the topology the schedule was made for");
    return false;
  }
  const json& ids = root["npu_ids_in_topology_file"];
  if (!ids.is_array()) {
    problems.add("/npu_ids_in_topology_file", "must be an array of NPU ids (got " + describe_type(ids) + ")");
    return false;
  }
  if (ids.size() != topology.npu_count()) {
    problems.add("/npu_ids_in_topology_file",
                 "lists " + std::to_string(ids.size()) + " ids, but /npus is " + std::to_string(topology.npu_count()));
    return false;
  }
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    const std::string pointer = at_index("/npu_ids_in_topology_file", npu);
    const auto id = read_index(ids[npu], pointer, UINT32_MAX, problems);
    if (!id) return false;
    if (*id != topology.original_npu_id(npu)) {
      problems.add(pointer, "the schedule's NPU " + std::to_string(npu) + " is NPU " + std::to_string(*id) +
                                " of its topology file, but here NPU " + std::to_string(npu) + " is NPU " +
                                std::to_string(topology.original_npu_id(npu)) +
                                " (the schedule was made for another topology or other failures)");
      return false;
    }
  }
  return true;
}

std::optional<std::vector<NodeId>> read_members(const json& value, const Topology& topology, ProblemList& problems) {
  if (!value.is_array() || value.empty()) {
    problems.add("/members", "must be a non-empty array of NPU ids (got " + describe_type(value) + ")");
    return std::nullopt;
  }
  std::vector<NodeId> members;
  std::vector<bool> listed(topology.npu_count(), false);
  bool ok = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string pointer = at_index("/members", i);
    const auto id = read_index(value[i], pointer, topology.npu_count() - 1, problems);
    if (!id) {
      ok = false;
    } else if (listed[*id]) {
      problems.add(pointer, "NPU " + std::to_string(*id) + " is listed twice");
      ok = false;
    } else {
      listed[*id] = true;
      members.push_back(static_cast<NodeId>(*id));
    }
  }
  if (!ok) return std::nullopt;
  return members;
}

/// Reads and checks the header fields of `root` (the whole file, or the fields captured so far).
std::optional<Header> read_header(const json& root, const Topology& topology, ProblemList& problems) {
  const std::size_t problems_before = problems.size();
  Header header;
  auto require = [&](const char* key, const char* what) {
    if (root.contains(key)) return true;
    problems.add(std::string("/") + key, std::string("missing: ") + what);
    return false;
  };
  if (!root.contains("format")) {
    problems.add("/format", "missing: \"tenet-schedule\" (is this a schedule file written by tenet?)");
  } else if (!root["format"].is_string() || root["format"].get<std::string>() != kFormat) {
    problems.add("/format", "must be \"tenet-schedule\" (got " + root["format"].dump() + "); is this a schedule file?");
  }
  if (require("version", "the format version (1)")) {
    const json& version = root["version"];
    if (!version.is_number_integer() || version.get<std::int64_t>() != kVersion) {
      problems.add("/version", "this tenet reads version 1 (got " + describe_type(version) + ")");
    }
  }
  if (root.contains("algorithm"))
    header.algorithm = read_string(root["algorithm"], "/algorithm", problems).value_or("");
  if (require("collective", "allgather, reducescatter or allreduce")) {
    if (auto kind = read_collective(root["collective"], problems)) header.collective = *kind;
  }
  if (require("size_bytes", "the collective's size in bytes")) {
    if (auto size =
            read_integer(root["size_bytes"], "/size_bytes", 1, static_cast<std::int64_t>(kMaxSizeBytes), problems)) {
      header.size_bytes = static_cast<std::uint64_t>(*size);
    }
  }
  if (require("chunks_per_member", "an integer >= 1")) {
    if (auto chunks = read_integer(root["chunks_per_member"], "/chunks_per_member", 1, kMaxChunksPerNpu, problems)) {
      header.chunks_per_member = static_cast<std::uint32_t>(*chunks);
    }
  }
  const bool has_npus = require("npus", "the number of NPUs of the topology the schedule was made for");
  const bool has_ids =
      require("npu_ids_in_topology_file", "the NPU ids of the topology file the schedule was made for");
  // Member ids mean nothing on another topology, so they are read only when it is the right one.
  if (has_npus && has_ids && check_npus(root, topology, problems) &&
      require("members", "the ids of the NPUs taking part")) {
    if (auto members = read_members(root["members"], topology, problems)) header.members = std::move(*members);
  }
  if (!header.members.empty() &&
      static_cast<std::uint64_t>(header.members.size()) * header.chunks_per_member > UINT32_MAX) {
    problems.add("/chunks_per_member", std::to_string(header.members.size()) + " members x " +
                                           std::to_string(header.chunks_per_member) +
                                           " chunks is more than tenet supports (at most 4294967295 chunks)");
  }
  if (root.contains("topology")) read_string(root["topology"], "/topology", problems);
  if (root.contains("topology_fingerprint")) {
    // Same NPU count and ids is not the same network: links decide where transfers can go.
    auto fingerprint = read_string(root["topology_fingerprint"], "/topology_fingerprint", problems);
    if (fingerprint && *fingerprint != topology.fingerprint()) {
      std::string made_for = root.contains("topology") && root["topology"].is_string()
                                 ? "'" + root["topology"].get<std::string>() + "'"
                                 : std::string("another network");
      problems.add("/topology_fingerprint", "the schedule was made for topology " + made_for +
                                                ", whose links differ from this topology's ('" + topology.name +
                                                "'); synthesize it again for this topology");
    }
  }
  if (root.contains("planned_time_us")) read_time(root["planned_time_us"], "/planned_time_us", problems);
  if (root.contains("notes")) {
    const json& notes = root["notes"];
    if (!notes.is_array()) {
      problems.add("/notes", "must be an array of strings (got " + describe_type(notes) + ")");
    } else {
      for (std::size_t i = 0; i < notes.size(); ++i) {
        if (auto note = read_string(notes[i], at_index("/notes", i), problems)) header.notes.push_back(*note);
      }
    }
  }
  if (problems.size() != problems_before) return std::nullopt;
  return header;
}

class ScheduleReader {
 public:
  ScheduleReader(const Topology& topology, const std::string& source)
      : topology_(topology), source_(source), transfer_problems_(source) {}

  bool on_event(int depth, json::parse_event_t event, json& parsed) {
    using Event = json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (depth + 1 > kMaxJsonDepth) {
          throw InputError(
              source_, "",
              "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels; a schedule file needs 4");
        }
        if (event == Event::array_start && depth == 1 && key_ == "transfers") in_transfers_ = true;
        return true;
      case Event::key:
        if (depth == 1) key_ = parsed.get<std::string>();
        return true;
      case Event::object_end:
      case Event::array_end:
      case Event::value:
        if (depth == 2 && in_transfers_) {
          read_transfer(parsed, transfer_count_++);
          return false;  // validated and stored: drop it from the DOM
        }
        if (depth == 1 && event == Event::array_end && in_transfers_) {
          in_transfers_ = false;
        } else if (depth == 1 && !key_.empty()) {
          captured_[key_] = parsed;
        }
        return true;
    }
    return true;
  }

  Schedule finish(const json& root) {
    if (!root.is_object()) {
      throw InputError(source_, "", "a schedule file must hold a JSON object (got " + describe_type(root) + ")");
    }
    ProblemList problems(source_);
    reject_unknown_keys(root, "", kTopLevelKeys, problems);
    std::optional<Header> header = read_header(root, topology_, problems);
    if (!root.contains("transfers")) {
      problems.add("/transfers", "missing: the list of transfers");
    } else if (!root["transfers"].is_array()) {
      problems.add("/transfers", "must be an array of transfers (got " + describe_type(root["transfers"]) + ")");
    }
    // Transfer problems are mostly consequences of a wrong header (another topology, another
    // member list): list the header's alone first.
    problems.throw_if_any();
    if (truncated_) transfer_problems_.note_unlisted("/transfers");
    transfer_problems_.throw_if_any();

    Schedule schedule = take_schedule(*header);
    check_chunk_count(schedule);
    check_chunks(schedule);
    check_planned_time(root, schedule);
    schedule.notes = std::move(header->notes);
    return schedule;
  }

 private:
  Schedule take_schedule(const Header& header) {
    if (staged_ && header.makes(*staged_)) return std::move(*staged_);
    Schedule schedule(header.collective, header.size_bytes, header.members, header.chunks_per_member, header.algorithm);
    if (!staged_) return schedule;
    schedule.reserve(staged_->size(), 0, 0);
    for (RouteId route = 0; route < staged_->route_count(); ++route) schedule.add_route(staged_->route_links(route));
    for (TransferId id = 0; id < staged_->size(); ++id) {
      const Transfer& transfer = staged_->transfer(id);
      schedule.add(transfer.src, transfer.dst, transfer.kind, staged_->chunks_of(transfer), staged_->deps_of(transfer),
                   transfer.start_us, transfer.end_us, staged_->planned_link(id));
    }
    staged_.reset();
    return schedule;
  }

  /// Checking a schedule allocates per chunk, and a small file can ask for 2^32 chunks. Every
  /// chunk has to reach (all-gather, all-reduce) or leave (reduce-scatter) each member but one, so
  /// a correct schedule lists at least chunks x (members - 1) chunk ids: past kMaxChunksPerNpu
  /// chunks (cheap to check, and left for the verifier to judge) a header asking for more than its
  /// transfers can move is refused before anything is allocated for them.
  void check_chunk_count(const Schedule& schedule) {
    if (schedule.chunk_count() <= kMaxChunksPerNpu) return;
    const std::uint64_t others = schedule.members().size() - 1;
    std::uint64_t listed = 0;
    for (const Transfer& transfer : schedule.transfers()) listed += transfer.chunk_count;
    const std::uint64_t needed = static_cast<std::uint64_t>(schedule.chunk_count()) * others;
    if (listed >= needed) return;
    throw InputError(source_, "/chunks_per_member",
                     std::to_string(schedule.chunks_per_member()) + " chunks per member make " +
                         std::to_string(schedule.chunk_count()) + " chunks, more than the transfers move: they list " +
                         std::to_string(listed) + " chunk ids, and every chunk needs at least " +
                         std::to_string(others) + " (one per member but its own)");
  }

  /// Reports show the header's planned time as the schedule's: it must be the transfers' latest
  /// end_us (within rounding by another writer), or an edit made one of them wrong.
  void check_planned_time(const json& root, const Schedule& schedule) {
    if (!root.contains("planned_time_us")) return;
    const double header = root["planned_time_us"].get<double>();
    double latest = 0.0;
    std::optional<TransferId> last;
    for (TransferId id = 0; id < schedule.size(); ++id) {
      if (!last || schedule.transfer(id).end_us > latest) {
        latest = schedule.transfer(id).end_us;
        last = id;
      }
    }
    constexpr double kTolerance = 1e-6;  // relative, and absolute below 1 us
    if (std::fabs(header - latest) <= kTolerance * std::max(1.0, latest)) return;
    const std::string ends = last ? "the latest transfer ends at " + json(latest).dump() + " (/transfers/" +
                                        std::to_string(*last) + "/end_us)"
                                  : "the schedule has no transfers";
    throw InputError(source_, "/planned_time_us",
                     "is " + json(header).dump() + ", but " + ends + "; the planned time must be the latest end_us");
  }

  void check_chunks(const Schedule& schedule) {
    ProblemList problems(source_);
    const ChunkId chunk_count = schedule.chunk_count();
    std::vector<TransferId> seen_in(chunk_count, 0);  // == id + 1: listed by transfer id
    for (TransferId id = 0; id < schedule.size() && problems.size() < ProblemList::kMaxListed; ++id) {
      const std::span<const ChunkId> chunks = schedule.chunks_of(schedule.transfer(id));
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        const std::string pointer = "/transfers/" + std::to_string(id) + "/chunks/" + std::to_string(i);
        if (chunks[i] >= chunk_count) {
          problems.add(pointer, "chunk " + std::to_string(chunks[i]) + " does not exist (the schedule has " +
                                    std::to_string(chunk_count) +
                                    " chunks: " + std::to_string(schedule.members().size()) + " members x " +
                                    std::to_string(schedule.chunks_per_member()) + ")");
        } else if (seen_in[chunks[i]] == id + 1) {
          problems.add(pointer, "chunk " + std::to_string(chunks[i]) + " is listed twice");
        } else {
          seen_in[chunks[i]] = id + 1;
        }
      }
    }
    problems.throw_if_any();
  }

  /// The schedule transfers are added to: the real one when the captured header is complete and
  /// valid, else a placeholder that take_schedule copies.
  Schedule& staging() {
    if (!staged_) {
      ProblemList ignored("");
      if (std::optional<Header> header = read_header(captured_, topology_, ignored)) {
        staged_.emplace(header->collective, header->size_bytes, header->members, header->chunks_per_member,
                        header->algorithm);
      } else {
        staged_.emplace(CollectiveKind::kAllGather, 1, std::vector<NodeId>{0}, 1, "");
      }
    }
    return *staged_;
  }

  void read_transfer(const json& entry, std::size_t index) {
    // A systematic mistake would be found in every transfer: once the list is full, stop looking.
    if (transfer_problems_.size() >= ProblemList::kMaxListed) {
      truncated_ = true;
      return;
    }
    ProblemList& problems = transfer_problems_;
    const std::string at = at_index("/transfers", index);
    if (!entry.is_object()) {
      problems.add(at, "must be an object with id, src, dst, kind, chunks, deps, start_us and end_us (got " +
                           describe_type(entry) + ")");
      return;
    }
    std::size_t known = 0;
    auto field = [&](const char* key) -> const json* {
      const auto it = entry.find(key);
      if (it == entry.end()) return nullptr;
      ++known;
      return &*it;
    };
    auto required = [&](const char* key, const char* what) {
      const json* value = field(key);
      if (value == nullptr) problems.add(at, std::string("missing '") + key + "' (" + what + ")");
      return value;
    };
    const json* id = required("id", "the transfer's index in this list");
    const json* src = required("src", "the sending NPU");
    const json* dst = required("dst", "the receiving NPU");
    const json* kind = required("kind", "\"copy\" or \"reduce\"");
    const json* chunks = required("chunks", "the chunk ids it moves");
    const json* deps = field("deps");
    const json* start = required("start_us", "the planned start, microseconds");
    const json* end = required("end_us", "the planned end, microseconds");
    const json* link = field("link");
    const json* route = field("route");
    if (known != entry.size()) reject_unknown_keys(entry, at, kTransferKeys, problems);

    if (id != nullptr && !(id->is_number_unsigned() && id->get<std::uint64_t>() == index)) {
      problems.add(at + "/id", "must be " + std::to_string(index) + " (transfers are listed in id order, from 0; got " +
                                   describe_type(*id) + ")");
    }
    const std::uint64_t last_npu = topology_.npu_count() - 1;
    std::optional<std::uint64_t> from;
    std::optional<std::uint64_t> to;
    if (src != nullptr) from = read_index(*src, at + "/src", last_npu, problems);
    if (dst != nullptr) to = read_index(*dst, at + "/dst", last_npu, problems);
    if (from && to && *from == *to) problems.add(at, "a transfer from NPU " + std::to_string(*from) + " to itself");
    TransferKind transfer_kind = TransferKind::kCopy;
    if (kind != nullptr) {
      if (kind->is_string() && kind->get_ref<const std::string&>() == "reduce") {
        transfer_kind = TransferKind::kReduce;
      } else if (!kind->is_string() || kind->get_ref<const std::string&>() != "copy") {
        problems.add(at + "/kind", "must be \"copy\" or \"reduce\" (got " +
                                       (kind->is_string() ? kind->dump() : describe_type(*kind)) + ")");
      }
    }
    chunk_ids_.clear();
    if (chunks != nullptr) {
      if (!chunks->is_array() || chunks->empty()) {
        problems.add(at + "/chunks", "must be a non-empty array of chunk ids (got " + describe_type(*chunks) + ")");
      } else {
        for (std::size_t i = 0; i < chunks->size(); ++i) {
          const auto pointer = [&] { return at + "/chunks/" + std::to_string(i); };
          const auto chunk = read_index((*chunks)[i], pointer, UINT32_MAX - 1, problems);
          if (chunk) chunk_ids_.push_back(static_cast<ChunkId>(*chunk));
        }
      }
    }
    dep_ids_.clear();
    if (deps != nullptr) {
      if (!deps->is_array()) {
        problems.add(at + "/deps", "must be an array of earlier transfer ids (got " + describe_type(*deps) + ")");
      } else {
        for (std::size_t i = 0; i < deps->size(); ++i) {
          const auto pointer = [&] { return at + "/deps/" + std::to_string(i); };
          const auto dep = read_index((*deps)[i], pointer, UINT32_MAX, problems);
          if (!dep) continue;
          if (*dep >= index) {
            problems.add(pointer(), "transfer " + std::to_string(*dep) + " is not an earlier transfer");
          } else {
            dep_ids_.push_back(static_cast<TransferId>(*dep));
          }
        }
      }
    }
    std::optional<double> start_us;
    std::optional<double> end_us;
    if (start != nullptr) start_us = read_time(*start, at + "/start_us", problems);
    if (end != nullptr) end_us = read_time(*end, at + "/end_us", problems);
    LinkId link_id = kNoLink;
    if (link != nullptr) {
      const std::string pointer = at + "/link";
      if (auto value = read_index(*link, pointer, UINT32_MAX, problems)) {
        if (*value >= topology_.link_count()) {
          problems.add(pointer, "link " + std::to_string(*value) + " does not exist (the topology has " +
                                    std::to_string(topology_.link_count()) + " links)");
        } else if (from && to && *from != *to) {
          link_id = static_cast<LinkId>(*value);
          const Link& planned = topology_.link(link_id);
          if (planned.src != *from || planned.dst != *to) {
            problems.add(pointer, "link " + std::to_string(*value) + " goes " + topology_.node_label(planned.src) +
                                      " -> " + topology_.node_label(planned.dst) + ", not " +
                                      topology_.node_label(static_cast<NodeId>(*from)) + " -> " +
                                      topology_.node_label(static_cast<NodeId>(*to)));
          }
        }
      }
    }
    route_links_.clear();
    if (route != nullptr) {
      const std::string pointer = at + "/route";
      if (link != nullptr) problems.add(pointer, "a transfer has a link or a route, not both");
      if (!route->is_array() || route->empty() || route->size() > kMaxRouteHops) {
        problems.add(pointer, "must be a non-empty array of at most " + std::to_string(kMaxRouteHops) +
                                  " link ids, from src through switches to dst (got " + describe_type(*route) + ")");
      } else {
        for (std::size_t i = 0; i < route->size(); ++i) {
          const auto hop =
              read_index((*route)[i], [&] { return pointer + "/" + std::to_string(i); }, UINT32_MAX, problems);
          if (!hop) break;
          if (*hop >= topology_.link_count()) {
            problems.add(pointer + "/" + std::to_string(i), "link " + std::to_string(*hop) +
                                                                " does not exist (the topology has " +
                                                                std::to_string(topology_.link_count()) + " links)");
            break;
          }
          route_links_.push_back(static_cast<LinkId>(*hop));
        }
        if (route_links_.size() == route->size() && from && to)
          check_route(pointer, static_cast<NodeId>(*from), static_cast<NodeId>(*to), problems);
      }
    }
    // Once anything is wrong the schedule will not be returned: keep validating, stop storing.
    if (!problems.empty()) return;
    if (!route_links_.empty()) {
      auto [it, added] = route_ids_.try_emplace(route_links_, 0);
      if (added) it->second = staging().add_route(route_links_);
      link_id = Schedule::on_route(it->second);
    }
    staging().add(static_cast<NodeId>(*from), static_cast<NodeId>(*to), transfer_kind, chunk_ids_, dep_ids_, *start_us,
                  *end_us, link_id);
  }

  /// A route runs from `from` through switches only to `to`, link after link.
  void check_route(const std::string& pointer, NodeId from, NodeId to, ProblemList& problems) {
    NodeId at_node = from;
    for (std::size_t i = 0; i < route_links_.size(); ++i) {
      const Link& hop = topology_.link(route_links_[i]);
      if (hop.src != at_node) {
        problems.add(pointer + "/" + std::to_string(i), "link " + std::to_string(route_links_[i]) + " starts at " +
                                                            topology_.node_label(hop.src) + ", not at " +
                                                            topology_.node_label(at_node) + " where the route is");
        return;
      }
      at_node = hop.dst;
      if (i + 1 < route_links_.size() && !topology_.is_switch(at_node)) {
        problems.add(pointer + "/" + std::to_string(i),
                     "the route passes through " + topology_.node_label(at_node) +
                         ", which is not a switch (an NPU forwards with a transfer of its own)");
        return;
      }
    }
    if (at_node != to) {
      problems.add(pointer, "the route ends at " + topology_.node_label(at_node) + ", not at the transfer's dst " +
                                topology_.node_label(to));
    }
  }

  const Topology& topology_;
  std::string source_;
  std::string key_;            ///< the latest key of the top-level object
  bool in_transfers_ = false;  ///< inside the top-level "transfers" array
  std::size_t transfer_count_ = 0;
  json captured_ = json::object();  ///< top-level fields other than the transfers, as they complete
  std::optional<Schedule> staged_;
  ProblemList transfer_problems_;
  bool truncated_ = false;
  std::vector<ChunkId> chunk_ids_;                    ///< scratch for the transfer being read
  std::vector<LinkId> route_links_;                   ///< scratch: the route of the transfer being read
  std::map<std::vector<LinkId>, RouteId> route_ids_;  ///< routes read so far
  std::vector<TransferId> dep_ids_;
};

/// `input` is the whole text or a stream at its start.
template <typename Input>
Schedule parse_schedule_input(Input& input, const std::string& source, const Topology& topology) {
  constexpr bool streamed = std::is_base_of_v<std::istream, Input>;
  if constexpr (!streamed) {
    if (std::optional<InputProblem> nul = find_nul_byte(input)) throw InputError(source, {*nul});
  }
  ScheduleReader reader(topology, source);
  json root;
  try {
    root = json::parse(input, [&reader](int depth, json::parse_event_t event, json& parsed) {
      return reader.on_event(depth, event, parsed);
    });
  } catch (const json::parse_error& error) {
    // nlohmann's message starts with "[json.exception.parse_error.101] "; keep what follows.
    std::string message = error.what();
    if (auto cut = message.find("] "); cut != std::string::npos) message = message.substr(cut + 2);
    throw InputError(source, "", "invalid JSON: " + message);
  } catch (const json::out_of_range& error) {
    // A number beyond a double: nlohmann gives no position, so find the value it was parsing.
    std::string pointer;
    if constexpr (streamed) {
      input.clear();
      input.seekg(0);
      if (input) pointer = pointer_where_parse_fails(input);  // else a pipe: no going back
    } else {
      pointer = pointer_where_parse_fails(input);
    }
    throw InputError(source, {number_overflow_problem(error, pointer)});
  }
  if constexpr (streamed) {
    if (std::optional<InputProblem> nul = nul_byte_after_parse(input)) throw InputError(source, {*nul});
  }
  return reader.finish(root);
}

}  // namespace

namespace {

/// The whole text, built in `out`; with a `flush`, handed over (and `out` emptied) whenever it
/// passes kStreamPiece bytes, so a schedule of a hundred million transfers never sits in memory as
/// text. The same bytes either way.
constexpr std::size_t kStreamPiece = std::size_t{1} << 20;

void build_schedule_text(const Schedule& schedule, const Topology& topology, std::string& out,
                         const std::function<void(std::string&)>& flush) {
  out += "{\n  \"format\": \"tenet-schedule\", \"version\": 1,\n  \"algorithm\": ";
  append_string(out, schedule.algorithm());
  out += ", \"collective\": ";
  append_string(out, collective_name(schedule.collective()));
  out += ", \"size_bytes\": ";
  append_integer(out, schedule.size_bytes());
  out += ",\n  \"chunks_per_member\": ";
  append_integer(out, schedule.chunks_per_member());
  out += ", \"members\": ";
  append_id_list(out, schedule.members());
  out += ",\n  \"npus\": ";
  append_integer(out, topology.npu_count());
  out += ", \"npu_ids_in_topology_file\": [";
  for (NodeId npu = 0; npu < topology.npu_count(); ++npu) {
    if (npu > 0) out += ", ";
    append_integer(out, topology.original_npu_id(npu));
  }
  out += "],\n  \"topology\": ";
  append_string(out, topology.name);
  out += ", \"topology_fingerprint\": ";
  append_string(out, topology.fingerprint());
  out += ",\n  \"planned_time_us\": ";
  append_double(out, schedule.planned_time_us());
  out += ", \"notes\": [";
  for (std::size_t i = 0; i < schedule.notes.size(); ++i) {
    if (i > 0) out += ", ";
    append_string(out, schedule.notes[i]);
  }
  out += "],\n  \"transfers\": [";
  for (TransferId id = 0; id < schedule.size(); ++id) {
    out += id == 0 ? "\n    " : ",\n    ";
    append_transfer(out, schedule, id);
    if (flush && out.size() >= kStreamPiece) flush(out);
  }
  out += schedule.size() == 0 ? "]\n}\n" : "\n  ]\n}\n";
  if (flush) flush(out);
}

}  // namespace

std::string schedule_to_text(const Schedule& schedule, const Topology& topology) {
  std::string out;
  out.reserve(512 + schedule.size() * 128);
  build_schedule_text(schedule, topology, out, nullptr);
  return out;
}

void write_schedule_text(std::ostream& stream, const Schedule& schedule, const Topology& topology) {
  std::string piece;
  piece.reserve(kStreamPiece + 4096);
  build_schedule_text(schedule, topology, piece, [&](std::string& text) {
    stream.write(text.data(), static_cast<std::streamsize>(text.size()));
    text.clear();
  });
}

Schedule parse_schedule(const std::string& text, const std::string& source, const Topology& topology) {
  return parse_schedule_input(text, source, topology);
}

Schedule load_schedule(const std::string& path, const Topology& topology) {
  std::error_code code;
  if (std::filesystem::is_directory(path, code)) throw InputError(path, "", "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  Schedule schedule = parse_schedule_input(in, path, topology);
  if (in.bad()) throw InputError(path, "", "cannot read the file");
  return schedule;
}

}  // namespace tenet
