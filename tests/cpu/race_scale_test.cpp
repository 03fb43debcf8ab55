// The race check at rank counts where clocks over every threadblock could not be afforded: order
// that travels through thousands of ranks and back to its own (a component too large for dense
// clocks, so kept as sparse ones) is still seen, and its absence is still a race; threadblocks
// nothing connects are never ordered; a deadlock is still a deadlock.
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

constexpr std::string_view kStep =
    R"(      <step s="{}" type="{}" srcbuf="{}" srcoff="{}" dstbuf="{}" dstoff="{}" cnt="1" depid="{}" deps="{}" hasdep="{}"/>
)";

// Rank 0's tb 0 writes output chunk 0 and sends input chunk 0 to rank 1 (`write_first`: in that
// order, otherwise the other way round); every other rank passes it on, through its scratch, to
// the next; rank 0's tb 1 receives it from the last rank, then copies output chunk 0 to output
// chunk 1. The copy's read follows the write only around the whole ring. With `loner`, rank 0
// also has a tb 2 that no connection or dependency joins to anything, which reads output chunk 0
// too (with `loner_reads_input`, input chunk 0 instead, which only tb 0 reads: no race). With
// `cycle`, tb 0's first step waits for tb 1's copy: a cycle through every rank.
std::string ring_round_trip(int ranks, bool write_first, bool loner = false, bool cycle = false,
                            bool loner_reads_input = false) {
  std::string xml = fmt::format(
      R"(<algo name="round_trip_ring" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="{}" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="3" s_chunks="1">
    <tb id="0" send="1" recv="-1" chan="0">
)",
      ranks);
  const std::string write = fmt::format(kStep, write_first ? 0 : 1, "cpy", "i", 0, "o", 0,
                                        cycle ? 1 : -1, cycle && write_first ? 1 : -1, 0);
  const std::string send =
      fmt::format(kStep, write_first ? 1 : 0, "s", "i", 0, "o", -1, cycle && !write_first ? 1 : -1,
                  cycle && !write_first ? 1 : -1, 0);
  xml += write_first ? write + send : send + write;
  xml += fmt::format(R"(    </tb>
    <tb id="1" send="-1" recv="{}" chan="0">
)",
                     ranks - 1);
  xml += fmt::format(kStep, 0, "r", "i", -1, "s", 0, -1, -1, 0);
  xml += fmt::format(kStep, 1, "cpy", "o", 0, "o", 1, -1, -1, cycle ? 1 : 0);
  xml += "    </tb>\n";
  if (loner) {
    xml += R"(    <tb id="2" send="-1" recv="-1" chan="0">
)";
    xml += fmt::format(kStep, 0, "cpy", loner_reads_input ? "i" : "o", 0, "o", 2, -1, -1, 0);
    xml += "    </tb>\n";
  }
  xml += "  </gpu>\n";
  for (int r = 1; r < ranks; ++r) {
    xml += fmt::format(R"(  <gpu id="{}" i_chunks="0" o_chunks="0" s_chunks="1">
    <tb id="0" send="{}" recv="{}" chan="0">
)",
                       r, (r + 1) % ranks, r - 1);
    xml += fmt::format(kStep, 0, "rcs", "s", 0, "s", 0, -1, -1, 0);
    xml += "    </tb>\n  </gpu>\n";
  }
  xml += "</algo>\n";
  return xml;
}

CollectiveSpec ring_round_trip_spec(int ranks) {
  CollectiveSpec spec;
  spec.name = "round_trip_ring";
  spec.ngpus = ranks;
  spec.input_chunks.assign(static_cast<std::size_t>(ranks), 0);
  spec.input_chunks[0] = 1;
  spec.output_chunks.assign(static_cast<std::size_t>(ranks), 0);
  spec.output_chunks[0] = 3;
  spec.expected.set_ranks(ranks);
  spec.expected.set_chunks(0, 3);
  spec.expected.set(0, 0, {{0, 0}});
  spec.expected.set(0, 1, {{0, 0}});
  return spec;
}

// More threadblocks in one component than the detector keeps dense clocks for.
constexpr int kManyRanks = 2500;

TEST_CASE("order around thousands of ranks and back is no race", "[cpu][race]") {
  const ir::Algorithm algo = testing::load(ring_round_trip(kManyRanks, true));
  const Executor executor(algo, ring_round_trip_spec(kManyRanks));
  for (int depth : {0, 1, 2}) {
    for (std::uint64_t seed : {1, 2}) {
      const RunResult result = executor.run(testing::options(37, 8, depth, seed));
      INFO("depth " << depth << " seed " << seed << "\n" << result.report());
      CHECK(result.outcome == Outcome::Pass);
    }
  }
}

TEST_CASE("a write that leaves after the message around the ring races with the read",
          "[cpu][race]") {
  const ir::Algorithm algo = testing::load(ring_round_trip(kManyRanks, false));
  const Executor executor(algo, ring_round_trip_spec(kManyRanks));
  for (int depth : {0, 2}) {
    const RunResult result = executor.run(testing::options(37, 8, depth));
    INFO("depth " << depth << "\n" << result.report());
    REQUIRE(result.outcome == Outcome::Race);
    REQUIRE_FALSE(result.races.empty());
    const Race& race = result.races.front();
    CHECK(race.rank == 0);
    CHECK(race.buffer == ir::BufferKind::Output);
    CHECK(race.chunk == 0);
    const bool tb0_first = race.earlier.threadblock == 0;
    const RaceAccess& write = tb0_first ? race.earlier : race.later;
    const RaceAccess& read = tb0_first ? race.later : race.earlier;
    CHECK(write.threadblock == 0);
    CHECK(write.step == 1);
    CHECK(write.writes);
    CHECK(read.threadblock == 1);
    CHECK(read.step == 1);
    CHECK_FALSE(read.writes);
  }
}

// One component of 1,801 threadblocks: still dense clocks (up to 2,048), 13 MB of them, every
// threadblock's row starting at zero.
constexpr int kDenseRanks = 1800;

TEST_CASE("order around a ring at the largest dense clocks is seen, and its absence too",
          "[cpu][race]") {
  const ir::Algorithm write_first = testing::load(ring_round_trip(kDenseRanks, true));
  const ir::Algorithm send_first = testing::load(ring_round_trip(kDenseRanks, false));
  const Executor ordered(write_first, ring_round_trip_spec(kDenseRanks));
  const Executor unordered(send_first, ring_round_trip_spec(kDenseRanks));
  for (int depth : {0, 2}) {
    const RunResult pass = ordered.run(testing::options(37, 8, depth));
    INFO("depth " << depth << "\n" << pass.report());
    CHECK(pass.outcome == Outcome::Pass);
    const RunResult race = unordered.run(testing::options(37, 8, depth));
    INFO(race.report());
    REQUIRE(race.outcome == Outcome::Race);
    REQUIRE_FALSE(race.races.empty());
    CHECK(race.races.front().rank == 0);
    CHECK(race.races.front().chunk == 0);
  }
}

TEST_CASE("threadblocks nothing joins race at a large rank count", "[cpu][race]") {
  // tb 2 of rank 0 shares no connection or dependency with tb 0: its read of the chunk tb 0
  // writes is unordered in every tile, however the ring behaves.
  const ir::Algorithm algo = testing::load(ring_round_trip(kManyRanks, true, true));
  const Executor executor(algo, ring_round_trip_spec(kManyRanks));
  const RunResult result = executor.run(testing::options(37, 8, 2));
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::Race);
  bool found = false;
  for (const Race& race : result.races) {
    if (race.rank == 0 && race.buffer == ir::BufferKind::Output && race.chunk == 0 &&
        (race.earlier.threadblock == 2 || race.later.threadblock == 2)) {
      found = true;
    }
  }
  CHECK(found);
  // Every tile of the chunk: tb 2 against tb 0's write.
  CHECK(result.race_count >= 5);
}

TEST_CASE("components checked one after another keep every verdict", "[cpu][race]") {
  // The ring's sparse clocks and the lone threadblock are two components: the race-checked run
  // goes one component after the other (RaceDetector::groups), and lets the ring's clocks go
  // once its last step has run. Order around the ring is still seen, its absence is still a
  // race, and the lone threadblock's read of what only tb 0 reads is no race.
  const ir::Algorithm ordered = testing::load(ring_round_trip(kManyRanks, true, true, false, true));
  const ir::Algorithm racy = testing::load(ring_round_trip(kManyRanks, false, true, false, true));
  const Executor fine(ordered, ring_round_trip_spec(kManyRanks));
  const Executor unordered(racy, ring_round_trip_spec(kManyRanks));
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    for (int depth : {0, 2}) {
      const RunResult pass = fine.run(testing::options(37, 8, depth, seed));
      INFO("seed " << seed << " depth " << depth << "\n" << pass.report());
      CHECK(pass.outcome == Outcome::Pass);
      const RunResult result = unordered.run(testing::options(37, 8, depth, seed));
      INFO(result.report());
      REQUIRE(result.outcome == Outcome::Race);
      for (const Race& race : result.races) {
        CHECK(race.rank == 0);
        CHECK(race.buffer == ir::BufferKind::Output);
        CHECK(race.chunk == 0);
        CHECK(race.earlier.threadblock != 2);
        CHECK(race.later.threadblock != 2);
      }
    }
  }
}

TEST_CASE("a wait around thousands of ranks that closes a cycle deadlocks", "[cpu][race]") {
  const ir::Algorithm algo = testing::load(ring_round_trip(kManyRanks, true, false, true));
  const Executor executor(algo, ring_round_trip_spec(kManyRanks));
  const RunResult result = executor.run(testing::options(37, 8, 2));
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::Deadlock);
  CHECK(result.blocked.size() == static_cast<std::size_t>(kManyRanks) + 1);
}

}  // namespace
}  // namespace weft::cpu
