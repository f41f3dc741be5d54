// SPDX-License-Identifier: MIT
// libFuzzer harness for the schedule reader (parse_schedule), followed by what `tenet verify` and
// `tenet simulate` do with a schedule that loads. Any input must either load or be refused with
// an InputError; another exception, a sanitizer report, a hang or running out of memory is a bug.
// A schedule's header must match its topology (NPU count, ids, fingerprint) before its transfers
// are stored, so every input is read against two shipped networks, one point-to-point and one
// switched; seeds made for either get past the header.

#include <cstddef>
#include <cstdint>
#include <string>

#include "tenet/common/error.hpp"
#include "tenet/io/schedule_json.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/topology_json.hpp"
#include "tenet/verify/verifier.hpp"

namespace {

const tenet::Topology& topology(int which) {
  static const tenet::Topology torus = tenet::load_topology(TENET_SOURCE_DIR "/topologies/torus-4x4.json");
  static const tenet::Topology switched =
      tenet::load_topology(TENET_SOURCE_DIR "/topologies/two-level-switch-8x4.json");
  return which == 0 ? torus : switched;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (int which = 0; which < 2; ++which) {
    try {
      const tenet::Schedule schedule = tenet::parse_schedule(text, "fuzz.json", topology(which));
      tenet::verify_schedule(topology(which), schedule);
      tenet::simulate(topology(which), schedule);
    } catch (const tenet::InputError&) {
    }
  }
  return 0;
}
