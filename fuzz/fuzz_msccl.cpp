// SPDX-License-Identifier: MIT
// libFuzzer harness for the MSCCL XML reader: what `tenet verify -t T x.xml` runs
// (verify_msccl_xml: lexical rules, pugixml, load rules, execution) and what `tenet simulate`
// runs (parse_msccl_xml, msccl_to_schedule, the simulator). A bad file must come back as a
// verdict or an InputError; another exception, a sanitizer report, a hang or running out of
// memory is a bug. Ranks must map onto the topology's NPUs before the file is executed, so each
// input runs on a shipped network its ranks fit (the 3-NPU ring otherwise, which exercises the
// mismatch).

#include <cstddef>
#include <cstdint>
#include <string>

#include "tenet/common/error.hpp"
#include "tenet/msccl/msccl.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/topology_json.hpp"

namespace {

/// Whether every rank has an NPU: by tenet's rank_to_npu comment (topology-file NPU ids) when the
/// file has one, else rank r is NPU r of all of them.
bool ranks_fit(const tenet::MscclProgram& program, const tenet::Topology& network) {
  if (program.rank_to_npu.empty()) return static_cast<std::int64_t>(network.npu_count()) == program.ngpus;
  for (const tenet::NodeId file_id : program.rank_to_npu) {
    bool found = false;
    for (tenet::NodeId npu = 0; npu < network.npu_count() && !found; ++npu)
      found = network.original_npu_id(npu) == file_id;
    if (!found) return false;
  }
  return true;
}

const tenet::Topology& topology_for(const tenet::MscclProgram& program) {
  static const tenet::Topology networks[] = {
      tenet::load_topology(TENET_SOURCE_DIR "/tests/cli/msccl/ring-3.json"),
      tenet::load_topology(TENET_SOURCE_DIR "/tests/cli/msccl/pair.json"),
      tenet::load_topology(TENET_SOURCE_DIR "/topologies/mesh-4x4-failed-7-9.json"),
      tenet::load_topology(TENET_SOURCE_DIR "/topologies/torus-4x4.json"),
      tenet::load_topology(TENET_SOURCE_DIR "/topologies/two-level-switch-8x4.json"),
  };
  for (const tenet::Topology& network : networks) {
    if (ranks_fit(program, network)) return network;
  }
  return networks[0];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tenet::MscclProgram program;
  try {
    program = tenet::parse_msccl_xml(text, "fuzz.xml");
  } catch (const tenet::InputError&) {
    return 0;
  }
  const tenet::Topology& topology = topology_for(program);
  tenet::verify_msccl_xml(text, &topology);
  try {
    const tenet::Schedule schedule =
        tenet::msccl_to_schedule(program, topology, program.size_bytes.value_or(1 << 20), "fuzz.xml");
    tenet::simulate(topology, schedule);
  } catch (const tenet::InputError&) {
  }
  return 0;
}
