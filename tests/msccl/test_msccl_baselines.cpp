// SPDX-License-Identifier: MIT
// The classic baselines written as MSCCL XML and executed: blocks of several chunks, exchanges
// between pairs, peers that are not neighbours.

#include "../support/catch.hpp"
#include "../support/sanitizers.hpp"

#include <string>

#include <nlohmann/json.hpp>

#include "tenet/baselines/baseline.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/topology/topology_json.hpp"

using namespace tenet;
using namespace tenet::testing;

TEST_CASE("Baselines on the small shipped topologies run as MSCCL XML", "[msccl][baseline]") {
  const char* const topologies[] = {
      "torus-4x4",     "mesh-3x3",   "mesh-4x4-failed-7-9", "ring-fc-switch-2x4x2", "switch-8", "two-level-switch-8x4",
      "dragonfly-4x5", "tree-2x2x4", "hypercube-6"};
  for (const char* name : topologies) {
    const Topology topology = load_topology(std::string(TENET_SOURCE_DIR) + "/topologies/" + name + ".json");
    if (!swept(topology.npu_count(), topology.name)) continue;
    // The 64-rank files of some baselines hold 3,000 steps per rank: there one case per
    // algorithm, the all-reduce (both phases in one file), without the (vector-clock) race check,
    // keeps the test fast (8.6 of its 11.6 s went to the 64 ranks with every collective).
    const bool large = topology.npu_count() > 32;
    // Under the sanitizers one chunking per algorithm and collective, alternating.
    std::size_t pick = 0;
    for (const char* algorithm : {"ring", "swing", "bucket", "rhd", "direct", "swing-latency", "circulant"}) {
      for (CollectiveKind kind :
           {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllReduce}) {
        for (std::uint32_t chunks : {1u, 3u}) {
          if (large && (chunks == 3 || kind != CollectiveKind::kAllReduce)) continue;
          const std::size_t case_number = pick++;
          if (kSanitized && case_number / 2 % 2 != case_number % 2) continue;
          Collective collective;
          collective.kind = kind;
          collective.size_bytes = 1 << 20;
          collective.chunks_per_npu = chunks;
          const BaselineResult baseline = generate_baseline(algorithm, topology, collective);
          if (!baseline.applicable) continue;
          MscclWriteOptions options;
          options.in_place = chunks == 1;
          options.channels = 1;  // the layout's correctness is the point here, not its choice of channels
          INFO(name << " " << algorithm << " " << collective_name(kind) << ", " << chunks << " chunk(s)");
          std::string xml;
          REQUIRE_NOTHROW(xml = schedule_to_msccl_xml(baseline.schedule, topology, options));
          const MscclVerifyResult result = verify_msccl_xml(xml, &topology, !large);
          INFO(result.error);
          CHECK(result.ok);
        }
      }
    }
  }
}

TEST_CASE("An all-to-all past 64 ranks shares a threadblock per peer", "[msccl][baseline]") {
  // Direct's all-reduce on a 72-GPU switch (an NVL72-style domain), 1 MiB: a send and a receive
  // threadblock per peer, 141 of them awaited by others where a dependency can name only tbs
  // 0..127, so no file could be written (neither direct's nor the synthesized schedule, which is
  // direct's there). Each peer's sends and receives now share one, and the file runs as planned.
  const Topology topology = generate_topology({{"kind", "switch"}, {"npus", 72}}, LinkDefaults{}, "t", "");
  Collective collective;
  collective.kind = CollectiveKind::kAllReduce;
  collective.size_bytes = 1 << 20;
  const BaselineResult direct = generate_baseline("direct", topology, collective);
  REQUIRE(direct.applicable);
  MscclWritten written;
  REQUIRE_NOTHROW(written = write_msccl_xml(direct.schedule, topology, MscclWriteOptions{}));
  CHECK(written.peer_threadblocks);
  const MscclVerifyResult result = verify_msccl_xml(written.text, &topology, false);
  INFO(result.error);
  CHECK(result.ok);
  const double schedule_us = simulate(topology, direct.schedule).time_us;
  CHECK(written.time_us <= schedule_us * (1 + 1e-9));
}

TEST_CASE("Data that several sends forward is not fused into one of them", "[msccl][baseline]") {
  // Direct's all-reduce on a 4x4x8 torus (routed, up to 8 hops), 4 KiB: a threadblock per peer,
  // and the last reduction of each rank's chunk was fused with one of the 127 sends of its result
  // into an rrcs step, which ends only once that send has crossed: the other 126 sends, waiting
  // for the step, started 5 to 8 hops late (23.0 us against the schedule's 16.0).
  if (kSanitized) return;  // 32,512 transfers laid out and executed: 1 s in Release, far more under ASan
  const Topology topology = generate_topology({{"kind", "torus"}, {"dims", {4, 4, 8}}}, LinkDefaults{}, "t", "");
  Collective collective;
  collective.kind = CollectiveKind::kAllReduce;
  collective.size_bytes = 4096;
  const BaselineResult direct = generate_baseline("direct", topology, collective);
  REQUIRE(direct.applicable);
  MscclWritten written;
  REQUIRE_NOTHROW(written = write_msccl_xml(direct.schedule, topology, MscclWriteOptions{}));
  const double schedule_us = simulate(topology, direct.schedule).time_us;
  CHECK(written.time_us <= schedule_us * (1 + 1e-9));
}

TEST_CASE("The quick checks see ranks with more peers than threadblocks", "[msccl][baseline]") {
  Collective collective;
  collective.kind = CollectiveKind::kAllGather;
  collective.size_bytes = 4096;
  // 63 peers each way on 64 NPUs: 126 threadblocks, within the 128 a dependency can name; 71 each
  // way on 72 NPUs: 142, which only sharing them per peer brings within it (write_msccl_xml);
  // 217 on 218 NPUs: past the 216 threadblocks of a rank whatever they share.
  for (const int npus : {64, 72, 218}) {
    INFO(npus << " NPUs");
    const Topology topology = generate_topology({{"kind", "switch"}, {"npus", npus}}, LinkDefaults{}, "t", "");
    const BaselineResult direct = generate_baseline("direct", topology, collective);
    REQUIRE(direct.applicable);
    CHECK(msccl_threadblocks_surely_fit(direct.schedule) == (npus == 64));
    CHECK(msccl_steps_fit(direct.schedule) == (npus != 218));
  }
}
