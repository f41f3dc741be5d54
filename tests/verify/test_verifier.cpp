// SPDX-License-Identifier: MIT
// The verifier on hand-written schedules: correct ones pass, and each hand-broken one is rejected
// with its exact message. Topologies are built by hand so every time can be checked on paper:
// links have 0.5 us latency and 1 GB/s (1000 bytes/us), chunks are 1000 bytes, so a hop is 1.5 us.

#include "../support/catch.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "../support/collectives.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

constexpr double kHop = 1.5;
/// Spec::link value meaning "the topology's link src -> dst".
constexpr LinkId kFindLink = kNoLink - 1;

/// One transfer by value, with dependencies as indices into the same spec list, so tests can
/// edit, insert and erase transfers before building the Schedule.
struct Spec {
  NodeId src;
  NodeId dst;
  TransferKind kind;
  std::vector<ChunkId> chunks;
  std::vector<TransferId> deps;
  double start;
  double end;
  LinkId link = kFindLink;
};
using Specs = std::vector<Spec>;

/// 2x2 mesh: 0-1, 0-2, 1-3, 2-3 (no diagonals).
Topology mesh_2x2() {
  Topology topology(4, {});
  topology.add_duplex(0, 1, 0.5, 1.0);
  topology.add_duplex(0, 2, 0.5, 1.0);
  topology.add_duplex(1, 3, 0.5, 1.0);
  topology.add_duplex(2, 3, 0.5, 1.0);
  return topology;
}

Schedule build(const Topology& topology, CollectiveKind kind, std::vector<NodeId> members, std::uint32_t per_member,
               const Specs& specs) {
  const std::uint64_t size = 1000ull * members.size() * per_member;
  Schedule schedule(kind, size, std::move(members), per_member, "hand");
  for (const Spec& spec : specs) {
    const LinkId link = spec.link == kFindLink ? topology.find_link(spec.src, spec.dst) : spec.link;
    schedule.add(spec.src, spec.dst, spec.kind, spec.chunks, spec.deps, spec.start, spec.end, link);
  }
  return schedule;
}

std::vector<NodeId> all(std::uint32_t n) {
  std::vector<NodeId> npus(n);
  for (NodeId i = 0; i < n; ++i) npus[i] = i;
  return npus;
}

/// "ok", or the verifier's message.
std::string verdict(const Topology& topology, const Schedule& schedule) {
  const VerifyResult result = verify_schedule(topology, schedule);
  return result.ok ? "ok" : result.error;
}

std::string verdict(const Topology& topology, CollectiveKind kind, const Specs& specs) {
  return verdict(topology, build(topology, kind, all(topology.npu_count()), 1, specs));
}

Specs routed(Specs specs) {
  for (Spec& spec : specs) spec.link = kNoLink;
  return specs;
}

/// Inserts `spec` at `index`; dependencies on later transfers follow them.
Specs inserted(Specs specs, TransferId index, Spec spec) {
  for (Spec& other : specs) {
    for (TransferId& dep : other.deps) dep += dep >= index ? 1 : 0;
  }
  specs.insert(specs.begin() + index, std::move(spec));
  return specs;
}

/// Removes transfer `index` and every dependency on it.
Specs erased(Specs specs, TransferId index) {
  specs.erase(specs.begin() + index);
  for (Spec& spec : specs) {
    std::vector<TransferId> kept;
    for (TransferId dep : spec.deps) {
      if (dep != index) kept.push_back(dep > index ? dep - 1 : dep);
    }
    spec.deps = kept;
  }
  return specs;
}

ChunkId mod(std::int64_t value, std::uint32_t n) { return static_cast<ChunkId>(((value % n) + n) % n); }

/// Unidirectional ring all-gather from `t0`: at step k (1..p-1) NPU i copies chunk i-k+1 to i+1,
/// after the step k-1 transfer that brought it (or after first_deps[i] at step 1). Transfer
/// (k, i) has index base + (k-1)p + i.
void add_ring_all_gather(Specs& specs, std::uint32_t p, double t0, const std::vector<TransferId>& first_deps = {},
                         std::uint32_t per_member = 1) {
  const auto base = static_cast<TransferId>(specs.size());
  const double hop = 0.5 + per_member * 1.0;
  for (std::uint32_t k = 1; k < p; ++k) {
    for (std::uint32_t i = 0; i < p; ++i) {
      std::vector<TransferId> deps;
      if (k > 1) deps.push_back(base + (k - 2) * p + mod(std::int64_t{i} - 1, p));
      if (k == 1 && !first_deps.empty()) deps.push_back(first_deps[i]);
      std::vector<ChunkId> chunks;
      for (std::uint32_t c = 0; c < per_member; ++c) chunks.push_back(mod(std::int64_t{i} - k + 1, p) * per_member + c);
      specs.push_back({i, mod(i + 1, p), TransferKind::kCopy, chunks, deps, t0 + (k - 1) * hop, t0 + k * hop});
    }
  }
}

/// Unidirectional ring reduce-scatter: at step k NPU i reduces chunk i-k into i+1; chunk c ends
/// complete at NPU c. The last transfer into NPU i has index (p-2)p + i-1.
void add_ring_reduce_scatter(Specs& specs, std::uint32_t p, double t0) {
  const auto base = static_cast<TransferId>(specs.size());
  for (std::uint32_t k = 1; k < p; ++k) {
    for (std::uint32_t i = 0; i < p; ++i) {
      std::vector<TransferId> deps;
      if (k > 1) deps.push_back(base + (k - 2) * p + mod(std::int64_t{i} - 1, p));
      specs.push_back({i,
                       mod(i + 1, p),
                       TransferKind::kReduce,
                       {mod(std::int64_t{i} - k, p)},
                       deps,
                       t0 + (k - 1) * kHop,
                       t0 + k * kHop});
    }
  }
}

Specs ring_all_gather(std::uint32_t p) {
  Specs specs;
  add_ring_all_gather(specs, p, 0.0);
  return specs;
}

Specs ring_reduce_scatter(std::uint32_t p) {
  Specs specs;
  add_ring_reduce_scatter(specs, p, 0.0);
  return specs;
}

Specs ring_all_reduce(std::uint32_t p) {
  Specs specs;
  add_ring_reduce_scatter(specs, p, 0.0);
  std::vector<TransferId> last_into(p);
  for (std::uint32_t i = 0; i < p; ++i) last_into[i] = (p - 2) * p + mod(std::int64_t{i} - 1, p);
  add_ring_all_gather(specs, p, (p - 1) * kHop, last_into);
  return specs;
}

}  // namespace

TEST_CASE("correct ring schedules pass", "[verifier]") {
  for (std::uint32_t p : {3u, 4u}) {
    const Topology topology = duplex_ring(p);
    CHECK(verdict(topology, CollectiveKind::kAllGather, ring_all_gather(p)) == "ok");
    CHECK(verdict(topology, CollectiveKind::kReduceScatter, ring_reduce_scatter(p)) == "ok");
    CHECK(verdict(topology, CollectiveKind::kAllReduce, ring_all_reduce(p)) == "ok");
    CHECK(verdict(topology, CollectiveKind::kAllReduce, routed(ring_all_reduce(p))) == "ok");
  }
  const Topology topology = duplex_ring(4);
  const VerifyResult result =
      verify_schedule(topology, build(topology, CollectiveKind::kAllReduce, all(4), 1, ring_all_reduce(4)));
  CHECK(result.ok);
  CHECK(result.transfers_checked == 24);
  CHECK(result.redundant_copies == 0);
}

TEST_CASE("a direct all-gather with routed transfers passes on a 2x2 mesh", "[verifier]") {
  const Topology topology = mesh_2x2();
  Specs specs;
  for (NodeId i = 0; i < 4; ++i) {
    for (NodeId j = 0; j < 4; ++j) {
      // Later transfers end earlier, so ends arrive out of start order (each lasts at least the
      // 2 us a two-hop route needs).
      if (i != j) specs.push_back({i, j, TransferKind::kCopy, {i}, {}, 0.0, 4.0 - 0.1 * specs.size(), kNoLink});
    }
  }
  CHECK(verdict(topology, CollectiveKind::kAllGather, specs) == "ok");
  // Forwarding chunk 3 from NPU 1 before it arrived there (transfer 10, 3 -> 1, ends at 3).
  Specs early = specs;
  early.push_back({1, 0, TransferKind::kCopy, {3}, {}, 1.25, 3.0, kNoLink});
  CHECK(verdict(topology, CollectiveKind::kAllGather, early) ==
        "transfer 12 (NPU 1 -> NPU 0, chunk 3): NPU 1 does not hold chunk 3 when the transfer starts at 1.25 us "
        "(read before it was written)");
  early.back().start = 3.0;
  early.back().end = 4.5;
  early.back().deps = {10};
  CHECK(verdict(topology, CollectiveKind::kAllGather, early) == "ok");
  // Planned on links that do not exist (0 -> 3 has none), the same transfers are rejected.
  Specs planned = specs;
  planned[2].link = 7;
  CHECK(verdict(topology, CollectiveKind::kAllGather, planned) ==
        "transfer 2 (NPU 0 -> NPU 3, chunk 0): planned link 7 goes NPU 3 -> NPU 2, not NPU 0 -> NPU 3");
}

TEST_CASE("transfers without a planned link last at least their route's time", "[verifier]") {
  // The simulator routes them, so that is the time they take: 0 -> 3 crosses two links of a 2x2
  // mesh (0.5 us each, then 1000 bytes at 1 GB/s).
  const Topology topology = mesh_2x2();
  Specs specs;
  for (NodeId i = 0; i < 4; ++i) {
    for (NodeId j = 0; j < 4; ++j) {
      if (i != j) specs.push_back({i, j, TransferKind::kCopy, {i}, {}, 0.0, 2.0, kNoLink});
    }
  }
  REQUIRE(specs[2].dst == 3);
  CHECK(verdict(topology, CollectiveKind::kAllGather, specs) == "ok");
  specs[2].end = 1.9;
  CHECK(verdict(topology, CollectiveKind::kAllGather, specs) ==
        "transfer 2 (NPU 0 -> NPU 3, chunk 0) lasts 1.9 us but needs at least 2 us for 1000 bytes on its route (2 "
        "links, the route the simulator takes)");
  // The same transfers on NPUs with no links at all have no route.
  const Topology unlinked(4, {});
  CHECK(verdict(unlinked, CollectiveKind::kAllGather, specs) ==
        "/transfers: a transfer goes from NPU 0 to NPU 1, which it cannot reach");
}

TEST_CASE("direct reduce-scatter and all-gather with many dependencies pass", "[verifier]") {
  // 18 NPUs: every all-gather copy waits on 17 reduces, past the short-list scan of the ancestry
  // check. Fully connected, no planned links: every transfer is routed (over its direct link).
  const std::uint32_t p = 18;
  Topology topology(p, {});
  for (NodeId i = 0; i < p; ++i) {
    for (NodeId j = i + 1; j < p; ++j) topology.add_duplex(i, j, 0.5, 1.0);
  }
  Specs specs;
  std::vector<std::vector<TransferId>> reduces_into(p);
  for (NodeId i = 0; i < p; ++i) {
    for (NodeId j = 0; j < p; ++j) {
      if (i == j) continue;
      reduces_into[j].push_back(static_cast<TransferId>(specs.size()));
      specs.push_back({i, j, TransferKind::kReduce, {j}, {}, 0.0, 2.0, kNoLink});
    }
  }
  for (NodeId j = 0; j < p; ++j) {
    for (NodeId i = 0; i < p; ++i) {
      if (i != j) specs.push_back({j, i, TransferKind::kCopy, {j}, reduces_into[j], 2.0, 4.0, kNoLink});
    }
  }
  CHECK(verdict(topology, CollectiveKind::kAllReduce, specs) == "ok");
  // The last copy from NPU 17 no longer waits for the reduce from NPU 16.
  Specs racy = specs;
  racy.back().deps.pop_back();
  CHECK(verdict(topology, CollectiveKind::kAllReduce, racy) ==
        "transfer 611 reads chunk 17 at NPU 17 while transfer 288, which also wrote it, is not among its ancestors (a "
        "race)");
}

TEST_CASE("two chunks per member moved as blocks pass", "[verifier]") {
  const Topology topology = duplex_ring(3);
  Specs specs;
  add_ring_all_gather(specs, 3, 0.0, {}, 2);
  CHECK(verdict(topology, build(topology, CollectiveKind::kAllGather, all(3), 2, specs)) == "ok");
  // A block of two chunks needs 0.5 + 2 us on a link.
  specs[1].end = 2.0;
  CHECK(verdict(topology, build(topology, CollectiveKind::kAllGather, all(3), 2, specs)) ==
        "transfer 1 (NPU 1 -> NPU 2, 2 chunks) lasts 2 us on link NPU 1 -> NPU 2 but needs at least 2.5 us "
        "(0.5 us latency + 2000 bytes at 1 GB/s)");
}

TEST_CASE("a sub-collective forwarding through a non-member passes", "[verifier]") {
  // Members 0 and 2 of a 4-ring; NPUs 1 and 3 only forward. Chunk 0 belongs to NPU 0, chunk 1 to NPU 2.
  const Topology topology = duplex_ring(4);
  const Specs gather = {{0, 1, TransferKind::kCopy, {0}, {}, 0.0, 1.5},
                        {2, 3, TransferKind::kCopy, {1}, {}, 0.0, 1.5},
                        {1, 2, TransferKind::kCopy, {0}, {0}, 1.5, 3.0},
                        {3, 0, TransferKind::kCopy, {1}, {1}, 1.5, 3.0}};
  CHECK(verdict(topology, build(topology, CollectiveKind::kAllGather, {0, 2}, 1, gather)) == "ok");
  // Reduce-scatter: NPU 2's contribution to chunk 0 travels 2 -> 3 -> 0, NPU 0's to chunk 1 0 -> 1 -> 2.
  const Specs scatter = {{2, 3, TransferKind::kReduce, {0}, {}, 0.0, 1.5},
                         {0, 1, TransferKind::kReduce, {1}, {}, 0.0, 1.5},
                         {3, 0, TransferKind::kReduce, {0}, {0}, 1.5, 3.0},
                         {1, 2, TransferKind::kReduce, {1}, {1}, 1.5, 3.0}};
  CHECK(verdict(topology, build(topology, CollectiveKind::kReduceScatter, {0, 2}, 1, scatter)) == "ok");
  // Forwarding a non-member's empty slot is a read before anything was written.
  Specs wrong = gather;
  wrong[2].src = 3;
  wrong[2].dst = 2;
  CHECK(verdict(topology, build(topology, CollectiveKind::kAllGather, {0, 2}, 1, wrong)) ==
        "transfer 2 (NPU 3 -> NPU 2, chunk 0): NPU 3 does not hold chunk 0 when the transfer starts at 1.5 us "
        "(read before it was written)");
}

TEST_CASE("a writer reached through another dependency is an ancestor", "[verifier]") {
  // Transfer 4 reads chunk 2 at NPU 0, written by transfer 2, and depends on it only through 3.
  const Topology topology = duplex_ring(3);
  const Specs specs = {
      {0, 1, TransferKind::kCopy, {0}, {}, 0.0, 1.5},  {1, 2, TransferKind::kCopy, {1}, {}, 0.0, 1.5},
      {2, 0, TransferKind::kCopy, {2}, {}, 0.0, 1.5},  {1, 2, TransferKind::kCopy, {0}, {0, 2}, 1.5, 3.0},
      {0, 1, TransferKind::kCopy, {2}, {3}, 3.0, 4.5}, {2, 0, TransferKind::kCopy, {1}, {1}, 1.5, 3.0}};
  CHECK(verdict(topology, CollectiveKind::kAllGather, specs) == "ok");
}

TEST_CASE("times within the tolerance pass, times beyond it do not", "[verifier]") {
  const Topology topology = duplex_ring(3);
  Specs specs = routed(ring_all_gather(3));
  // Ends computed as 1.1 + 0.4 (1.5000000000000002) against starts written as 1.5.
  for (TransferId id = 0; id < 3; ++id)
    specs[id] = {specs[id].src, specs[id].dst, TransferKind::kCopy, specs[id].chunks, {}, 0.0, 1.1 + 0.4, kNoLink};
  for (TransferId id = 3; id < 6; ++id) specs[id].start = 1.5;
  CHECK(verdict(topology, CollectiveKind::kAllGather, specs) == "ok");
  specs[2].end = 1.5 + 2e-9;
  CHECK(verdict(topology, CollectiveKind::kAllGather, specs) ==
        "transfer 3 starts at 1.5 us before its dependency 2 ends at 1.500000002 us");
}

TEST_CASE("redundant copies are counted", "[verifier]") {
  const Topology topology = duplex_ring(3);
  Specs specs = routed(ring_all_gather(3));
  // NPU 1 sends chunk 0 to NPU 2 again after transfer 4 delivered it.
  specs.push_back({1, 2, TransferKind::kCopy, {0}, {0, 4}, 3.0, 4.5, kNoLink});
  const VerifyResult result = verify_schedule(topology, build(topology, CollectiveKind::kAllGather, all(3), 1, specs));
  CHECK(result.ok);
  CHECK(result.redundant_copies == 1);
}

TEST_CASE("broken all-gathers are rejected with their first problem", "[verifier]") {
  const Topology topology = duplex_ring(3);
  const Specs good = ring_all_gather(3);
  // Transfers: 0: 0->1 c0, 1: 1->2 c1, 2: 2->0 c2 at 0..1.5; 3: 0->1 c2 (after 2), 4: 1->2 c0
  // (after 0), 5: 2->0 c1 (after 1) at 1.5..3.
  const auto check = [&](Specs specs, const std::string& expected) {
    CHECK(verdict(topology, CollectiveKind::kAllGather, specs) == expected);
  };
  SECTION("missing transfer") { check(erased(good, 5), "NPU 0 ends without chunk 1 (missing)"); }
  SECTION("read before written") {
    Specs specs = routed(good);
    specs[3].deps.clear();
    specs[3].start = 1.0;
    check(specs,
          "transfer 3 (NPU 0 -> NPU 1, chunk 2): NPU 0 does not hold chunk 2 when the transfer starts at 1 us "
          "(read before it was written)");
  }
  SECTION("dependency ending after the start") {
    Specs specs = good;
    specs[3].start = 1.0;
    check(specs, "transfer 3 starts at 1 us before its dependency 2 ends at 1.5 us");
  }
  SECTION("two transfers on one link at once") {
    Specs specs = good;
    specs.push_back({0, 1, TransferKind::kCopy, {0}, {}, 1.0, 2.5});
    check(specs, "transfers 0 and 6 overlap on link NPU 0 -> NPU 1 (0 us to 1.5 us and 1 us to 2.5 us)");
  }
  SECTION("too short for its link") {
    Specs specs = good;
    specs[0].end = 1.0;
    check(specs,
          "transfer 0 (NPU 0 -> NPU 1, chunk 0) lasts 1 us on link NPU 0 -> NPU 1 but needs at least 1.5 us "
          "(0.5 us latency + 1000 bytes at 1 GB/s)");
  }
  SECTION("race: the writer is not an ancestor") {
    Specs specs = good;
    specs[3].deps.clear();
    check(
        specs,
        "transfer 3 reads chunk 2 at NPU 0 while transfer 2, which also wrote it, is not among its ancestors (a race)");
  }
  SECTION("chunk out of range") {
    Specs specs = good;
    specs[0].chunks = {7};
    check(specs, "transfer 0 (NPU 0 -> NPU 1, chunk 7): chunk 7 does not exist (the schedule has 3 chunks)");
  }
  SECTION("chunk listed twice") {
    Specs specs = good;
    specs[4].chunks = {0, 0};
    check(specs, "transfer 4 (NPU 1 -> NPU 2, chunk 0): chunk 0 is listed twice");
  }
  SECTION("reduce in an all-gather") {
    Specs specs = good;
    specs[0].kind = TransferKind::kReduce;
    check(specs, "transfer 0 (NPU 0 -> NPU 1, chunk 0): a reduce in an all-gather (all-gather moves copies only)");
  }
  SECTION("planned link joining other NPUs") {
    Specs specs = good;
    specs[0].link = topology.find_link(1, 2);
    check(specs, "transfer 0 (NPU 0 -> NPU 1, chunk 0): planned link 2 goes NPU 1 -> NPU 2, not NPU 0 -> NPU 1");
  }
  SECTION("planned link that does not exist") {
    Specs specs = good;
    specs[0].link = 40;
    check(specs, "transfer 0 (NPU 0 -> NPU 1, chunk 0): planned link 40 does not exist (the topology has 6 links)");
  }
  SECTION("ends before it starts") {
    Specs specs = routed(good);
    specs[1].end = 0.5;
    specs[1].start = 1.0;
    check(specs, "transfer 1 (NPU 1 -> NPU 2, chunk 1): ends at 0.5 us, before it starts at 1 us");
  }
  SECTION("a switch as an endpoint") {
    Topology switched(3, {"sw"});
    for (NodeId i = 0; i < 3; ++i) switched.add_duplex(i, 3, 0.5, 1.0);
    Specs specs = routed(good);
    specs[4].dst = 3;
    CHECK(verdict(switched, CollectiveKind::kAllGather, specs) ==
          "transfer 4: destination is switch 'sw', not an NPU (switches hold no data)");
  }
}

TEST_CASE("broken reductions are rejected with their first problem", "[verifier]") {
  // 3-ring reduce-scatter: 0: 0->1 c2, 1: 1->2 c0, 2: 2->0 c1 at 0..1.5; 3: 0->1 c1 (after 2),
  // 4: 1->2 c2 (after 0), 5: 2->0 c0 (after 1) at 1.5..3.
  const Topology topology = duplex_ring(3);
  SECTION("missing contribution") {
    CHECK(verdict(topology, CollectiveKind::kReduceScatter, erased(ring_reduce_scatter(3), 1)) ==
          "NPU 0 ends with chunk 0 holding 2 of 3 contributions (missing)");
  }
  SECTION("duplicated reduce, visible from the counts") {
    Specs specs = routed(ring_reduce_scatter(3));
    specs.push_back({1, 2, TransferKind::kReduce, {0}, {}, 1.5, 3.0, kNoLink});
    CHECK(
        verdict(topology, CollectiveKind::kReduceScatter, specs) ==
        "transfer 6 (NPU 1 -> NPU 2, chunk 0): adds contributions NPU 2 already holds (a contribution counted twice)");
  }
  SECTION("copy in a reduce-scatter") {
    Specs specs = ring_reduce_scatter(3);
    specs[2].kind = TransferKind::kCopy;
    CHECK(verdict(topology, CollectiveKind::kReduceScatter, specs) ==
          "transfer 2 (NPU 2 -> NPU 0, chunk 1): a copy in a reduce-scatter (reduce-scatter moves reduces only)");
  }
  SECTION("race on a reduced slot") {
    Specs specs = ring_all_reduce(3);
    specs[5].deps.clear();  // 2 -> 0 c0 no longer waits for 1 -> 2 c0, which it forwards
    CHECK(
        verdict(topology, CollectiveKind::kAllReduce, specs) ==
        "transfer 5 reads chunk 0 at NPU 2 while transfer 1, which also wrote it, is not among its ancestors (a race)");
  }
}

TEST_CASE("a duplicated reduce the counts cannot see is found by the exact sweep", "[verifier]") {
  // 4-ring reduce-scatter with transfer 0 (0 -> 1, chunk 3) done twice at once: NPU 1 then holds
  // {0, 0, 1}, three contributions of four, which looks fine. Only when the next hop adds NPU 2's
  // does the count reach four with the wrong sum; the sweep names the duplicate, not that hop.
  const Topology topology = duplex_ring(4);
  Specs specs = inserted(routed(ring_reduce_scatter(4)), 1, {0, 1, TransferKind::kReduce, {3}, {}, 0.0, 1.5, kNoLink});
  // Transfer 6 (1 -> 2, chunk 3) forwards what both wrote: it waits for both.
  REQUIRE(specs[6].src == 1);
  REQUIRE(specs[6].chunks == std::vector<ChunkId>{3});
  specs[6].deps = {0, 1};
  CHECK(verdict(topology, CollectiveKind::kReduceScatter, specs) ==
        "transfer 1 (NPU 0 -> NPU 1, chunk 3): adds contributions NPU 1 already holds (a contribution counted twice)");
}

TEST_CASE("a duplicated reduce into a slot no result reads is still found", "[verifier]") {
  // After a correct 4-ring reduce-scatter, NPU 2 holds {1, 2} of chunk 0 as scratch; adding NPU 1's
  // {1} again gives three contributions of four and changes no result. Only exact sets see it.
  const Topology topology = duplex_ring(4);
  Specs specs = ring_reduce_scatter(4);
  specs.push_back({1, 2, TransferKind::kReduce, {0}, {}, 4.5, 6.0});
  CHECK(verdict(topology, CollectiveKind::kReduceScatter, specs) ==
        "transfer 12 (NPU 1 -> NPU 2, chunk 0): adds contributions NPU 2 already holds (a contribution counted twice)");
}

TEST_CASE("messages name NPUs by their ids in the topology file", "[verifier]") {
  Topology topology = duplex_ring(3);
  topology.original_npu_ids = {10, 12, 13};
  CHECK(verdict(topology, CollectiveKind::kAllGather, erased(ring_all_gather(3), 5)) ==
        "NPU 10 ends without chunk 1 (missing)");
  Specs specs = ring_all_gather(3);
  specs[3].deps.clear();
  CHECK(
      verdict(topology, CollectiveKind::kAllGather, specs) ==
      "transfer 3 reads chunk 2 at NPU 10 while transfer 2, which also wrote it, is not among its ancestors (a race)");
}

TEST_CASE("schedule-level problems are reported before any transfer", "[verifier]") {
  const Topology topology = duplex_ring(3);
  CHECK(verdict(topology, build(topology, CollectiveKind::kAllGather, {0, 5}, 1, {})) ==
        "member 1 is NPU id 5, but the topology has 3 NPUs (ids 0 to 2)");
  CHECK(verdict(topology, build(topology, CollectiveKind::kAllGather, {1, 1}, 1, {})) ==
        "NPU 1 is listed twice among the members");
  CHECK(verdict(topology, Schedule()) == "the schedule has no members");
  // Nothing moved: every member lacks the others' chunks.
  CHECK(verdict(topology, build(topology, CollectiveKind::kAllGather, all(3), 1, {})) ==
        "NPU 0 ends without chunk 1 (missing)");
}

namespace {

/// Three NPUs, each linked both ways to the other two.
Topology three_fully_connected() {
  Topology topology(3, {});
  for (NodeId a = 0; a < 3; ++a) {
    for (NodeId b = a + 1; b < 3; ++b) topology.add_duplex(a, b, 0.5, 1.0);
  }
  return topology;
}

/// The reduce-scatter half of a direct all-reduce on three NPUs, all starting at 0 and ending at
/// kHop except the reduce 2 -> 0, which ends at `late_end`. Per owner, the reductions into it.
std::array<std::vector<TransferId>, 3> direct_reductions(Schedule& schedule, double late_end) {
  std::array<std::vector<TransferId>, 3> into;
  for (NodeId i = 0; i < 3; ++i) {
    for (NodeId j = 0; j < 3; ++j) {
      if (i == j) continue;
      const ChunkId chunk[] = {j};
      const double end = i == 2 && j == 0 ? late_end : kHop;
      into[j].push_back(schedule.add(i, j, TransferKind::kReduce, chunk, {}, 0.0, end, kNoLink));
    }
  }
  return into;
}

}  // namespace

TEST_CASE("readers sharing a dependency list still see a writer that came between them", "[verifier]") {
  // Direct all-reduce on 3 fully connected NPUs, where NPU 0's two all-gather sends share one
  // list that omits the reduce 2 -> 0, which lands between the first send and the second. The
  // first send read chunk 0 before that write; the second reads it after and races with it.
  const Topology topology = three_fully_connected();
  Schedule schedule(CollectiveKind::kAllReduce, 3000, all(3), 1, "hand");
  const auto into = direct_reductions(schedule, 4.0);  // the late reduce
  const ChunkId chunk0[] = {0};
  // 1 -> 0, not 2 -> 0; and 0 -> 1, as a one-entry list is stored per row, not shared.
  const std::vector<TransferId> early = {into[0][0], into[1][0]};
  const TransferId first = schedule.add(0, 1, TransferKind::kCopy, chunk0, early, 2.0, 2.0 + kHop, kNoLink);
  schedule.add_sharing_deps(first, 0, 2, TransferKind::kCopy, chunk0, 5.0, 5.0 + kHop, kNoLink);
  for (NodeId j = 1; j < 3; ++j) {
    const ChunkId chunk[] = {j};
    for (NodeId k = 0; k < 3; ++k) {
      if (k != j) schedule.add(j, k, TransferKind::kCopy, chunk, into[j], kHop, 2 * kHop, kNoLink);
    }
  }
  CHECK(verdict(topology, schedule) ==
        "transfer 7 reads chunk 0 at NPU 0 while transfer 4, which also wrote it, is not among its ancestors (a race)");
}

TEST_CASE("a transfer sharing its dependency list may not start before the list is done", "[verifier]") {
  // The survey takes a shared list's latest end once, for the run of transfers that name it; the
  // second of the run starting early must still be caught, at its own id.
  const Topology topology = three_fully_connected();
  for (const double second_start : {kHop, kHop - 0.25}) {
    Schedule schedule(CollectiveKind::kAllReduce, 3000, all(3), 1, "hand");
    const auto into = direct_reductions(schedule, kHop);
    for (NodeId j = 0; j < 3; ++j) {
      const ChunkId chunk[] = {j};
      const NodeId to[] = {(j + 1) % 3, (j + 2) % 3};
      const TransferId first = schedule.add(j, to[0], TransferKind::kCopy, chunk, into[j], kHop, 2 * kHop, kNoLink);
      const double start = j == 1 ? second_start : kHop;
      schedule.add_sharing_deps(first, j, to[1], TransferKind::kCopy, chunk, start, start + kHop, kNoLink);
    }
    if (second_start == kHop) {
      CHECK(verdict(topology, schedule) == "ok");
    } else {
      CHECK(verdict(topology, schedule) == "transfer 9 starts at 1.25 us before its dependency 0 ends at 1.5 us");
    }
  }
}
