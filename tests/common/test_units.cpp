// SPDX-License-Identifier: MIT
#include "../support/catch.hpp"

#include "tenet/collective.hpp"
#include "tenet/common/error.hpp"
#include "tenet/common/random.hpp"
#include "tenet/common/units.hpp"

using tenet::parse_size;

TEST_CASE("sizes parse with decimal and binary units", "[units]") {
  CHECK(parse_size("32B", "--size") == 32);
  CHECK(parse_size("4KiB", "--size") == 4096);
  CHECK(parse_size("1MB", "--size") == 1000000);
  CHECK(parse_size("64MiB", "--size") == 64ull << 20);
  CHECK(parse_size("1GiB", "--size") == 1ull << 30);
  CHECK(parse_size("1.5KB", "--size") == 1500);
  CHECK(parse_size("1000", "--size") == 1000);
  CHECK(parse_size("2 GB", "--size") == 2000000000);
}

TEST_CASE("bad sizes name the option and what is expected", "[units]") {
  CHECK_THROWS_WITH(parse_size("64mb", "--size"),
                    "error: --size: '64mb' is not a size; expected a size such as 32B, 4KiB, 1MB, 64MiB or 1GiB "
                    "(KB/MB/GB decimal, KiB/MiB/GiB binary)");
  CHECK_THROWS_WITH(parse_size("", "--size"),
                    "error: --size: '' is not a size; expected a size such as 32B, 4KiB, 1MB, 64MiB or 1GiB "
                    "(KB/MB/GB decimal, KiB/MiB/GiB binary)");
  CHECK_THROWS_WITH(parse_size("-4KiB", "--size"), Catch::StartsWith("error: --size: '-4KiB' is not a size"));
  CHECK_THROWS_WITH(parse_size("0B", "--size"), "error: --size: '0B' is zero; a size must be at least 1B");
  CHECK_THROWS_WITH(parse_size("1.5B", "--size"), "error: --size: '1.5B' is not a whole number of bytes");
  CHECK_THROWS_WITH(parse_size("2048TiB", "--size"), "error: --size: '2048TiB' is larger than the 1PiB tenet accepts");
}

TEST_CASE("sizes and times format readably", "[units]") {
  CHECK(tenet::format_size(64ull << 20) == "64 MiB");
  CHECK(tenet::format_size(1536) == "1.5 KiB");
  CHECK(tenet::format_size(100) == "100 B");
  CHECK(tenet::format_time_us(0.85) == "850 ns");
  CHECK(tenet::format_time_us(12.34) == "12.34 us");
  CHECK(tenet::format_time_us(4560.0) == "4.56 ms");
  CHECK(tenet::link_time_us(1e6, 0.5, 50.0) == Approx(20.5));  // 1 MB over 50 GB/s is 20 us
}

TEST_CASE("collective names parse with suggestions", "[units]") {
  CHECK(tenet::parse_collective("all-reduce", "-c") == tenet::CollectiveKind::kAllReduce);
  CHECK(tenet::parse_collective("AllGather", "-c") == tenet::CollectiveKind::kAllGather);
  CHECK(tenet::parse_collective("rs", "-c") == tenet::CollectiveKind::kReduceScatter);
  CHECK_THROWS_WITH(tenet::parse_collective("allreduse", "-c"),
                    "error: -c: unknown collective 'allreduse' (did you mean 'allreduce'?); expected allgather, "
                    "reducescatter or allreduce");
}

TEST_CASE("the random stream is fixed by its seed", "[units]") {
  tenet::Rng a(42);
  tenet::Rng b(42);
  for (int i = 0; i < 100; ++i) CHECK(a.next() == b.next());
  tenet::Rng c(7);
  // Pinned values: a change here changes every seeded topology and schedule tenet produces.
  CHECK(c.next() == 0x63CBE1E459320DD7ull);
  for (int i = 0; i < 1000; ++i) CHECK(c.below(10) < 10);
}

TEST_CASE("sizes past the limit say so, whatever their unit", "[units]") {
  CHECK(parse_size("1PiB", "--size") == (std::uint64_t{1} << 50));
  CHECK_THROWS_WITH(parse_size("2PiB", "--size"), "error: --size: '2PiB' is larger than the 1PiB tenet accepts");
  CHECK_THROWS_WITH(parse_size("1.5PB", "--size"), "error: --size: '1.5PB' is larger than the 1PiB tenet accepts");
  CHECK(parse_size("1TB", "--size") == 1000000000000ull);
}
