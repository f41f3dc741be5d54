// SPDX-License-Identifier: MIT
// swing, swing-latency, bucket and circulant: the index logic against the papers' definitions
// (values derived by hand from them), every schedule verified on tori of every kind and on
// non-tori, and the planned and simulated times against the papers' closed forms: bucket Eq. 3,
// Swing's congestion-deficiency model (Sec. 4.1, Table 2), Träff's Table I.

#include "../support/catch.hpp"
#include "../support/sanitizers.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/collectives.hpp"
#include "tenet/baselines/baseline.hpp"
#include "tenet/baselines/bucket.hpp"
#include "tenet/baselines/circulant.hpp"
#include "tenet/baselines/swing.hpp"
#include "tenet/sim/simulator.hpp"
#include "tenet/topology/generators.hpp"
#include "tenet/verify/verifier.hpp"

using namespace tenet;
using namespace tenet::testing;

namespace {

Topology torus(std::vector<int> dims) { return generated({{"kind", "torus"}, {"dims", dims}}); }

/// Generates and verifies; returns the result (the schedule only when applicable).
BaselineResult checked(const std::string& name, const Topology& topology, const Collective& collective) {
  INFO(name << " " << collective_name(collective.kind) << " on " << topology.name);
  BaselineResult result = generate_baseline(name, topology, collective);
  INFO(result.reason);
  if (!result.applicable) {
    CHECK(!result.reason.empty());
    return result;
  }
  CHECK(result.schedule.algorithm() == name);
  const VerifyResult verdict = verify_schedule(topology, result.schedule);
  INFO(verdict.error);
  REQUIRE(verdict.ok);
  CHECK(verdict.redundant_copies == 0);
  // Bandwidth-optimal volume (Psi = 1; Swing Sec. 3.2 "no block sent twice"): in a reduce-scatter
  // or all-gather every member sends and receives each other member's chunks once.
  const Schedule& schedule = result.schedule;
  if (collective.kind != CollectiveKind::kAllReduce) {
    const std::uint64_t expected = (schedule.members().size() - 1) * std::uint64_t{schedule.chunks_per_member()};
    std::vector<std::uint64_t> sent(topology.npu_count()), received(topology.npu_count());
    for (const Transfer& transfer : schedule.transfers()) {
      sent[transfer.src] += transfer.chunk_count;
      received[transfer.dst] += transfer.chunk_count;
    }
    for (NodeId member : schedule.members()) {
      CHECK(sent[member] == expected);
      CHECK(received[member] == expected);
    }
  }
  return result;
}

bool within(double measured, double expected, double tolerance = 0.01) {
  return std::fabs(measured - expected) <= tolerance * expected;
}

/// Swing's Sec. 4.1 bandwidth term of one reduce-scatter (or all-gather) on a square torus of
/// `dims` dimensions and p nodes, in units of n * beta: n/(2D) * sum_s delta(sigma(s)) / 2^(s+1).
double swing_model_bandwidth(std::uint32_t dims, std::uint32_t log2_p) {
  double sum = 0.0;
  for (std::uint32_t s = 0; s < log2_p; ++s)
    sum += static_cast<double>(swing::delta(s / dims)) / std::ldexp(1.0, s + 1);
  return sum / (2.0 * dims);
}

/// Sum over the steps of the distance (hops, so alphas) on a square torus.
double swing_model_hops(std::uint32_t dims, std::uint32_t log2_p) {
  double hops = 0.0;
  for (std::uint32_t s = 0; s < log2_p; ++s) hops += static_cast<double>(swing::delta(s / dims));
  return hops;
}

}  // namespace

TEST_CASE("swing peers follow Eq. 2", "[baselines_torus]") {
  // rho(s) = sum_{i<=s} (-2)^i: 1, 1-2, 1-2+4, 1-2+4-8, ...
  CHECK(swing::rho(0) == 1);
  CHECK(swing::rho(1) == -1);
  CHECK(swing::rho(2) == 3);
  CHECK(swing::rho(3) == -5);
  CHECK(swing::rho(4) == 11);
  CHECK(swing::rho(5) == -21);
  CHECK(swing::delta(3) == 5);
  // Fig. 1, 16 nodes: step 0 pairs 0-1, step 1 "the other neighbour" 0-15 and 1-2, step 2 0-3.
  CHECK(swing::peer(0, 0, 16) == 1);
  CHECK(swing::peer(1, 0, 16) == 0);
  CHECK(swing::peer(0, 1, 16) == 15);
  CHECK(swing::peer(1, 1, 16) == 2);
  CHECK(swing::peer(0, 2, 16) == 3);
  CHECK(swing::peer(1, 2, 16) == 14);  // 1 - 3
  CHECK(swing::peer(0, 3, 16) == 11);  // 0 - 5
  // p = 8 by hand: 0 -> 1, 7, 3; 5 -> 4 (5 - 1), 6 (5 + 1), 2 (5 - 3).
  CHECK(swing::peer(0, 1, 8) == 7);
  CHECK(swing::peer(0, 2, 8) == 3);
  CHECK(swing::peer(5, 0, 8) == 4);
  CHECK(swing::peer(5, 1, 8) == 6);
  CHECK(swing::peer(5, 2, 8) == 2);
  // Fig. 4: the mirrored collective goes the other way (node 0 of a 4-ring talks to 3).
  CHECK(swing::peer(0, 0, 4, true) == 3);
  CHECK(swing::peer(3, 0, 4, true) == 0);
  // On an even ring every step pairs the ranks (pi is an involution).
  for (std::uint32_t size : {2u, 6u, 8u, 10u, 12u, 16u, 24u}) {
    for (std::uint32_t step = 0; step < swing::step_count(size); ++step) {
      for (std::uint32_t rank = 0; rank < size; ++rank) {
        for (bool mirrored : {false, true}) {
          CHECK(swing::peer(swing::peer(rank, step, size, mirrored), step, size, mirrored) == rank);
        }
      }
    }
  }
  CHECK(swing::step_count(16) == 4);
  CHECK(swing::step_count(12) == 4);
  CHECK(swing::step_count(7) == 3);  // on the 6 even ranks
  CHECK(swing::step_count(3) == 1);
  CHECK(swing::step_count(1) == 0);
}

TEST_CASE("swing block sets follow Listing 1", "[baselines_torus]") {
  // p = 8, rank 0 by hand: step 0 goes to 1, which later reaches 2 (step 1) and 6 (step 2), and
  // 2 reaches 5 (step 2): {1, 2, 5, 6}. Step 1 goes to 7, which reaches 4: {7, 4}. Step 2: {3}.
  CHECK(swing::step_blocks(0, 0, 8) == std::vector<std::uint32_t>{1, 2, 5, 6});
  CHECK(swing::step_blocks(0, 1, 8) == std::vector<std::uint32_t>{7, 4});
  CHECK(swing::step_blocks(0, 2, 8) == std::vector<std::uint32_t>{3});
  CHECK(swing::get_rs_idx(0, 1, 8) == std::vector<std::uint32_t>{7, 4, 3});
  // Power of two: the step sets halve, are disjoint, and cover every other block (App. A.1); the
  // row says the same.
  for (std::uint32_t size : {2u, 4u, 8u, 16u, 32u, 64u}) {
    for (std::uint32_t rank = 0; rank < size; ++rank) {
      const std::vector<swing::RingHop> row = swing::ring_row(rank, size, false);
      std::set<std::uint32_t> seen;
      for (std::uint32_t step = 0; step < swing::step_count(size); ++step) {
        const std::vector<std::uint32_t> blocks = swing::step_blocks(rank, step, size);
        CHECK(blocks.size() == size >> (step + 1));
        for (std::uint32_t block : blocks) {
          CHECK(seen.insert(block).second);
          CHECK(row[block].step == step);
          CHECK(row[block].peer == swing::peer(rank, step, size));
        }
      }
      CHECK(seen.size() == size - 1);
      CHECK(seen.count(rank) == 0);
    }
  }
  // p = 6 by hand (steps rho = 1, -1, 3): from 0, step 0 reaches 1, 2 (1+1), 5 (2+3), 4 (1-3);
  // step 1 reaches 5, 2 (5-3); step 2 reaches 3. Blocks 2 and 5 appear twice: sent once, in the
  // latest step (Sec. 3.2): step 0 sends {1, 4}, step 1 {2, 5}, step 2 {3}.
  CHECK(swing::step_blocks(0, 0, 6) == std::vector<std::uint32_t>{1, 2, 5, 4});
  CHECK(swing::step_blocks(0, 1, 6) == std::vector<std::uint32_t>{5, 2});
  const std::vector<swing::RingHop> six = swing::ring_row(0, 6, false);
  CHECK(six[1].step == 0);
  CHECK(six[4].step == 0);
  CHECK(six[2].step == 1);
  CHECK(six[5].step == 1);
  CHECK(six[3].step == 2);
  CHECK(six[2].peer == 5);
  CHECK(six[3].peer == 3);
  CHECK(six[0].step == swing::RingHop::kNone);
  // Every even size: each block once, in the latest step that lists it, never the rank's own.
  for (std::uint32_t size = 2; size <= 40; size += 2) {
    for (std::uint32_t rank = 0; rank < size; ++rank) {
      for (bool mirrored : {false, true}) {
        const std::vector<swing::RingHop> row = swing::ring_row(rank, size, mirrored);
        std::vector<std::uint32_t> latest(size, swing::RingHop::kNone);
        for (std::uint32_t step = 0; step < swing::step_count(size); ++step) {
          for (std::uint32_t block : swing::step_blocks(rank, step, size, mirrored)) latest[block] = step;
        }
        for (std::uint32_t block = 0; block < size; ++block) {
          INFO("size " << size << " rank " << rank << " block " << block);
          if (block == rank) {
            CHECK(row[block].step == swing::RingHop::kNone);
          } else {
            REQUIRE(latest[block] != swing::RingHop::kNone);
            CHECK(row[block].step == latest[block]);
          }
        }
      }
    }
  }
}

TEST_CASE("swing odd sizes and dimension orders", "[baselines_torus]") {
  // Fig. 3, 7 nodes: node 6 serves {0, 1, 2}, then {3, 4}, then {5}.
  const std::vector<std::vector<std::uint32_t>> groups = swing::odd_groups(7);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0] == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(groups[1] == std::vector<std::uint32_t>{3, 4});
  CHECK(groups[2] == std::vector<std::uint32_t>{5});
  const std::vector<swing::RingHop> extra = swing::ring_row(6, 7, false);
  CHECK(extra[4].step == 1);
  CHECK(extra[4].peer == 4);
  const std::vector<swing::RingHop> member = swing::ring_row(4, 7, false);
  CHECK(member[6].step == 1);
  CHECK(member[6].peer == 6);
  // Fig. 5, 2x4: dimension 0 (size 2) has one step, dimension 1 two: the last step is horizontal.
  const std::vector<swing::DimensionStep> rectangle = swing::step_order({2, 4}, 0);
  REQUIRE(rectangle.size() == 3);
  CHECK((rectangle[0].dimension == 0 && rectangle[0].sigma == 0));
  CHECK((rectangle[1].dimension == 1 && rectangle[1].sigma == 0));
  CHECK((rectangle[2].dimension == 1 && rectangle[2].sigma == 1));
  // Sec. 4.1: omega(s) = s mod D, sigma(s) = floor(s / D), rotated for the collective that starts
  // at dimension 1.
  const std::vector<swing::DimensionStep> square = swing::step_order({4, 4}, 1);
  REQUIRE(square.size() == 4);
  CHECK((square[0].dimension == 1 && square[1].dimension == 0 && square[2].dimension == 1 && square[3].dimension == 0));
  CHECK((square[0].sigma == 0 && square[1].sigma == 0 && square[2].sigma == 1 && square[3].sigma == 1));
}

TEST_CASE("swing congestion-deficiency model reproduces Table 2", "[baselines_torus]") {
  // Xi = (bandwidth term) / (n beta / (2D)) for p -> infinity: 1.19 (D=2), 1.03 (D=3), 1.008 (D=4).
  CHECK(within(swing_model_bandwidth(2, 60) * 4.0, 1.19));
  CHECK(within(swing_model_bandwidth(3, 60) * 6.0, 1.03));
  CHECK(within(swing_model_bandwidth(4, 60) * 8.0, 1.008));
}

TEST_CASE("bucket and circulant index logic", "[baselines_torus]") {
  // Non-conflicting permutations: in every phase the colors use distinct dimensions.
  for (std::uint32_t n = 1; n <= 4; ++n) {
    for (std::uint32_t phase = 0; phase < n; ++phase) {
      std::set<std::uint32_t> used;
      for (std::uint32_t color = 0; color < n; ++color) used.insert(bucket::phase_dimension(color, phase, n));
      CHECK(used.size() == n);
    }
  }
  // Fig. 3 (3 nodes): at step 0 node 0 forwards the data of node 2's bucket, at step 1 node 1's.
  CHECK(bucket::ring_bucket(0, 0, 3, true) == 2);
  CHECK(bucket::ring_bucket(0, 1, 3, true) == 1);
  CHECK(bucket::ring_bucket(0, 0, 3, false) == 1);
  CHECK(bucket::ring_next(2, 3, true) == 0);
  CHECK(bucket::ring_next(0, 3, false) == 2);

  // Träff Table II and the p = 9 example.
  CHECK(circulant::skips(31) == std::vector<std::uint32_t>{1, 2, 4, 8, 16, 31});
  CHECK(circulant::skips(32) == std::vector<std::uint32_t>{1, 2, 4, 8, 16, 32});
  CHECK(circulant::skips(33) == std::vector<std::uint32_t>{1, 2, 3, 5, 9, 17, 33});
  CHECK(circulant::skips(9) == std::vector<std::uint32_t>{1, 2, 3, 5, 9});
  CHECK(circulant::rounds(9) == 4);
  CHECK(circulant::rounds(8) == 3);
  CHECK(circulant::rounds(2) == 1);
  // "adjusted to 1, 1, 2, 4": process 8 sends to 7, 7, 6, 4 and receives from 0, 0, 1, 3.
  const std::uint32_t to[] = {7, 7, 6, 4};
  const std::uint32_t from[] = {0, 0, 1, 3};
  for (std::uint32_t k = 0; k < 4; ++k) {
    CHECK(circulant::to_process(8, k, 9) == to[k]);
    CHECK(circulant::from_process(8, k, 9) == from[k]);
  }
  CHECK(circulant::reduce_scatter_blocks(8, 0, 9) == std::vector<std::uint32_t>{7, 6, 4, 0, 2, 5, 1, 3});
  CHECK(circulant::reduce_scatter_blocks(8, 1, 9) == std::vector<std::uint32_t>{7, 5, 1, 3});
  CHECK(circulant::reduce_scatter_blocks(8, 2, 9) == std::vector<std::uint32_t>{6, 2});
  CHECK(circulant::reduce_scatter_blocks(8, 3, 9) == std::vector<std::uint32_t>{4});
  // ... and what it receives.
  CHECK(circulant::reduce_scatter_blocks(0, 0, 9) == std::vector<std::uint32_t>{8, 7, 5, 1, 3, 6, 2, 4});
  CHECK(circulant::reduce_scatter_blocks(0, 1, 9) == std::vector<std::uint32_t>{8, 6, 2, 4});
  CHECK(circulant::reduce_scatter_blocks(1, 2, 9) == std::vector<std::uint32_t>{8, 4});
  CHECK(circulant::reduce_scatter_blocks(3, 3, 9) == std::vector<std::uint32_t>{8});
  // |B_r^k| = 2^(q-1-k); for p a power of two they partition the other blocks, otherwise some
  // block repeats (which is why the reduce-scatter is not expressible then).
  for (std::uint32_t p = 2; p <= 40; ++p) {
    const std::uint32_t q = circulant::rounds(p);
    std::multiset<std::uint32_t> sent;
    for (std::uint32_t k = 0; k < q; ++k) {
      const std::vector<std::uint32_t> blocks = circulant::reduce_scatter_blocks(5 % p, k, p);
      CHECK(blocks.size() == (std::size_t{1} << (q - 1 - k)));
      sent.insert(blocks.begin(), blocks.end());
    }
    CHECK((std::set<std::uint32_t>(sent.begin(), sent.end()).size() == sent.size()) == std::has_single_bit(p));
  }
  // All-gather (Listing 7): after round k a process holds r .. r + skips[k+1] - 1.
  for (std::uint32_t p = 2; p <= 40; ++p) {
    const std::vector<std::uint32_t> s = circulant::skips(p);
    for (std::uint32_t r = 0; r < p; ++r) {
      std::set<std::uint32_t> held{r};
      for (std::uint32_t k = 0; k < circulant::rounds(p); ++k) {
        const std::uint32_t f = circulant::from_process(r, k, p);
        CHECK(circulant::to_process(f, k, p) == r);
        for (std::uint32_t block : circulant::all_gather_blocks(f, k, p)) CHECK(held.insert(block).second);
        CHECK(held.size() == s[k + 1]);
      }
      CHECK(held.size() == p);
    }
  }
}

namespace {

struct Case {
  std::string label;
  Topology topology;
  bool torus;
};

std::vector<Case> verification_cases() {
  std::vector<Case> cases;
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{
           {4, 4}, {8, 8}, {8, 4}, {4, 4, 4}, {2, 2, 2}, {6, 6}, {5, 5}, {3, 5}, {2, 4}, {6, 3}}) {
    Topology topology = torus(dims);
    cases.push_back({topology.layout.describe(), std::move(topology), true});
  }
  cases.push_back({"ring 7", generated({{"kind", "ring"}, {"npus", 7}}), true});
  cases.push_back({"ring 12", generated({{"kind", "ring"}, {"npus", 12}}), true});
  cases.push_back({"hypercube 3", generated({{"kind", "hypercube"}, {"dimension", 3}}), true});
  cases.push_back({"fully connected 6", generated({{"kind", "fully_connected"}, {"npus", 6}}), false});
  cases.push_back({"mesh 3x3", generated({{"kind", "mesh"}, {"dims", {3, 3}}}), false});
  return cases;
}

}  // namespace

TEST_CASE("torus baselines verify on tori and elsewhere", "[baselines_torus]") {
  for (const Case& c : verification_cases()) {
    const std::uint32_t p = c.topology.npu_count();
    for (CollectiveKind kind : kAllKinds) {
      INFO(c.label << " " << collective_name(kind));
      const Collective collective = make_collective(kind, 6720 * p);
      const BaselineResult swing = checked("swing", c.topology, collective);
      CHECK(swing.applicable);
      const bool noted = std::any_of(
          swing.schedule.notes.begin(), swing.schedule.notes.end(),
          [](const std::string& n) { return n.find("swing on a non-torus: logical 1D pattern") != std::string::npos; });
      CHECK(noted == !c.torus);

      const BaselineResult latency = checked("swing-latency", c.topology, collective);
      CHECK(latency.applicable == (kind == CollectiveKind::kAllGather));
      if (!latency.applicable) CHECK(latency.reason.find("not expressible") != std::string::npos);

      const BaselineResult bucket = checked("bucket", c.topology, collective);
      CHECK(bucket.applicable == c.torus);
      if (!c.torus) CHECK(bucket.reason.find("needs a torus") != std::string::npos);

      const BaselineResult circulant = checked("circulant", c.topology, collective);
      CHECK(circulant.applicable == (kind == CollectiveKind::kAllGather || std::has_single_bit(p)));
    }
  }
}

TEST_CASE("torus baselines on sub-collectives", "[baselines_torus]") {
  const Topology topology = torus({4, 4});
  const std::vector<NodeId> members{0, 1, 2, 5, 6, 9, 10, 15};
  for (CollectiveKind kind : kAllKinds) {
    const Collective collective = make_collective(kind, 1 << 16, 1, members);
    const BaselineResult swing = checked("swing", topology, collective);
    REQUIRE(swing.applicable);
    CHECK(swing.schedule.notes.front().find("sub-collective: logical 1D") != std::string::npos);
    CHECK(!checked("bucket", topology, collective).applicable);
    CHECK(checked("circulant", topology, collective).applicable);
  }
}

TEST_CASE("circulant verifies for p = 2..17", "[baselines_torus]") {
  for (std::uint32_t p = 2; p <= 17; ++p) {
    const Topology full = generated({{"kind", "fully_connected"}, {"npus", p}});
    const Topology ring = generated({{"kind", "ring"}, {"npus", p}});
    for (CollectiveKind kind : kAllKinds) {
      INFO("p = " << p << " " << collective_name(kind));
      const Collective collective = make_collective(kind, 1000 * p);
      const BaselineResult on_full = checked("circulant", full, collective);
      const BaselineResult on_ring = checked("circulant", ring, collective);
      const bool expressible = kind == CollectiveKind::kAllGather || std::has_single_bit(p);
      CHECK(on_full.applicable == expressible);
      CHECK(on_ring.applicable == expressible);
      if (!expressible) CHECK(on_full.reason.find("not a power of two") != std::string::npos);
      const BaselineResult direct = generate_circulant(full, collective, CirculantAllReduce::kDirect);
      CHECK(!direct.applicable);
      CHECK(!direct.reason.empty());
    }
  }
}

TEST_CASE("bucket matches Eq. 3 on symmetric tori", "[baselines_torus]") {
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{{4, 4}, {8, 8}, {4, 4, 4}, {3, 3, 3}, {16}}) {
    const Topology topology = torus(dims);
    const double p = topology.npu_count();
    const double n_dims = static_cast<double>(dims.size());
    const double d = dims[0];
    const std::uint64_t size = std::uint64_t{1} << 26;
    for (CollectiveKind kind : kAllKinds) {
      INFO(topology.layout.describe() << " " << collective_name(kind));
      const BaselineResult result = checked("bucket", topology, make_collective(kind, size));
      REQUIRE(result.applicable);
      // Eq. 3 without gamma: N(d-1) steps of one alpha each, bandwidth (p-1)/p n / (2N) beta.
      const double phases = kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
      const double expected =
          phases * (n_dims * (d - 1) * kAlpha + (p - 1) / p * static_cast<double>(size) / (2 * n_dims) / kBandwidth);
      CHECK(within(result.schedule.planned_time_us(), expected));
      const SimResult simulated = simulate(topology, result.schedule);
      CHECK(within(simulated.time_us, expected));
    }
  }
}

TEST_CASE("bucket meets Eq. 2 on asymmetric tori", "[baselines_torus]") {
  // Eq. 2's bandwidth term: (dl-1)/dl * n/(2N) * (ds^N - 1)/ds^N * ds/(ds-1). With phases in step
  // (each lasts max(d) - 1 steps) it is exact in 2D and an upper bound beyond.
  for (const std::vector<int>& dims :
       std::vector<std::vector<int>>{{8, 4}, {16, 4}, {32, 8}, {3, 5}, {8, 4, 4}, {4, 8, 2}}) {
    const Topology topology = torus(dims);
    const double n_dims = static_cast<double>(dims.size());
    const double longest = *std::max_element(dims.begin(), dims.end());
    const double shortest = *std::min_element(dims.begin(), dims.end());
    const std::uint64_t size = std::uint64_t{1} << 26;
    const double bound = (longest - 1) / longest * static_cast<double>(size) / (2 * n_dims) *
                         (std::pow(shortest, n_dims) - 1) / std::pow(shortest, n_dims) * shortest / (shortest - 1) /
                         kBandwidth;
    for (CollectiveKind kind : kAllKinds) {
      INFO(topology.layout.describe() << " " << collective_name(kind));
      const BaselineResult result = checked("bucket", topology, make_collective(kind, size));
      REQUIRE(result.applicable);
      const double phases = kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
      const double alphas = phases * n_dims * (longest - 1) * kAlpha;
      const double bandwidth = result.schedule.planned_time_us() - alphas;
      const double simulated = simulate(topology, result.schedule).time_us - alphas;
      if (dims.size() == 2) {
        CHECK(within(bandwidth, phases * bound));
        CHECK(within(simulated, phases * bound));
      } else {
        CHECK(bandwidth <= phases * bound * 1.0001);
        CHECK(simulated <= phases * bound * 1.0001);
      }
    }
  }
}

TEST_CASE("swing matches its congestion-deficiency model on square tori", "[baselines_torus]") {
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{{4, 4}, {8, 8}, {16, 16}, {4, 4, 4}, {8, 8, 8}}) {
    // 512 NPUs take most of the time under the sanitizers; the 3D code path runs on 4x4x4.
    if (kSanitized && dims.size() == 3 && dims[0] == 8) continue;
    const Topology topology = torus(dims);
    const std::uint32_t p = topology.npu_count();
    const std::uint32_t n_dims = static_cast<std::uint32_t>(dims.size());
    const std::uint32_t log2_p = static_cast<std::uint32_t>(std::countr_zero(p));
    const std::uint64_t size = std::uint64_t{1} << 26;
    const double n = static_cast<double>(size);
    for (CollectiveKind kind : kAllKinds) {
      INFO(topology.layout.describe() << " " << collective_name(kind));
      const BaselineResult result = checked("swing", topology, make_collective(kind, size));
      REQUIRE(result.applicable);
      const double phases = kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
      const double alphas = phases * swing_model_hops(n_dims, log2_p) * kAlpha;
      // Contention-free: every step at full bandwidth, n/(2D) (p-1)/p in all (Psi = Xi = 1).
      const double planned = alphas + phases * n / (2.0 * n_dims) * (p - 1.0) / p / kBandwidth;
      CHECK(within(result.schedule.planned_time_us(), planned));
      // Congested: step s shares its links delta(sigma(s)) ways (Sec. 4.1).
      const double congested = alphas + phases * n * swing_model_bandwidth(n_dims, log2_p) / kBandwidth;
      const SimResult simulated = simulate(topology, result.schedule);
      CHECK(within(simulated.time_us, congested));
    }
  }
}

TEST_CASE("circulant matches Träff's Table I", "[baselines_torus]") {
  for (std::uint32_t p = 2; p <= 17; ++p) {
    const Topology topology = generated({{"kind", "fully_connected"}, {"npus", p}});
    const double m = 1e6 * p;
    const double q = circulant::rounds(p);
    // All-gather: ceil(log2 p) alpha + (p-1)/p beta m (gamma = 0).
    const double expected = q * kAlpha + (p - 1.0) / p * m / kBandwidth;
    const BaselineResult all_gather =
        checked("circulant", topology, make_collective(CollectiveKind::kAllGather, static_cast<std::uint64_t>(m)));
    REQUIRE(all_gather.applicable);
    CHECK(within(all_gather.schedule.planned_time_us(), expected));
    CHECK(within(simulate(topology, all_gather.schedule).time_us, expected));
    if (!std::has_single_bit(p)) continue;
    // Reduce-scatter: ceil(log2 p) alpha + beta (2^q - 1)/p m, = (p-1)/p m for p a power of two.
    const BaselineResult reduce_scatter =
        checked("circulant", topology, make_collective(CollectiveKind::kReduceScatter, static_cast<std::uint64_t>(m)));
    REQUIRE(reduce_scatter.applicable);
    CHECK(within(reduce_scatter.schedule.planned_time_us(), expected));
    CHECK(within(simulate(topology, reduce_scatter.schedule).time_us, expected));
  }
}
