// SPDX-License-Identifier: MIT
#pragma once
// The writer's layout between a Schedule and a Plan. Private to src/mscclpp.
//
// writer_layout.cpp replays the schedule, decides where every chunk is read and written, cuts the
// transfers between each pair of ranks into lanes and segments (connections), pairs a rank's
// receiving connection with the sending one it feeds into threadblocks, and finds the orderings
// between threadblocks of one rank. writer_emit.cpp turns that into ops, channels, remote
// buffers and semaphores.

#include <cstdint>
#include <string>
#include <vector>

#include "plan_model.hpp"
#include "tenet/mscclpp/mscclpp_plan.hpp"
#include "tenet/schedule/schedule.hpp"

namespace tenet::mscclpp_detail {

struct Loc {
  BufferType type = BufferType::kInput;
  int index = -1;  ///< -1: nowhere
  bool operator==(const Loc&) const = default;
};

/// A run of chunks a transfer moves that is contiguous in every place it touches.
struct Run {
  Loc read;     ///< on the sender
  Loc landing;  ///< on the receiver: scratch (packet chunks with LL), or index -1 when put in place
  Loc operand;  ///< the receiver's own value a reduction adds to
  Loc write;    ///< the receiver's working place
  int count = 0;
};

enum class GroupKind { kInit, kSend, kRecv };

/// The ops of one event on one rank: the copies before everything, a transfer's send or its receive.
struct Group {
  GroupKind kind = GroupKind::kInit;
  int rank = 0;
  TransferId transfer = 0;
  std::int64_t event = -1;
  int block = -1;          ///< threadblock on its rank
  std::vector<int> after;  ///< groups of other threadblocks of the rank that must come first
};

/// The transfers of one lane segment from `src` to `dst`: one channel pair, used in order.
struct Connection {
  int src = 0;
  int dst = 0;
  int lane = 0;
  int segment = 0;
  bool port = false;
  std::vector<TransferId> transfers;
};

struct LayoutBlock {
  int send = -1;            ///< connection it sends on
  int recv = -1;            ///< connection it receives on
  std::vector<int> groups;  ///< in event order
};

struct Layout {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  bool in_place = false;
  bool ll = false;
  int ranks = 0;
  int per_rank = 1;  ///< chunks per member
  int input_chunks = 1;
  int output_chunks = 1;
  std::vector<int> scratch_chunks;                            ///< per rank
  std::vector<std::vector<Run>> runs;                         ///< per transfer
  std::vector<std::vector<std::pair<Loc, Loc>>> init_copies;  ///< per rank: (from, to) of one chunk each
  std::vector<Group> groups;
  std::vector<int> send_group;  ///< per transfer
  std::vector<int> recv_group;
  std::vector<Connection> connections;
  std::vector<int> connection_of;  ///< per transfer
  std::vector<int> staging;        ///< per transfer, LL port sends: first packet chunk of the sender's staging area
  std::vector<std::vector<LayoutBlock>> blocks;  ///< per rank, in order
};

/// Lays the schedule out. `segment_cap` limits the transfers of one connection (0: no limit);
/// `pair_all` pairs every sending connection with a receiving one, related or not (fewer blocks);
/// `rank_of` maps NPU ids to ranks (-1 for non-members), `node_of` ranks to nodes. Throws
/// InputError for what cannot be expressed.
Layout lay_out(const Schedule& schedule, const std::vector<int>& rank_of, const std::vector<std::uint32_t>& node_of,
               const MscclppOptions& options, int segment_cap, bool pair_all);

/// The plan's ranks, threadblocks and ops for a layout.
Plan emit_plan(const Layout& layout, const MscclppOptions& options, const std::string& name);

}  // namespace tenet::mscclpp_detail
