// SPDX-License-Identifier: MIT
// Column storage: lists stay 4 bytes a row until a row needs more, then every row reads back the
// same; shared dependency lists; bulk extension; the time table.

#include "../support/catch.hpp"

#include <vector>

#include "tenet/schedule/schedule.hpp"

using namespace tenet;

namespace {

std::vector<std::uint32_t> as_vector(std::span<const std::uint32_t> list) { return {list.begin(), list.end()}; }

}  // namespace

TEST_CASE("a list column stays single until a row has two entries, and reads back the same after") {
  ListColumn column;
  const std::uint32_t seven = 7;
  column.push({});
  column.push(std::span(&seven, 1));
  CHECK(column.single());
  CHECK(column.entries() == 2);  // one slot per row
  const std::vector<std::uint32_t> pair{3, 4};
  column.push(pair);
  CHECK_FALSE(column.single());
  REQUIRE(column.rows() == 3);
  CHECK(as_vector(column.at(0)).empty());
  CHECK(as_vector(column.at(1)) == std::vector<std::uint32_t>{7});
  CHECK(as_vector(column.at(2)) == pair);
  CHECK(column.entries() == 3);  // the empty row's slot is gone
}

TEST_CASE("a single entry equal to the empty marker is still stored as that entry") {
  ListColumn column;
  const std::uint32_t none = ListColumn::kNone;
  column.push(std::span(&none, 1));
  CHECK_FALSE(column.single());
  CHECK(as_vector(column.at(0)) == std::vector<std::uint32_t>{ListColumn::kNone});
}

TEST_CASE("bulk extension writes rows in place, single or ranged") {
  ListColumn column;
  const std::vector<std::uint32_t> ones{1, 0, 1};
  column.extend(ones);
  *column.slots(0) = 10;
  *column.slots(2) = 12;
  CHECK(column.single());
  CHECK(as_vector(column.at(1)).empty());
  const std::vector<std::uint32_t> counts{2, 0};
  column.extend(counts);
  CHECK_FALSE(column.single());
  column.slots(3)[0] = 20;
  column.slots(3)[1] = 21;
  CHECK(as_vector(column.at(0)) == std::vector<std::uint32_t>{10});
  CHECK(as_vector(column.at(2)) == std::vector<std::uint32_t>{12});
  CHECK(as_vector(column.at(3)) == std::vector<std::uint32_t>{20, 21});
  CHECK(as_vector(column.at(4)).empty());
  column.extend_single(1);
  *column.slots(5) = 30;
  CHECK(as_vector(column.at(5)) == std::vector<std::uint32_t>{30});
}

TEST_CASE("transfers read back as added, shared dependency lists included") {
  Schedule schedule(CollectiveKind::kAllReduce, 1024, {0, 1, 2}, 1, "test");
  const std::vector<ChunkId> block{0, 2};
  const std::vector<ChunkId> one{1};
  schedule.add(0, 1, TransferKind::kReduce, one, {}, 0.0, 1.5, 4);
  schedule.add(1, 2, TransferKind::kReduce, one, {}, 0.0, 1.5);
  const std::vector<TransferId> both{0, 1};
  schedule.add(2, 0, TransferKind::kCopy, block, both, 1.5, 3.0);
  schedule.add_sharing_deps(2, 2, 1, TransferKind::kCopy, block, 1.5, 3.25);
  REQUIRE(schedule.size() == 4);
  const Transfer first = schedule.transfer(0);
  CHECK(first.src == 0);
  CHECK(first.dst == 1);
  CHECK(first.link == 4);
  CHECK(first.kind == TransferKind::kReduce);
  CHECK(first.start_us == 0.0);
  CHECK(first.end_us == 1.5);
  const Transfer last = schedule.transfer(3);
  CHECK(std::vector<TransferId>(schedule.deps_of(last).begin(), schedule.deps_of(last).end()) == both);
  CHECK(std::vector<ChunkId>(schedule.chunks_of(last).begin(), schedule.chunks_of(last).end()) == block);
  CHECK(last.link == kNoLink);
  CHECK(last.end_us == 3.25);
  CHECK(schedule.planned_time_us() == 3.25);
  CHECK(schedule.resized(2048).chunk_bytes() == 2048.0 / 3);
  std::size_t seen = 0;
  for (const Transfer& transfer : schedule.transfers()) seen += transfer.chunk_count;
  CHECK(seen == 6);
  schedule.forget_links();
  CHECK(schedule.link(0) == kNoLink);
}

TEST_CASE("bulk extension fills columns and time tables") {
  Schedule schedule(CollectiveKind::kAllGather, 64, {0, 1}, 1, "test");
  const std::vector<double> times{0.0, 2.0, 4.0};
  const std::uint32_t base = schedule.add_times(times);
  const std::vector<std::uint32_t> deps{0, 1};
  Schedule::Extension room = schedule.extend(2, deps);
  for (std::size_t i = 0; i < 2; ++i) {
    room.src[i] = static_cast<NodeId>(i);
    room.dst[i] = static_cast<NodeId>(1 - i);
    room.link[i] = static_cast<LinkId>(i);
    room.kind[i] = TransferKind::kCopy;
    room.start_at[i] = base + static_cast<std::uint32_t>(i);
    room.end_at[i] = base + static_cast<std::uint32_t>(i) + 1;
    *schedule.chunk_slot(room.first_id + static_cast<TransferId>(i)) = static_cast<ChunkId>(i);
  }
  *schedule.dep_slots(1) = 0;
  CHECK(schedule.deps_of(TransferId{0}).empty());
  CHECK(schedule.deps_of(TransferId{1})[0] == 0);
  CHECK(schedule.start_us(1) == 2.0);
  CHECK(schedule.end_us(1) == 4.0);
  CHECK(schedule.chunks_of(TransferId{1})[0] == 1);
}
