// SPDX-License-Identifier: MIT
// Recursive halving-doubling (Rabenseifner): reduce-scatter by recursive halving, all-gather by
// recursive doubling, all-reduce = the one then the other.
//
// Follows Swing (De Sensi et al.) Sec. 2.3.3 "Bandwidth-Optimal Recursive Doubling" (the
// Rabenseifner algorithm of Thakur, Rabenseifner & Gropp, ref. [43] there) and TACOS Sec. V-A /
// Fig. 5. The vector is cut in p blocks. Reduce-scatter: in step k = 0..log2(p)-1 member r
// exchanges with r XOR 2^k, sending the half of the blocks it still holds that the peer keeps
// (those whose index agrees with the peer's in bits 0..k) and reducing the half it keeps, so the
// data halves and the distance doubles at each step; member r ends with block r. All-gather is
// the same pattern reversed (distance p/2 first, data doubling). On a fully connected network with
// p a power of two the time is sum over k = 1..log2 p of alpha + (n / 2^k) / B per phase.
//
// Non-power-of-two p (Swing Sec. 2.3.2/2.3.3 "extra steps"; the pairing of ref. [43]): let
// p' = 2^floor(log2 p) and r = p - p'. Among the first 2r members, each even one (2i, "extra")
// pairs with the odd one after it (2i+1, its "partner"); the partners and the members 2r..p-1 are
// the p' active members, and active member i stands for the group of blocks {2i, 2i+1} (i < r) or
// {i + r} (i >= r), so the power-of-two algorithm runs over p' groups.
// - reduce-scatter: each extra first reduces into its partner every block but its own; the
//   actives halve over the groups; each partner finally reduces the extra's block (which then
//   holds every contribution except the extra's own, already there) into the extra.
// - all-gather: each extra first copies its block to its partner; the actives double over the
//   groups; each partner finally copies every block but the extra's own to the extra.
// - all-reduce: each extra reduces its whole vector into its partner, the actives run halving and
//   doubling, each partner copies the whole result back (Swing Sec. 2.3.2's description).
// The extra steps cost two alphas and up to 2n/B more; the chunk lists say which blocks move.

#include <bit>

#include "builder.hpp"

namespace tenet::baselines {
namespace {

class Rhd {
 public:
  Rhd(ScheduleBuilder& builder)
      : builder_(builder),
        p_(builder.member_count()),
        active_(std::bit_floor(p_)),
        extras_(p_ - active_),
        last_(builder.topology().npu_count()) {}

  void run(CollectiveKind kind) {
    const std::uint32_t all = p_;
    switch (kind) {
      case CollectiveKind::kReduceScatter:
        for (std::uint32_t i = 0; i < extras_; ++i) step_add(2 * i, 2 * i + 1, TransferKind::kReduce, all_but(2 * i));
        flush();
        halving();
        for (std::uint32_t i = 0; i < extras_; ++i) step_add(2 * i + 1, 2 * i, TransferKind::kReduce, {2 * i});
        flush();
        break;
      case CollectiveKind::kAllGather:
        for (std::uint32_t i = 0; i < extras_; ++i) step_add(2 * i, 2 * i + 1, TransferKind::kCopy, {2 * i});
        flush();
        doubling();
        for (std::uint32_t i = 0; i < extras_; ++i) step_add(2 * i + 1, 2 * i, TransferKind::kCopy, all_but(2 * i));
        flush();
        break;
      case CollectiveKind::kAllReduce:
        for (std::uint32_t i = 0; i < extras_; ++i) {
          step_add(2 * i, 2 * i + 1, TransferKind::kReduce, chunk_range(0, all));
        }
        flush();
        halving();
        doubling();
        for (std::uint32_t i = 0; i < extras_; ++i) {
          step_add(2 * i + 1, 2 * i, TransferKind::kCopy, chunk_range(0, all));
        }
        flush();
        break;
    }
  }

 private:
  /// The member index active member `i` runs as.
  std::uint32_t rank_of(std::uint32_t i) const { return i < extras_ ? 2 * i + 1 : i + extras_; }
  /// First block of group g (groups are contiguous: g < r holds two blocks, the others one).
  std::uint32_t group_start(std::uint32_t g) const { return g < extras_ ? 2 * g : g + extras_; }

  /// The blocks of the groups g with g = residue (mod modulus), ascending.
  std::vector<ChunkId> groups(std::uint32_t residue, std::uint32_t modulus) const {
    std::vector<ChunkId> chunks;
    for (std::uint32_t g = residue; g < active_; g += modulus) {
      for (std::uint32_t c = group_start(g); c < group_start(g + 1); ++c) chunks.push_back(c);
    }
    return chunks;
  }

  std::vector<ChunkId> all_but(std::uint32_t block) const {
    std::vector<ChunkId> chunks;
    for (std::uint32_t c = 0; c < p_; ++c) {
      if (c != block) chunks.push_back(c);
    }
    return chunks;
  }

  /// Reduce-scatter over the actives: at distance d = 1, 2, ..., active i holds the groups
  /// = i (mod d) and sends the peer's half, the groups = peer (mod 2d).
  void halving() {
    for (std::uint32_t d = 1; d < active_; d *= 2) {
      for (std::uint32_t i = 0; i < active_; ++i) {
        const std::uint32_t peer = i ^ d;
        step_add(rank_of(i), rank_of(peer), TransferKind::kReduce, groups(peer % (2 * d), 2 * d));
      }
      flush();
    }
  }

  /// All-gather over the actives: at distance d = p'/2, ..., 1, active i sends the groups
  /// = i (mod 2d) it holds and then holds the groups = i (mod d).
  void doubling() {
    for (std::uint32_t d = active_ / 2; d >= 1; d /= 2) {
      for (std::uint32_t i = 0; i < active_; ++i) {
        step_add(rank_of(i), rank_of(i ^ d), TransferKind::kCopy, groups(i % (2 * d), 2 * d));
      }
      flush();
    }
  }

  /// Adds a transfer of this step. It depends on everything its source received so far (the
  /// writers of the blocks it sends: naming them directly, rather than only through the chain,
  /// lets the verifier prove each writer an ancestor at once) and on its destination's latest
  /// receive (which orders the writes into the destination's slots). At most 2 log2 p + 3 entries.
  /// The step's transfers see the state before the step: they run concurrently.
  void step_add(std::uint32_t from, std::uint32_t to, TransferKind kind, const std::vector<ChunkId>& chunks) {
    const NodeId src = builder_.members()[from];
    const NodeId dst = builder_.members()[to];
    std::vector<TransferId> deps(last_.of(src).begin(), last_.of(src).end());
    if (!last_.of(dst).empty()) deps.push_back(last_.of(dst).back());
    pending_.push_back({dst, builder_.add(src, dst, kind, chunks, deps)});
  }
  void step_add(std::uint32_t from, std::uint32_t to, TransferKind kind, std::initializer_list<ChunkId> chunks) {
    step_add(from, to, kind, std::vector<ChunkId>(chunks));
  }

  /// Ends a step: its transfers join their destinations' receive lists.
  void flush() {
    for (const auto& [dst, id] : pending_) last_.append(dst, id);
    pending_.clear();
  }

  ScheduleBuilder& builder_;
  std::uint32_t p_;
  std::uint32_t active_;
  std::uint32_t extras_;
  LastWrites last_;
  std::vector<std::pair<NodeId, TransferId>> pending_;
};

}  // namespace

BaselineResult generate_rhd(const Topology& topology, const Collective& collective) {
  ScheduleBuilder builder(topology, collective, "rhd", 1);
  const std::uint32_t p = builder.member_count();
  if (!std::has_single_bit(p)) {
    builder.note("rhd on " + std::to_string(p) +
                 " members (not a power of two): " + std::to_string(p - std::bit_floor(p)) + " pairs fold into " +
                 std::to_string(std::bit_floor(p)) + " active members and unfold at the end");
  }
  Rhd(builder).run(collective.kind);
  return builder.finish();
}

}  // namespace tenet::baselines
