// SPDX-License-Identifier: MIT
#pragma once
// The oracle: every schedule tenet emits passes through here before anyone sees it.
//
// Symbolic replay. Every (NPU, chunk) slot holds a set of member contributions, kept as a count
// and a 64-bit sum of per-member random keys plus its latest writer (20 bytes whatever the member
// count; two different sets collide with probability 2^-64); an all-gather slot is just its
// writer (4 bytes). An exact bitset pass per chunk confirms "counted twice" when it is cheap and
// whenever the fast replay fails, so the message names the transfer that duplicated. All-gather starts with the owner's slot
// holding every contribution ("the chunk") and everything else empty; reduce-scatter and all-reduce
// start with each member holding its own contribution to every chunk. Transfers are replayed in
// planned time order (a transfer ending at t is applied before one starting at t reads): a copy
// sends src's set and overwrites dst's at its end, a reduce adds src's set to dst's and fails when
// the two share a contribution. The postcondition: all-gather and all-reduce, every member holds
// every chunk complete; reduce-scatter, every chunk's owner holds it complete.
//
// Checks, each reported with the first offending transfer or slot:
// - structure: NPU ids exist, src != dst, chunk ids < chunk_count, at least one chunk, deps point
//   backwards, start <= end, times finite and >= 0, planned links exist and join src to dst,
//   reduce-scatter/all-gather use only their own kind (all-gather: copies only);
// - causality: a transfer starts no earlier than each dependency ends; the slot it reads is not
//   empty ("read before it was written"); every transfer that wrote into that slot since it was
//   last overwritten by a copy (that copy included) is an ancestor of the reader in the DAG
//   (otherwise another timing, in the simulator or on GPUs, could reorder them: a race). Ancestry is
//   searched backwards from the reader, pruned at transfers that ended before the writer did;
//   almost always the writer is a direct dependency and the search stops at once;
// - links: when every transfer names its planned link, no link carries two transfers at once and
//   each lasts at least alpha + bytes / bandwidth of its link;
// - the postcondition above: missing contributions, contributions counted twice.

#include <cstdint>
#include <string>

#include "tenet/schedule/schedule.hpp"
#include "tenet/topology/topology.hpp"

namespace tenet {

struct VerifyResult {
  bool ok = true;
  /// One line naming the first problem, e.g. "transfer 17 (NPU 3 -> NPU 4, chunk 5): NPU 3 does
  /// not hold chunk 5 when the transfer starts at 1.5 us (read before it was written)".
  std::string error;
  std::uint64_t transfers_checked = 0;
  /// Copies that delivered a chunk its destination already held in full: harmless, but wasted
  /// bandwidth; reported so producers can be held to zero.
  std::uint64_t redundant_copies = 0;
};

/// Verifies a schedule on the topology it was made for (the same NPU numbering). Never throws on
/// a bad schedule: the problem is in the result. Memory: O(NPUs touched x chunks) slots.
VerifyResult verify_schedule(const Topology& topology, const Schedule& schedule);

}  // namespace tenet
