// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include <vector>

#include "tenet/msccl/msccl.hpp"
#include "tenet/sim/runtime_routes.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/routing.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;

namespace {

LinkId link_between(const Topology& topology, NodeId src, NodeId dst) {
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    if (topology.link(id).src == src && topology.link(id).dst == dst) return id;
  }
  FAIL("no link");
  return kNoLink;
}

}  // namespace

TEST_CASE("a schedule planned on routes of its own is timed on the runtime's once it is a file", "[sim][msccl]") {
  // Two NPUs joined through either of two switches. The schedule sends half of each NPU's data
  // through each switch; the runtime routes a pair of NPUs one way only, so the halves share it.
  const Topology topology = parse_topology(R"({"npus": 2, "switches": ["s0", "s1"],
      "defaults": {"latency_us": 1, "bandwidth_GBps": 10},
      "links": [{"src": 0, "dst": "s0"}, {"src": "s0", "dst": 1}, {"src": 0, "dst": "s1"}, {"src": "s1", "dst": 1}]})",
                                           "two-paths");
  const NodeId s0 = 2;
  const NodeId s1 = 3;
  const std::uint64_t size = 64 << 20;
  Schedule schedule(CollectiveKind::kAllGather, size, {0, 1}, 2, "two paths");
  const double alone_us = 2.0 + static_cast<double>(schedule.chunk_bytes()) / 10e3;
  for (NodeId from : {NodeId{0}, NodeId{1}}) {
    const NodeId to = 1 - from;
    ChunkId chunk = from * 2;
    for (NodeId via : {s0, s1}) {
      const std::vector<LinkId> route = {link_between(topology, from, via), link_between(topology, via, to)};
      const RouteId id = schedule.add_route(route);
      schedule.add(from, to, TransferKind::kCopy, {&chunk, 1}, {}, 0.0, alone_us, Schedule::on_route(id));
      ++chunk;
    }
  }
  const VerifyResult verdict = verify_schedule(topology, schedule);
  INFO(verdict.error);
  REQUIRE(verdict.ok);
  CHECK(simulate(topology, schedule).time_us == Approx(alone_us).epsilon(1e-9));

  // One transfer of each direction is off the runtime's route.
  CHECK(transfers_off_runtime_routes(schedule, topology) == 2);
  const Schedule rerouted = on_runtime_routes(schedule, topology);
  CHECK(rerouted.route_count() == 0);
  CHECK(transfers_off_runtime_routes(rerouted, topology) == 0);
  const double shared_us = 2.0 + 2.0 * static_cast<double>(schedule.chunk_bytes()) / 10e3;
  CHECK(rerouted.planned_time_us() == Approx(shared_us).epsilon(1e-9));
  CHECK(simulate(topology, rerouted).time_us == Approx(shared_us).epsilon(1e-9));

  // The file's estimate and the file itself run on the runtime's routes.
  CHECK(msccl_expected_time_us(schedule, topology) >= shared_us * (1 - 1e-9));
  const MscclWritten written = write_msccl_xml(schedule, topology, {});
  CHECK(written.off_route_transfers == 2);
  CHECK(written.runtime_routes_us == Approx(shared_us).epsilon(1e-9));
  CHECK(written.time_us >= shared_us * (1 - 1e-6));
  CHECK(written.time_us <= shared_us * 1.05);
  // A schedule already on the runtime's routes is left as it is.
  CHECK(write_msccl_xml(rerouted, topology, {}).off_route_transfers == 0);
}
