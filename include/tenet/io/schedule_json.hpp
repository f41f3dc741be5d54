// SPDX-License-Identifier: MIT
#pragma once
// The schedule file (`tenet synth -o x.json`), read back by every other command.
//
// {
//   "format": "tenet-schedule", "version": 1,
//   "algorithm": "synth", "collective": "allreduce", "size_bytes": 67108864,
//   "chunks_per_member": 1, "members": [0, 1, 2, 3],       // current NPU ids
//   "npus": 4, "npu_ids_in_topology_file": [0, 1, 2, 3],   // original ids (after failures)
//   "topology": "mesh-2x2", "topology_fingerprint": "0123456789abcdef",   // Topology::fingerprint
//   "planned_time_us": 123.4, "notes": [],
//   "transfers": [
//     {"id": 0, "src": 0, "dst": 1, "kind": "copy", "chunks": [0], "deps": [],
//      "start_us": 0.0, "end_us": 1.5, "link": 0},           // "link" only when planned on one
//     ...
//   ]
// }
// One transfer per line, so large schedules stay greppable and diffable.

#include <ostream>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

/// The schedule as text in the format above.
std::string schedule_to_text(const Schedule& schedule, const Topology& topology);
/// The same text, streamed in pieces of about 1 MiB: writing a file this way (with
/// write_file_atomically's streaming overload) never holds the whole text (~128 bytes per transfer).
void write_schedule_text(std::ostream& out, const Schedule& schedule, const Topology& topology);

/// Parses a schedule file and checks it against the topology it will be used with (NPU count,
/// ids, fingerprint, links, chunk ids, dependency order). Throws InputError with the JSON pointer of every
/// problem.
Schedule parse_schedule(const std::string& text, const std::string& source, const Topology& topology);

Schedule load_schedule(const std::string& path, const Topology& topology);

}  // namespace tenet
