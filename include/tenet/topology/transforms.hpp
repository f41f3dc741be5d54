// SPDX-License-Identifier: MIT
#pragma once
// Transforms that derive one topology from another. Each returns a new Topology and never
// mutates its input; NPU renumbering keeps Topology::original_npu_ids so every output can name
// NPUs by the ids the user wrote.

#include <string>
#include <utility>
#include <vector>

#include "tenet/topology/topology.hpp"

namespace tenet {

/// What failed, in the numbering of the topology it is applied to.
struct FailureSet {
  std::vector<NodeId> npus;                      ///< NPUs removed with all their links
  std::vector<std::pair<NodeId, NodeId>> links;  ///< directed links removed (src, dst)
};

/// Removes failed NPUs (with their links) and links, renumbers the surviving NPUs to 0..k-1 in
/// their original order (switches keep their names; a switch left with no link at all is
/// dropped), and keeps the map back to the original ids (composed when the input was already
/// renumbered). Surviving links keep their attributes and relative order. Clears the grid layout
/// when anything was removed; returns the input unchanged when nothing was.
/// Throws InputError (with `source`) listing every bad entry at `pointer`/npus/I or
/// `pointer`/links/I (an id that does not exist, a link that does not exist, an entry listed
/// twice); then at `pointer`/npus when every NPU failed; then at `pointer` when a surviving NPU
/// cannot reach another one (the message names such a pair by original ids).
Topology apply_failures(const Topology& topology, const FailureSet& failures, const std::string& source,
                        const std::string& pointer);

/// Unwinds every switch into point-to-point links (TACOS Sec. IV-G). A group is a connected
/// component of the switch-only subgraph (links in either direction). Its NPUs (any NPU with a
/// link to or from one of its switches) are put in depth-first order: a preorder DFS from the
/// group's lowest-numbered switch, children in link-id order, listing at each switch the NPUs
/// attached there and not listed yet, ascending id (on a tree, the Patarasuk-Yuan contention-free
/// ring). NPU i gets links to the next `degree` NPUs in that cyclic order, the degree capped at
/// members - 1 (degree 1 with `bidirectional_ring` and more than 2 members adds the reverse
/// links, giving a bidirectional ring). Each new link follows a fewest-hop path through the
/// group's switches (among equal ones, link by link back from the destination, the physical link
/// used least so far, then the lower id: parallel spines share the load), pays the sum of the
/// latencies on it, and shares the bandwidth of each physical link it crosses equally with the
/// other new links crossing it: for one switch that is the TACOS rule of 1/degree of the port
/// bandwidth. A pair with no path inside the group (one-way switch links) gets no link.
/// A new link parallel to an existing NPU-NPU link is merged into it (bandwidths add, the larger
/// latency is kept). The result has no switches; NPU ids, original ids, existing NPU-NPU links
/// (first, in their order), name, description and layout are kept, then the new links follow
/// group by group in ring order. Returns the topology unchanged when it has no switches.
/// O(links x path length); nothing is p x p. Throws InputError when degree < 1. `applied_degree`,
/// when given, receives the largest degree any group got: `degree` capped at its members - 1.
Topology unwind_switches(const Topology& topology, int degree, bool bidirectional_ring,
                         std::uint32_t* applied_degree = nullptr);

/// unwind_switches with other links: NPU i of a group's order gets links to the NPUs at offsets
/// j * radix^m ahead of it (j = 1 .. radix - 1, every m with an offset below the group's size),
/// so that any member reaches any other in ceil(log_radix members) hops, one per nonzero digit
/// of their distance, over (radix - 1) * ceil(log_radix members) links of its own (at most).
/// Paths, pricing and merging as unwind_switches. Throws InputError when radix < 2.
/// `links_per_npu`, when given, receives the largest number of links a member got.
Topology unwind_switches_in_radix(const Topology& topology, std::uint32_t radix,
                                  std::uint32_t* links_per_npu = nullptr);

/// Parses a member list such as "0,1,4-7" (original NPU ids, inclusive ranges, whitespace
/// around entries and dashes allowed) into sorted current NPU ids. Throws InputError with
/// `option` as the where for bad syntax, switch names, backwards ranges, unknown or failed NPUs,
/// duplicates (also through overlapping ranges) and fewer than 2 members.
std::vector<NodeId> parse_members(const std::string& text, const Topology& topology, const std::string& option);

/// True when every NPU can reach every other NPU over directed links (through switches too).
/// Otherwise fills `from`/`to` with one NPU pair (current ids) where `to` cannot be reached.
bool npus_strongly_connected(const Topology& topology, NodeId* from, NodeId* to);

}  // namespace tenet
