// SPDX-License-Identifier: MIT
// The verifier's parallel slices: large single-chunk schedules are replayed in slices of the
// chunks, and a problem any slice sees is reported exactly as a single pass would report it.

#include "../support/catch.hpp"

#include <string>

#include <nlohmann/json.hpp>

#include "tenet/synth/synthesizer.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/verify/verifier.hpp"

#include "../support/collectives.hpp"

using namespace tenet;

namespace {

/// A 17x17 mesh: its collectives have more transfers than the slicing threshold (2^16).
Topology mesh17() {
  return generate_topology(nlohmann::json{{"kind", "mesh"}, {"dims", {17, 17}}}, LinkDefaults{}, "mesh17", "");
}

SynthResult synthesized(const Topology& topology, CollectiveKind kind) {
  Collective collective;
  collective.kind = kind;
  collective.size_bytes = 1 << 24;
  // Chunk by chunk, so the schedule is large enough to be replayed in slices.
  return synthesize(topology, collective, tenet::testing::chunk_by_chunk());
}

/// The schedule with the dependencies of `dropped` removed; everything else as it was.
Schedule without_deps(const Schedule& schedule, TransferId dropped) {
  Schedule copy(schedule.collective(), schedule.size_bytes(), schedule.members(), schedule.chunks_per_member(), "copy");
  for (TransferId id = 0; id < schedule.size(); ++id) {
    const Transfer transfer = schedule.transfer(id);
    copy.add(transfer.src, transfer.dst, transfer.kind, schedule.chunks_of(transfer),
             id == dropped ? std::span<const TransferId>{} : schedule.deps_of(transfer), transfer.start_us,
             transfer.end_us, transfer.link);
  }
  return copy;
}

/// The last transfer that depends on exactly one other.
TransferId last_with_one_dep(const Schedule& schedule) {
  for (TransferId id = static_cast<TransferId>(schedule.size()); id-- > 0;) {
    if (schedule.deps_of(id).size() == 1) return id;
  }
  FAIL("no transfer with one dependency");
  return 0;
}

}  // namespace

TEST_CASE("large synthesized schedules pass the sliced replay with every transfer checked", "[verify]") {
  const Topology mesh = mesh17();
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const SynthResult result = synthesized(mesh, kind);
    REQUIRE(result.schedule.size() > (1u << 16));
    const VerifyResult verdict = verify_schedule(mesh, result.schedule);
    INFO(verdict.error);
    CHECK(verdict.ok);
    CHECK(verdict.transfers_checked == result.schedule.size());
    CHECK(verdict.redundant_copies == 0);
  }
}

TEST_CASE("a race in one slice is reported as the single pass reports it", "[verify]") {
  const Topology mesh = mesh17();
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const SynthResult result = synthesized(mesh, kind);
    const TransferId broken = last_with_one_dep(result.schedule);
    const TransferId writer = result.schedule.deps_of(broken)[0];
    const VerifyResult verdict = verify_schedule(mesh, without_deps(result.schedule, broken));
    REQUIRE_FALSE(verdict.ok);
    INFO(verdict.error);
    const std::string reader = "transfer " + std::to_string(broken) + " reads chunk";
    CHECK(verdict.error.rfind(reader, 0) == 0);
    CHECK(verdict.error.find("while transfer " + std::to_string(writer) + ", which also wrote it") !=
          std::string::npos);
    CHECK(verdict.error.find("(a race)") != std::string::npos);
  }
}
