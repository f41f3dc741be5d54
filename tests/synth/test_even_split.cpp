// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include <bit>
#include <cmath>

#include "../../src/synth/even_split.hpp"
#include "../support/collectives.hpp"
#include "tenet/synth/synthesizer.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

/// TACOS's GiB/s in tenet's GB/s.
double gib(double gibps) { return gibps * 1073741824.0 / 1e9; }

/// The TACOS test suite's Hypercube4x2x3 (a 3D mesh, 50 GiB/s, 0.5 us) and Mesh2DHetero7x10
/// (x links 16 GiB/s, y links 73 GiB/s, 1.5 us), with the sizes its tests use (3 chunks per NPU).
Topology mesh_4x2x3() {
  return generated({{"kind", "mesh"}, {"dims", {4, 2, 3}}, {"bandwidth_GBps", gib(50)}, {"latency_us", 0.5}});
}
constexpr std::uint64_t kMesh4x2x3Bytes = 3221225424;
Topology hetero_7x10() {
  return generated({{"kind", "mesh"}, {"dims", {7, 10}}, {"bandwidth_GBps", {gib(16), gib(73)}}, {"latency_us", 1.5}});
}
constexpr std::uint64_t kHetero7x10Bytes = 4294967250;

}  // namespace

TEST_CASE("the whole-chunk ingress time is the best split of a member's chunks over its in-links", "[synth]") {
  // A 7x10 corner takes 69c chunks over one 16 GiB/s and one 73 GiB/s link: at c = 3, 37 and 170
  // of them (170 x (1.5 + chunk / 73 GiB/s) = 44612.47 us, TACOS's expected time); at c = 2, 25
  // and 113 (44680.36 us).
  const Topology mesh = hetero_7x10();
  const std::vector<NodeId> members = all_npus(mesh);
  const double bytes = static_cast<double>(kHetero7x10Bytes);
  CHECK_THAT(synth::whole_chunk_ingress_us(mesh, members, CollectiveKind::kAllGather, bytes, 3),
             Catch::Matchers::WithinRel(44612.47, 1e-6));
  CHECK_THAT(synth::whole_chunk_ingress_us(mesh, members, CollectiveKind::kAllGather, bytes, 2),
             Catch::Matchers::WithinRel(44680.36, 1e-6));
  // An all-reduce pays it out of and into the member.
  CHECK_THAT(synth::whole_chunk_ingress_us(mesh, members, CollectiveKind::kAllReduce, bytes, 3),
             Catch::Matchers::WithinRel(2 * 44612.47, 1e-6));
}

TEST_CASE("the even-split chunk count is the one whose whole chunks split the ingress best", "[synth]") {
  const Topology mesh = mesh_4x2x3();
  const std::vector<NodeId> members = all_npus(mesh);
  const double bytes = static_cast<double>(kMesh4x2x3Bytes);
  // Corners take 23c chunks over 3 in-links: c = 3 splits them 23/23/23.
  CHECK(synth::even_split_chunk_count(mesh, members, CollectiveKind::kAllGather, bytes, 64) == 3u);
  CHECK(synth::even_split_chunk_count(hetero_7x10(), all_npus(hetero_7x10()), CollectiveKind::kAllGather,
                                      static_cast<double>(kHetero7x10Bytes), 64) == 3u);
  // Below that count, the best of those allowed.
  CHECK(synth::even_split_chunk_count(mesh, members, CollectiveKind::kAllGather, bytes, 2) == 1u);
  // At a few KiB the alphas decide: one chunk.
  CHECK(synth::even_split_chunk_count(mesh, members, CollectiveKind::kAllGather, 4096.0, 64) == 1u);
  // On a torus every count whose chunks the 4 in-links split evenly ties; the smallest is kept.
  const Topology torus = shipped("torus-4x4");
  const std::optional<std::uint32_t> torus_count =
      synth::even_split_chunk_count(torus, all_npus(torus), CollectiveKind::kAllGather, 1 << 30, 64);
  REQUIRE(torus_count);
  CHECK(std::has_single_bit(*torus_count));
  CHECK_FALSE(synth::even_split_chunk_count(shipped("switch-8"), all_npus(shipped("switch-8")),
                                            CollectiveKind::kAllGather, 1 << 30, 64));
}

TEST_CASE("automatic chunk counts reach the TACOS suite's expected times off the powers of two", "[synth]") {
  SynthOptions options;
  options.auto_chunks = true;
  // Hypercube4x2x3: 19178.17 us expected; the best power of two gives 19280.25.
  const Topology mesh = mesh_4x2x3();
  const SynthResult result = synthesize(mesh, make_collective(CollectiveKind::kAllGather, kMesh4x2x3Bytes), options);
  CHECK(result.schedule.chunks_per_member() == 3);
  CHECK(result.time_us <= 19178.17);
  const VerifyResult verdict = verify_schedule(mesh, result.schedule);
  INFO(verdict.error);
  CHECK(verdict.ok);
}

TEST_CASE("the last chunks go over the links that land them first", "[synth]") {
  // A 7x10 corner's slow x link took a 38th chunk that its y link would have landed 683 us
  // sooner (45295.09 us); left idle it ends at the whole-chunk ingress time, TACOS's expected one.
  const Topology mesh = hetero_7x10();
  const SynthResult result =
      synthesize(mesh, make_collective(CollectiveKind::kAllGather, kHetero7x10Bytes, 3), SynthOptions{});
  CHECK_THAT(result.time_us, Catch::Matchers::WithinRel(44612.47, 1e-6));
  const VerifyResult verdict = verify_schedule(mesh, result.schedule);
  INFO(verdict.error);
  CHECK(verdict.ok);
  // --policy tacos is the paper's rule, without it.
  SynthOptions paper;
  paper.policy = SynthPolicy::kTacos;
  const SynthResult tacos = synthesize(mesh, make_collective(CollectiveKind::kAllGather, kHetero7x10Bytes, 3), paper);
  CHECK_THAT(tacos.time_us, Catch::Matchers::WithinRel(45295.09, 1e-6));
}
