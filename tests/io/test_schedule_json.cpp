// SPDX-License-Identifier: MIT
// The schedule file: exact text, exact round trips, and one exact message per kind of mistake.

#include "../support/catch.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/collectives.hpp"
#include "tenet/common/error.hpp"
#include "tenet/io/schedule_json.hpp"

using namespace tenet;
using namespace tenet::testing;
using nlohmann::json;

namespace {

/// A 3-ring all-gather: two steps, the second after the first; times with long fractions so the
/// round trip has something to lose.
Schedule ring_all_gather(const Topology& topology) {
  Schedule schedule(CollectiveKind::kAllGather, 3000, {0, 1, 2}, 1, "ring");
  const double hop = 1.0 / 3.0 + 1.1;
  for (NodeId i = 0; i < 3; ++i) {
    const std::vector<ChunkId> chunks = {i};
    schedule.add(i, (i + 1) % 3, TransferKind::kCopy, chunks, {}, 0.0, hop, topology.find_link(i, (i + 1) % 3));
  }
  for (NodeId i = 0; i < 3; ++i) {
    const std::vector<ChunkId> chunks = {(i + 2) % 3};
    const std::vector<TransferId> deps = {(i + 2) % 3};
    schedule.add(i, (i + 1) % 3, TransferKind::kCopy, chunks, deps, hop, 2 * hop, topology.find_link(i, (i + 1) % 3));
  }
  schedule.notes = {"hand-made", "quote \" and newline \n"};
  return schedule;
}

/// The whole message a schedule text is rejected with ("" when it is accepted).
std::string schedule_rejection(const std::string& text, const Topology& topology) {
  try {
    parse_schedule(text, "s.json", topology);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

void check_same(const Schedule& a, const Schedule& b) {
  CHECK(a.collective() == b.collective());
  CHECK(a.size_bytes() == b.size_bytes());
  CHECK(a.members() == b.members());
  CHECK(a.chunks_per_member() == b.chunks_per_member());
  CHECK(a.algorithm() == b.algorithm());
  CHECK(a.notes == b.notes);
  REQUIRE(a.size() == b.size());
  for (TransferId id = 0; id < a.size(); ++id) {
    const Transfer& x = a.transfer(id);
    const Transfer& y = b.transfer(id);
    CHECK(x.src == y.src);
    CHECK(x.dst == y.dst);
    CHECK(x.kind == y.kind);
    CHECK(x.link == y.link);
    CHECK(x.start_us == y.start_us);  // bit-exact, not approximately
    CHECK(x.end_us == y.end_us);
    CHECK(std::vector<ChunkId>(a.chunks_of(x).begin(), a.chunks_of(x).end()) ==
          std::vector<ChunkId>(b.chunks_of(y).begin(), b.chunks_of(y).end()));
    CHECK(std::vector<TransferId>(a.deps_of(x).begin(), a.deps_of(x).end()) ==
          std::vector<TransferId>(b.deps_of(y).begin(), b.deps_of(y).end()));
  }
}

}  // namespace

TEST_CASE("a schedule is written in the documented format, one transfer per line", "[schedule_json]") {
  Topology topology = duplex_ring(3);
  topology.original_npu_ids = {0, 2, 3};
  Schedule schedule(CollectiveKind::kReduceScatter, 3000, {0, 1, 2}, 1, "mine");
  const std::vector<ChunkId> chunk = {2};
  const std::vector<TransferId> dep = {0};
  schedule.add(0, 1, TransferKind::kReduce, chunk, {}, 0.0, 1.5, 0);
  schedule.add(1, 2, TransferKind::kReduce, chunk, dep, 1.5, 3.25);
  CHECK(schedule_to_text(schedule, topology) ==
        "{\n"
        "  \"format\": \"tenet-schedule\", \"version\": 1,\n"
        "  \"algorithm\": \"mine\", \"collective\": \"reducescatter\", \"size_bytes\": 3000,\n"
        "  \"chunks_per_member\": 1, \"members\": [0, 1, 2],\n"
        "  \"npus\": 3, \"npu_ids_in_topology_file\": [0, 2, 3],\n"
        "  \"topology\": \"ring-3\", \"topology_fingerprint\": \"" +
            topology.fingerprint() +
            "\",\n"
            "  \"planned_time_us\": 3.25, \"notes\": [],\n"
            "  \"transfers\": [\n"
            "    {\"id\": 0, \"src\": 0, \"dst\": 1, \"kind\": \"reduce\", \"chunks\": [2], \"deps\": [], "
            "\"start_us\": 0.0, "
            "\"end_us\": 1.5, \"link\": 0},\n"
            "    {\"id\": 1, \"src\": 1, \"dst\": 2, \"kind\": \"reduce\", \"chunks\": [2], \"deps\": [0], "
            "\"start_us\": 1.5, "
            "\"end_us\": 3.25}\n"
            "  ]\n"
            "}\n");
  const Schedule empty(CollectiveKind::kAllGather, 3000, {0, 1, 2}, 1, "none");
  const std::string text = schedule_to_text(empty, topology);
  CHECK(text.find("\"transfers\": []\n}\n") != std::string::npos);
  CHECK(parse_schedule(text, "e.json", topology).size() == 0);
}

TEST_CASE("writing and reading a schedule gives it back exactly", "[schedule_json]") {
  const Topology topology = duplex_ring(3);
  const Schedule original = ring_all_gather(topology);
  const std::string text = schedule_to_text(original, topology);
  const Schedule reread = parse_schedule(text, "s.json", topology);
  check_same(original, reread);
  CHECK(schedule_to_text(reread, topology) == text);

  SECTION("with the fields in another order (header after the transfers)") {
    const std::string sorted = json::parse(text).dump(1);  // nlohmann sorts keys: "version" comes last
    REQUIRE(sorted.find("\"version\"") > sorted.find("\"transfers\""));
    check_same(original, parse_schedule(sorted, "sorted.json", topology));
  }
  SECTION("from a file") {
    const std::string path = (std::filesystem::temp_directory_path() / "tenet_test_schedule.json").string();
    {
      std::ofstream out(path, std::ios::binary);
      out << text;
    }
    check_same(original, load_schedule(path, topology));
    std::remove(path.c_str());
    CHECK_THROWS_WITH(load_schedule(path, topology), "error: " + path + ": cannot open: No such file or directory");
  }
}

TEST_CASE("bad schedule files are rejected with the JSON pointer of each problem", "[schedule_json]") {
  const Topology topology = duplex_ring(3);
  const std::string good = schedule_to_text(ring_all_gather(topology), topology);
  const auto edited = [&](auto&& edit) {
    json document = json::parse(good);
    edit(document);
    return schedule_rejection(document.dump(), topology);
  };

  CHECK(schedule_rejection(good, topology).empty());
  CHECK(schedule_rejection("{\"format\": ", topology) ==
        "error: s.json: invalid JSON: parse error at line 1, column 12: syntax error while parsing value - unexpected "
        "end "
        "of input; expected '[', '{', or a literal");
  CHECK(schedule_rejection(std::string(70, '[') + std::string(70, ']'), topology) ==
        "error: s.json: JSON nested deeper than 64 levels; a schedule file needs 4");
  CHECK(schedule_rejection("[]", topology) == "error: s.json: a schedule file must hold a JSON object (got an array)");
  CHECK(edited([](json& d) { d["format"] = "msccl"; }) ==
        "error: s.json: /format: must be \"tenet-schedule\" (got \"msccl\"); is this a schedule file?");
  CHECK(edited([](json& d) { d["version"] = 2; }) ==
        "error: s.json: /version: this tenet reads version 1 (got the integer 2)");
  CHECK(edited([](json& d) { d["collective"] = "allgathr"; }) ==
        "error: s.json: /collective: unknown collective 'allgathr' (did you mean 'allgather'?); expected allgather, "
        "reducescatter or allreduce");
  CHECK(edited([](json& d) { d["tranfers"] = json::array(); }) ==
        "error: s.json: /tranfers: unknown field 'tranfers' (did you mean 'transfers'?)");
  CHECK(edited([](json& d) { d.erase("transfers"); }) == "error: s.json: /transfers: missing: the list of transfers");

  SECTION("a schedule made for another topology") {
    CHECK(
        edited([](json& d) { d["npus"] = 4; }) ==
        "error: s.json: /npus: the schedule was made for a topology with 4 NPUs, but this one has 3 (after failures); "
        "give the topology the schedule was made for");
    CHECK(edited([](json& d) {
            d["npu_ids_in_topology_file"] = {0, 1, 5};
          }) ==
          "error: s.json: /npu_ids_in_topology_file/2: the schedule's NPU 2 is NPU 5 of its topology file, but here "
          "NPU 2 "
          "is NPU 2 (the schedule was made for another topology or other failures)");
  }
  SECTION("members") {
    CHECK(edited([](json& d) { d["members"] = {0, 0, 1}; }) == "error: s.json: /members/1: NPU 0 is listed twice");
    CHECK(edited([](json& d) {
            d["members"] = {0, 9, 1};
          }) == "error: s.json: /members/1: must be an integer from 0 to 2 (got the integer 9)");
  }
  SECTION("transfers") {
    CHECK(edited([](json& d) { d["transfers"][1]["id"] = 5; }) ==
          "error: s.json: /transfers/1/id: must be 1 (transfers are listed in id order, from 0; got the integer 5)");
    CHECK(edited([](json& d) { d["transfers"][0]["src"] = 3; }) ==
          "error: s.json: /transfers/0/src: must be an integer from 0 to 2 (got the integer 3)");
    CHECK(edited([](json& d) { d["transfers"][0]["dst"] = 0; }) ==
          "error: s.json: /transfers/0: a transfer from NPU 0 to itself");
    CHECK(edited([](json& d) { d["transfers"][0]["kind"] = "move"; }) ==
          "error: s.json: /transfers/0/kind: must be \"copy\" or \"reduce\" (got \"move\")");
    CHECK(edited([](json& d) { d["transfers"][0]["chunks"] = {9}; }) ==
          "error: s.json: /transfers/0/chunks/0: chunk 9 does not exist (the schedule has 3 chunks: 3 members x 1)");
    CHECK(edited([](json& d) {
            d["transfers"][0]["chunks"] = {0, 0};
          }) == "error: s.json: /transfers/0/chunks/1: chunk 0 is listed twice");
    CHECK(edited([](json& d) { d["transfers"][3]["deps"] = {7}; }) ==
          "error: s.json: /transfers/3/deps/0: transfer 7 is not an earlier transfer");
    CHECK(edited([](json& d) { d["transfers"][0]["link"] = 99; }) ==
          "error: s.json: /transfers/0/link: link 99 does not exist (the topology has 6 links)");
    CHECK(edited([](json& d) { d["transfers"][0]["link"] = 2; }) ==
          "error: s.json: /transfers/0/link: link 2 goes NPU 1 -> NPU 2, not NPU 0 -> NPU 1");
    CHECK(edited([](json& d) { d["transfers"][0]["start_us"] = -1; }) ==
          "error: s.json: /transfers/0/start_us: must be a time >= 0 in microseconds (got the integer -1)");
    CHECK(edited([](json& d) { d["transfers"][0] = 5; }) ==
          "error: s.json: /transfers/0: must be an object with id, src, dst, kind, chunks, deps, start_us and end_us "
          "(got "
          "the integer 5)");
    CHECK(edited([](json& d) { d["transfers"][0].erase("src"); }) ==
          "error: s.json: /transfers/0: missing 'src' (the sending NPU)");
    CHECK(edited([](json& d) { d["transfers"][0]["sart_us"] = 1; }) ==
          "error: s.json: /transfers/0/sart_us: unknown field 'sart_us' (did you mean 'start_us'?)");
  }
  SECTION("every problem is listed, header first") {
    CHECK(edited([](json& d) {
            d["transfers"][1]["kind"] = "move";
            d["transfers"][4]["end_us"] = "late";
          }) ==
          "error: s.json: /transfers/1/kind: must be \"copy\" or \"reduce\" (got \"move\")\n"
          "error: s.json: /transfers/4/end_us: must be a time >= 0 in microseconds (got a string)");
    // A wrong header hides the transfer problems it probably causes.
    CHECK(edited([](json& d) {
            d["size_bytes"] = 0;
            d["transfers"][1]["kind"] = "move";
          }) == "error: s.json: /size_bytes: must be an integer from 1 to 1125899906842624 (got the integer 0)");
  }
  SECTION("a long list of problems is cut short") {
    const std::string message = edited([](json& d) {
      for (int i = 0; i < 40; ++i) d["transfers"].push_back(5);
    });
    CHECK(std::count(message.begin(), message.end(), '\n') == 20);
    CHECK(message.substr(message.rfind('\n') + 1) ==
          "error: s.json: /transfers: more problems not listed; fix the ones above first");
  }
}

TEST_CASE("chunk counts a schedule's transfers cannot use are refused before allocating", "[schedule_json]") {
  const Topology topology = duplex_ring(3);
  const std::string good = schedule_to_text(ring_all_gather(topology), topology);
  const auto with_chunks = [&](std::uint64_t chunks_per_member) {
    json document = json::parse(good);
    document["chunks_per_member"] = chunks_per_member;
    return schedule_rejection(document.dump(), topology);
  };
  // 1000000 chunks per member took 5 GB in verify and simulate.
  CHECK(with_chunks(1000000) ==
        "error: s.json: /chunks_per_member: must be an integer from 1 to 65536 (got the integer 1000000)");
  CHECK(with_chunks(30000) ==
        "error: s.json: /chunks_per_member: 30000 chunks per member make 90000 chunks, more than the transfers move: "
        "they "
        "list 6 chunk ids, and every chunk needs at least 2 (one per member but its own)");
  // Few chunks are cheap: whether the transfers deliver them is the verifier's to say.
  CHECK(with_chunks(2).empty());
}

TEST_CASE("the planned time in the header must be the transfers' latest end", "[schedule_json]") {
  const Topology topology = duplex_ring(3);
  const std::string good = schedule_to_text(ring_all_gather(topology), topology);
  const auto with_planned = [&](double planned) {
    json document = json::parse(good);
    document["planned_time_us"] = planned;
    return schedule_rejection(document.dump(), topology);
  };
  CHECK(with_planned(5) ==
        "error: s.json: /planned_time_us: is 5.0, but the latest transfer ends at 2.8666666666666667 "
        "(/transfers/3/end_us); "
        "the planned time must be the latest end_us");
  CHECK(with_planned(2.866667).empty());  // another writer's rounding
  json empty = json::parse(good);
  empty["transfers"] = json::array();
  empty["planned_time_us"] = 1.5;
  CHECK(
      schedule_rejection(empty.dump(), topology) ==
      "error: s.json: /planned_time_us: is 1.5, but the schedule has no transfers; the planned time must be the latest "
      "end_us");
}

TEST_CASE("numbers beyond a double and NUL bytes are refused at their place", "[schedule_json]") {
  const Topology topology = duplex_ring(3);
  const std::string good = schedule_to_text(ring_all_gather(topology), topology);
  const std::size_t second = good.find("{\"id\": 1,");
  const std::size_t end_value = good.find("\"end_us\": ", second) + 10;
  std::string overflow = good;
  overflow.replace(end_value, good.find(',', end_value) - end_value, "1e400");
  const std::string overflow_message =
      "/transfers/1/end_us: the number 1e400 is out of range (JSON numbers must fit a double: at most about 1.8e308)";
  CHECK(schedule_rejection(overflow, topology) == "error: s.json: " + overflow_message);
  const std::string garbage = good + std::string("\0garbage", 8);
  const std::string nul_message =
      "invalid JSON: a NUL byte at line 17, column 1; a JSON file is text, and nothing may follow its value";
  CHECK(schedule_rejection(garbage, topology) == "error: s.json: " + nul_message);

  SECTION("from a file, read as a stream") {
    const std::string path = (std::filesystem::temp_directory_path() / "tenet_test_bad_schedule.json").string();
    const auto load = [&](const std::string& text) {
      {
        std::ofstream out(path, std::ios::binary);
        out << text;
      }
      std::string message;
      try {
        load_schedule(path, topology);
      } catch (const InputError& error) {
        message = error.what();
      }
      std::remove(path.c_str());
      return message;
    };
    CHECK(load(overflow) == "error: " + path + ": " + overflow_message);
    CHECK(load(garbage) == "error: " + path + ": " + nul_message);
    CHECK(load(good + "\n\n").empty());
  }
}

TEST_CASE("streaming the schedule writes the same bytes as the whole text", "[schedule_json]") {
  const Topology topology = duplex_ring(3);
  // About 3 MB of text: several of the writer's 1 MiB pieces, and a partial last one.
  Schedule schedule(CollectiveKind::kAllGather, 3000, {0, 1, 2}, 1, "ring");
  for (TransferId id = 0; id < 30000; ++id) {
    const NodeId src = id % 3;
    const std::vector<ChunkId> chunks = {src};
    const std::vector<TransferId> deps = id >= 3 ? std::vector<TransferId>{id - 3} : std::vector<TransferId>{};
    schedule.add(src, (src + 1) % 3, TransferKind::kCopy, chunks, deps, id * 1.1, id * 1.1 + 1.0 / 3.0,
                 topology.find_link(src, (src + 1) % 3));
  }
  std::ostringstream streamed;
  write_schedule_text(streamed, schedule, topology);
  const std::string whole = schedule_to_text(schedule, topology);
  CHECK(whole.size() > 3 * (std::size_t{1} << 20) / 2);
  CHECK(streamed.str() == whole);

  std::ostringstream empty_streamed;
  const Schedule empty(CollectiveKind::kAllGather, 3000, {0, 1, 2}, 1, "ring");
  write_schedule_text(empty_streamed, empty, topology);
  CHECK(empty_streamed.str() == schedule_to_text(empty, topology));
}
