// Data races by happens-before: two accesses of one rank's memory by different threadblocks, at
// least one a write, that no chain of program order, dependencies, messages and FIFO
// back-pressure orders, are reported in every run, whatever the interleaving and whatever the
// data turned out to be; and orders that do exist (across ranks too) are never reported.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"
#include "weft/cpu/verify.h"

namespace weft::cpu {
namespace {

using testing::replaced;

// True when `race` pairs `a` and `b`, in either order.
bool pairs(const Race& race, const RaceAccess& a, const RaceAccess& b) {
  auto same = [](const RaceAccess& x, const RaceAccess& y) {
    return x.threadblock == y.threadblock && x.step == y.step && x.step_type == y.step_type &&
           x.writes == y.writes;
  };
  return (same(race.earlier, a) && same(race.later, b)) ||
         (same(race.earlier, b) && same(race.later, a));
}

bool any_race_pairs(const RunResult& result, int rank, ir::BufferKind buffer, const RaceAccess& a,
                    const RaceAccess& b) {
  return std::any_of(result.races.begin(), result.races.end(), [&](const Race& race) {
    return race.rank == rank && race.buffer == buffer && pairs(race, a, b);
  });
}

// Rank 1 sends its input to rank 0, whose tb 0 receives it into scratch; tb 1 copies scratch to
// the output after some unrelated work, waiting for the receive. Without that wait the copy
// usually still comes late enough, so wrong results are rare.
constexpr std::string_view kLateReader = R"xml(
<algo name="late_reader" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="0" o_chunks="1" s_chunks="1">
    <tb id="0" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="-1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="-1" deps="-1" hasdep="0"/>
      <step s="4" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="-1" deps="-1" hasdep="0"/>
      <step s="5" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="-1" deps="-1" hasdep="0"/>
      <step s="6" type="cpy" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="0" deps="0" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml";

CollectiveSpec late_reader_spec() {
  CollectiveSpec spec;
  spec.name = "late_reader";
  spec.ngpus = 2;
  spec.input_chunks = {0, 1};
  spec.output_chunks = {1, 0};
  spec.expected = {{{{1, 0}}}, {}};
  return spec;
}

std::string without_copy_wait() {
  return replaced(kLateReader, R"(dstoff="0" cnt="1" depid="0" deps="0")",
                  R"(dstoff="0" cnt="1" depid="-1" deps="-1")");
}

TEST_CASE("a missing dependency is a race in every run, even when the result is right",
          "[cpu][race]") {
  const ir::Algorithm algo = testing::load(without_copy_wait());
  const Executor executor(algo, late_reader_spec());
  const RaceAccess receive{0, 0, "r", true};
  const RaceAccess copy{1, 6, "cpy", false};
  int right_anyway = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    // One tile: the copy has a single chance to come too early.
    RunOptions options = testing::options(37, 64, 2, seed);
    const RunResult result = executor.run(options);
    INFO("seed " << seed << "\n" << result.report());
    REQUIRE(result.outcome == Outcome::Race);
    CHECK(result.race_count == 1);
    REQUIRE(result.races.size() == 1);  // one pair of steps, kept once
    const Race& race = result.races.front();
    CHECK(race.rank == 0);
    CHECK(race.buffer == ir::BufferKind::Scratch);
    CHECK(race.chunk == 0);
    CHECK(pairs(race, receive, copy));
    CHECK_THAT(result.message, Catch::StartsWith("data race: "));
    CHECK_THAT(result.report(), Catch::Contains("outcome: data race"));
    if (race.earlier.threadblock == 0) {
      CHECK_THAT(race.str(), Catch::Contains(": tb 0 step 0 (r) writes, tb 1 step 6 (cpy) reads, "
                                             "with no dependency ordering them"));
    }
    if (result.mismatches.empty()) ++right_anyway;

    // The same schedule without the race check: only the data can show the bug.
    options.check_races = false;
    const RunResult unchecked = executor.run(options);
    CHECK(unchecked.races.empty());
    CHECK(unchecked.outcome == (result.mismatches.empty() ? Outcome::Pass : Outcome::WrongResult));
  }
  // Nearly every interleaving happens to give the right result; the race is reported all the same.
  CHECK(right_anyway > 30);
  const VerifyReport report = verify(executor, VerifyOptions{});
  CHECK_FALSE(report.passed());
  // Checked once per tile size and depth (the first seed): four cases of twelve.
  CHECK(std::count_if(report.cases.begin(), report.cases.end(),
                      [](const CaseResult& c) { return c.result.outcome == Outcome::Race; }) == 4);
}

TEST_CASE("the same algorithm with its dependency has no race", "[cpu][race]") {
  const ir::Algorithm algo = testing::load(kLateReader);
  const Executor executor(algo, late_reader_spec());
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (int depth : {0, 1, 2}) {
      const RunResult result = executor.run(testing::options(37, 8, depth, seed));
      INFO("seed " << seed << " depth " << depth << "\n" << result.report());
      CHECK(result.outcome == Outcome::Pass);
      CHECK(result.race_count == 0);
    }
  }
  CHECK(verify(executor, VerifyOptions{}).passed());
}

// Rank 0's tb 0 writes output chunk 0, then sends to rank 1, which forwards the message back to
// rank 0's tb 1; after receiving it, tb 1 reads output chunk 0. Only the round trip through
// rank 1 orders the read after the write.
constexpr std::string_view kRoundTrip = R"xml(
<algo name="round_trip" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="2" s_chunks="1">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="cpy" srcbuf="o" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="0" s_chunks="1">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="rcs" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml";

CollectiveSpec round_trip_spec() {
  CollectiveSpec spec;
  spec.name = "round_trip";
  spec.ngpus = 2;
  spec.input_chunks = {1, 0};
  spec.output_chunks = {2, 0};
  spec.expected = {{{{0, 0}}, {{0, 0}}}, {}};
  return spec;
}

TEST_CASE("order through a message round trip across ranks is no race", "[cpu][race]") {
  const ir::Algorithm algo = testing::load(kRoundTrip);
  const Executor executor(algo, round_trip_spec());
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (int depth : {0, 1, 2}) {
      const RunResult result = executor.run(testing::options(37, 8, depth, seed));
      INFO("seed " << seed << " depth " << depth << "\n" << result.report());
      CHECK(result.outcome == Outcome::Pass);
    }
  }
  CHECK(verify(executor, VerifyOptions{}).passed());

  // Reading before the receive instead: nothing orders it after tb 0's write.
  const std::string receive =
      R"(<step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>)";
  const std::string read =
      R"(<step s="1" type="cpy" srcbuf="o" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>)";
  const std::string early_read = replaced(
      replaced(
          replaced(kRoundTrip, receive, "RECEIVE"), read,
          R"(<step s="1" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>)"),
      "RECEIVE",
      R"(<step s="0" type="cpy" srcbuf="o" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>)");
  const ir::Algorithm early = testing::load(early_read);
  const Executor racy(early, round_trip_spec());
  const RunResult result = racy.run(testing::options(37, 8, 2));
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::Race);
  CHECK(
      any_race_pairs(result, 0, ir::BufferKind::Output, {0, 0, "cpy", true}, {1, 0, "cpy", false}));
}

// Rank 0's tb 0 sends two messages per tile on channel 0; its tb 1 sends on channel 1 only after
// the second of them. Rank 1's tb 0 writes output chunk 0, then receives both; its tb 1 receives
// on channel 1, then reads output chunk 0. At FIFO depth 1 the second send on channel 0 needs
// the slot the first receive frees, so the read follows the write (write → receive 1 → send 2 →
// dependency → send on channel 1 → receive → read). With a deeper FIFO, or an unbounded one,
// the second send need not wait, and nothing orders the two.
constexpr std::string_view kBackPressure = R"xml(
<algo name="back_pressure" proto="Simple" nchannels="2" nchunksperloop="1" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="1" recv="-1" chan="1">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="0" deps="1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="5" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="0" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="3" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="cpy" srcbuf="o" srcoff="0" dstbuf="o" dstoff="4" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml";

CollectiveSpec back_pressure_spec() {
  CollectiveSpec spec;
  spec.name = "back_pressure";
  spec.ngpus = 2;
  spec.input_chunks = {1, 1};
  spec.output_chunks = {0, 5};
  spec.expected = {{}, {{{1, 0}}, {{0, 0}}, {{0, 0}}, {{0, 0}}, {{1, 0}}}};
  return spec;
}

TEST_CASE("order only through FIFO back-pressure holds at depth 1 and not deeper", "[cpu][race]") {
  const ir::Algorithm algo = testing::load(kBackPressure);
  const Executor executor(algo, back_pressure_spec());
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const RunResult shallow = executor.run(testing::options(37, 8, 1, seed));
    INFO("seed " << seed << "\n" << shallow.report());
    CHECK(shallow.outcome == Outcome::Pass);
    for (int depth : {2, 8, 0}) {
      const RunResult deep = executor.run(testing::options(37, 8, depth, seed));
      INFO("depth " << depth << "\n" << deep.report());
      REQUIRE(deep.outcome == Outcome::Race);
      CHECK(any_race_pairs(deep, 1, ir::BufferKind::Output, {0, 0, "cpy", true},
                           {1, 1, "cpy", false}));
    }
  }
  VerifyOptions at_one;
  at_one.fifo_depths = {1};
  CHECK(verify(executor, at_one).passed());
  CHECK_FALSE(verify(executor, VerifyOptions{}).passed());
}

// Rank 0's tb 0 sends, writes output chunk 0, and sends again, learning nothing from others in
// between: both messages carry what it knew from others in one stored copy of its clock, and
// differ only in its own clock. Rank 1's tb 0 receives both; its tb 1 then sends back (waiting
// for the second receive), and rank 0's tb 1 receives that and reads output chunk 0. The read
// follows the write through the second message alone. With the write after both sends,
// nothing orders the two.
constexpr std::string_view kWriteBetweenSends = R"xml(
<algo name="write_between_sends" proto="Simple" nchannels="2" nchunksperloop="1" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="3" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="1" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="cpy" srcbuf="o" srcoff="0" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="2" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="0" recv="-1" chan="1">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="0" deps="1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml";

CollectiveSpec write_between_sends_spec() {
  CollectiveSpec spec;
  spec.name = "write_between_sends";
  spec.ngpus = 2;
  spec.input_chunks = {1, 1};
  spec.output_chunks = {3, 2};
  spec.expected = {{{{0, 0}}, {{1, 0}}, {{0, 0}}}, {{{0, 0}}, {{0, 0}}}};
  return spec;
}

TEST_CASE("messages sent between two receives carry their sender's own clock at each send",
          "[cpu][race]") {
  const ir::Algorithm algo = testing::load(kWriteBetweenSends);
  const Executor executor(algo, write_between_sends_spec());
  const std::string send =
      R"(<step s="2" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>)";
  const std::string write =
      R"(<step s="1" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>)";
  const std::string swapped = replaced(
      replaced(
          replaced(kWriteBetweenSends, send, "SEND"), write,
          R"(<step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>)"),
      "SEND",
      R"(<step s="2" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>)");
  const ir::Algorithm late = testing::load(swapped);
  const Executor racy(late, write_between_sends_spec());
  // Five tiles, and 22,000: three steps in 22,000 tiles are more step executions than clocks of
  // 16 bits count, so the second runs the detector with clocks of 32.
  for (const std::size_t chunk : {std::size_t{37}, std::size_t{22000}}) {
    const std::size_t tile = chunk == 37 ? 8 : 1;
    for (std::uint64_t seed = 1; seed <= (chunk == 37 ? 10u : 2u); ++seed) {
      for (int depth : {0, 1, 2}) {
        const RunResult ordered = executor.run(testing::options(chunk, tile, depth, seed));
        INFO("chunk " << chunk << " seed " << seed << " depth " << depth << "\n"
                      << ordered.report());
        CHECK(ordered.outcome == Outcome::Pass);
        const RunResult result = racy.run(testing::options(chunk, tile, depth, seed));
        INFO(result.report());
        REQUIRE(result.outcome == Outcome::Race);
        CHECK(any_race_pairs(result, 0, ir::BufferKind::Output, {0, 2, "cpy", true},
                             {1, 1, "cpy", false}));
      }
    }
  }
}

TEST_CASE("race freedom is derived only from a deeper FIFO that showed none", "[cpu][race]") {
  VerifyOptions options;
  options.fifo_depths = {1, 2};
  options.tile_elements = {8};
  options.derive_race_freedom = true;
  options.skip_proven_seeds = true;
  SECTION("the deeper run races: the shallower one checks its own, and passes") {
    const ir::Algorithm algo = testing::load(kBackPressure);
    const VerifyReport report = verify(Executor(algo, back_pressure_spec()), options);
    // Reported in the options' order: depth 1 (one seed: proven), then depth 2 (every seed).
    REQUIRE(report.cases.size() == 4);
    CHECK(report.cases[0].options.fifo_depth == 1);
    CHECK(report.cases[0].options.check_races);
    CHECK(report.cases[0].result.outcome == Outcome::Pass);
    for (std::size_t k = 1; k < 4; ++k) {
      CHECK(report.cases[k].options.fifo_depth == 2);
      // Only the first seed checks races; the others' results depend on the interleaving.
      CHECK(report.cases[k].options.check_races == (k == 1));
      CHECK((report.cases[k].result.outcome == Outcome::Race) == (k == 1));
    }
    CHECK_FALSE(report.passed());
  }
  SECTION("the deeper run is race-free: the shallower one inherits it") {
    const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
    options.fifo_depths = {2, 0, 8};
    options.in_place = false;
    const VerifyReport report = verify(Executor(algo, standard_spec(algo, 0)), options);
    REQUIRE(report.cases.size() == 3);
    CHECK(report.passed());
    CHECK(report.cases[0].options.fifo_depth == 2);
    CHECK(report.cases[1].options.fifo_depth == 0);
    CHECK(report.cases[2].options.fifo_depth == 8);
    CHECK_FALSE(report.cases[0].options.check_races);
    CHECK(report.cases[1].options.check_races);  // unbounded: the weakest order, checked
    CHECK_FALSE(report.cases[2].options.check_races);
  }
}

TEST_CASE("results are derived only from a deeper FIFO that was race-free and right",
          "[cpu][race]") {
  VerifyOptions options;
  options.tile_elements = {8};
  options.derive_race_freedom = true;
  options.derive_results = true;
  options.skip_proven_seeds = true;
  options.in_place = false;
  SECTION("race-free and right: the smaller depths run for completion only") {
    const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
    options.fifo_depths = {2, 8, 0};
    const VerifyReport report = verify(Executor(algo, standard_spec(algo, 0)), options);
    REQUIRE(report.cases.size() == 3);
    CHECK(report.passed());
    CHECK(report.cases[0].options.completion_only);        // depth 2
    CHECK(report.cases[1].options.completion_only);        // depth 8
    CHECK_FALSE(report.cases[2].options.completion_only);  // unbounded: moved and checked
    CHECK(report.cases[2].options.check_races);
  }
  SECTION("a deeper run that races leaves every depth to check its data") {
    const ir::Algorithm algo = testing::load(kBackPressure);
    options.fifo_depths = {1, 2};
    const VerifyReport report = verify(Executor(algo, back_pressure_spec()), options);
    for (const CaseResult& c : report.cases) CHECK_FALSE(c.options.completion_only);
    CHECK_FALSE(report.passed());
  }
  SECTION("completion only still finds a deadlock at the smaller depth") {
    // The ring holds a message while it waits for room: it deadlocks at depth 1 (deadlock_test).
    const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
    options.fifo_depths = {1, 0};
    const VerifyReport report = verify(Executor(algo, standard_spec(algo, 0)), options);
    // Depth 1's three seeds (none proves it), then the unbounded run.
    REQUIRE(report.cases.size() == 4);
    for (std::size_t k = 0; k < 3; ++k) {
      CHECK(report.cases[k].options.fifo_depth == 1);
      CHECK(report.cases[k].options.completion_only);
      CHECK(report.cases[k].result.outcome == Outcome::Deadlock);
    }
    CHECK(report.cases[3].result.outcome == Outcome::Pass);
    CHECK_FALSE(report.passed());
  }
}

TEST_CASE("the sweep reports the same cases on any number of threads", "[cpu][race][verify]") {
  // Each case by what it ran and what it found: threads change only who runs it.
  auto summary = [](const VerifyReport& report) {
    std::vector<std::string> lines;
    for (const CaseResult& c : report.cases) {
      const RunOptions& o = c.options;
      lines.push_back(std::to_string(o.in_place) + " T" + std::to_string(o.tile_elements) + " D" +
                      std::to_string(o.fifo_depth) + " s" + std::to_string(o.seed) + " r" +
                      std::to_string(o.check_races) + " c" + std::to_string(o.completion_only) +
                      " " + std::to_string(static_cast<int>(c.result.outcome)));
    }
    lines.push_back("depth " + (report.min_fifo_depth ? std::to_string(*report.min_fifo_depth)
                                                      : std::string("none")));
    return lines;
  };
  const ir::Algorithm ring = testing::load(testing::kRingAllreduce3);  // deadlocks at depth 1
  const ir::Algorithm racy = testing::load(kBackPressure);             // races from depth 2 up
  const ir::Algorithm stuck = testing::load(testing::kReceiveFirstAllreduce2);
  struct Case {
    const char* name;
    const ir::Algorithm* algo;
    CollectiveSpec spec;
    std::vector<int> depths;
  };
  const std::vector<Case> cases = {
      {"ring, both modes, deadlocking at depth 1", &ring, standard_spec(ring, 0), {1, 2, 8, 0}},
      {"a race at the deeper depths only", &racy, back_pressure_spec(), {1, 2, 8}},
      {"deadlocked at every depth", &stuck, standard_spec(stuck, 0), {2, 8}},
  };
  for (const Case& c : cases) {
    for (const bool derive : {false, true}) {
      VerifyOptions options;
      options.fifo_depths = c.depths;
      options.derive_race_freedom = derive;
      options.derive_results = derive;
      options.skip_proven_seeds = derive;
      options.threads = 1;
      const Executor executor(*c.algo, c.spec);
      const std::vector<std::string> one = summary(verify(executor, options));
      for (const int threads : {2, 3, 0}) {
        INFO(c.name << ", derived " << derive << ", " << threads << " threads");
        options.threads = threads;
        CHECK(summary(verify(executor, options)) == one);
      }
    }
  }
}

// Rank 0's tb 0 fills scratch chunk 0; tbs 1 and 2 both send it, unordered with each other;
// tb 3 overwrites it after waiting for both sends.
constexpr std::string_view kConcurrentReads = R"xml(
<algo name="concurrent_reads" proto="Simple" nchannels="2" nchunksperloop="2" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="1">
    <tb id="0" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="s" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="0" deps="0" hasdep="1"/>
    </tb>
    <tb id="2" send="1" recv="-1" chan="1">
      <step s="0" type="s" srcbuf="s" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="0" deps="0" hasdep="1"/>
    </tb>
    <tb id="3" send="-1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="1" deps="0" hasdep="0"/>
      <step s="1" type="cpy" srcbuf="i" srcoff="1" dstbuf="s" dstoff="0" cnt="1" depid="2" deps="0" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="2" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="0" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml";

CollectiveSpec concurrent_reads_spec() {
  CollectiveSpec spec;
  spec.name = "concurrent_reads";
  spec.ngpus = 2;
  spec.input_chunks = {2, 0};
  spec.output_chunks = {0, 2};
  spec.expected = {{}, {{{0, 0}}, {{0, 0}}}};
  return spec;
}

TEST_CASE("unordered reads are no race; a write must follow every one of them", "[cpu][race]") {
  const ir::Algorithm algo = testing::load(kConcurrentReads);
  const Executor executor(algo, concurrent_reads_spec());
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const RunResult result = executor.run(testing::options(37, 8, 2, seed));
    INFO("seed " << seed << "\n" << result.report());
    CHECK(result.outcome == Outcome::Pass);
  }

  // tb 3 no longer waits for tb 1: its write races with tb 1's read only.
  const ir::Algorithm forgetful = testing::load(replaced(
      kConcurrentReads, R"(cnt="0" depid="1" deps="0")", R"(cnt="0" depid="-1" deps="-1")"));
  const Executor racy(forgetful, concurrent_reads_spec());
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const RunResult result = racy.run(testing::options(37, 8, 2, seed));
    INFO("seed " << seed << "\n" << result.report());
    REQUIRE(result.outcome == Outcome::Race);
    for (const Race& race : result.races) {
      CHECK(race.buffer == ir::BufferKind::Scratch);
      CHECK(pairs(race, {1, 0, "s", false}, {3, 1, "cpy", true}));
    }
  }
}

// A 2-rank allreduce: tb 0 sends the whole input to the peer, tb 1 receives the peer's into
// scratch, tb 2 copies the input to the output and adds scratch once received. Out of place
// that is race-free; in place the output is the input, so tb 2's writes race with tb 0's send
// unless they wait for it.
constexpr std::string_view kDirectAllreduce = R"xml(
<algo name="direct_allreduce_2" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="2" o_chunks="2" s_chunks="2">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="2" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="re" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="1" deps="0" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="2">
    <tb id="0" send="0" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="2" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="re" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="1" deps="0" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml";

TEST_CASE("in-place aliasing makes input and output one location", "[cpu][race]") {
  const ir::Algorithm algo = testing::load(kDirectAllreduce);
  const Executor executor(algo, standard_spec(algo, 0));
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    RunOptions options = testing::options(37, 8, 2, seed);
    const RunResult out_of_place = executor.run(options);
    INFO("seed " << seed << "\n" << out_of_place.report());
    CHECK(out_of_place.outcome == Outcome::Pass);

    options.in_place = true;
    const RunResult in_place = executor.run(options);
    INFO(in_place.report());
    REQUIRE(in_place.outcome == Outcome::Race);
    for (int rank : {0, 1}) {
      CHECK(any_race_pairs(in_place, rank, ir::BufferKind::Input, {0, 0, "s", false},
                           {2, 0, "cpy", true}));
    }
  }

  // Copying (in place, onto itself) only after the send makes both modes race-free.
  std::string waiting(kDirectAllreduce);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string send_step =
        R"(type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="2" depid="-1" deps="-1" hasdep="0")";
    const std::string copy_step =
        R"(type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1")";
    waiting.replace(
        waiting.find(send_step), send_step.size(),
        R"(type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="2" depid="-1" deps="-1" hasdep="1")");
    waiting.replace(
        waiting.find(copy_step), copy_step.size(),
        R"(type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="0" deps="0")");
  }
  const ir::Algorithm fixed = testing::load(waiting);
  const Executor fixed_executor(fixed, standard_spec(fixed, 0));
  const VerifyReport report = verify(fixed_executor, VerifyOptions{});
  for (const CaseResult& c : report.cases) {
    INFO((c.options.in_place ? "in place" : "out of place") << "\n" << c.result.report());
    CHECK(c.result.outcome == Outcome::Pass);
  }
  CHECK(report.passed());
}

TEST_CASE("a race in a run that deadlocks is kept with the deadlock", "[cpu][race]") {
  // The back-pressure algorithm at depth 2 races; on a rank-1 tb that never receives its second
  // message it also deadlocks, and the race found before is still reported.
  const std::string stuck = replaced(
      kBackPressure,
      R"(<step s="2" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>)",
      R"(<step s="2" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>)");
  const ir::Algorithm algo = testing::read_unvalidated(stuck);
  const Executor executor(algo, back_pressure_spec());
  const RunResult result = executor.run(testing::options(37, 64, 2));
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::Deadlock);
  CHECK(result.race_count > 0);
  CHECK_THAT(result.report(), Catch::Contains("with no dependency ordering them"));
}

TEST_CASE("the race check can be turned off", "[cpu][race]") {
  const ir::Algorithm algo = testing::load(kBackPressure);
  const Executor executor(algo, back_pressure_spec());
  RunOptions options = testing::options(37, 8, 2);
  options.check_races = false;
  const RunResult result = executor.run(options);
  CHECK(result.outcome != Outcome::Race);
  CHECK(result.races.empty());
  CHECK(result.race_count == 0);
  CHECK(to_string(Outcome::Race) == "data race");
}

TEST_CASE("race freedom is the same at every tile count", "[cpu][race]") {
  // What the sweep's derivation across tiles rests on: a tile's accesses touch only that tile's
  // locations, its steps are ordered at least as a one-tile run's are (the other tiles only add
  // order), and a run of fewer tiles is the start of a run of more. Racy and race-free
  // algorithms, at 1, 5 and 37 tiles of 37 elements, at every depth where each run completes.
  struct Case {
    const char* name;
    std::string xml;
    CollectiveSpec spec;
    bool in_place = false;
  };
  const std::string ring(testing::kRingAllreduce3);
  const std::vector<Case> cases = {
      {"late reader, waiting", std::string(kLateReader), late_reader_spec()},
      {"late reader, not waiting", without_copy_wait(), late_reader_spec()},
      {"round trip", std::string(kRoundTrip), round_trip_spec()},
      {"back-pressure", std::string(kBackPressure), back_pressure_spec()},
      {"concurrent reads", std::string(kConcurrentReads), concurrent_reads_spec()},
      {"concurrent reads, a write not waiting",
       replaced(kConcurrentReads, R"(cnt="0" depid="1" deps="0")",
                R"(cnt="0" depid="-1" deps="-1")"),
       concurrent_reads_spec()},
      {"direct allreduce, out of place", std::string(kDirectAllreduce), {}, false},
      {"direct allreduce, in place", std::string(kDirectAllreduce), {}, true},
      {"ring allreduce", ring, {}, false},
  };
  int raced = 0;
  for (const Case& c : cases) {
    const ir::Algorithm algo = testing::read_unvalidated(c.xml);
    const Executor executor(algo, c.spec.ngpus > 0 ? c.spec : standard_spec(algo, 0));
    for (const int depth : {1, 2, 8, 0}) {
      std::vector<bool> races;
      for (const std::size_t tile : {37u, 8u, 1u}) {
        RunOptions options = testing::options(37, tile, depth, 1);
        options.in_place = c.in_place;
        const RunResult result = executor.run(options);
        if (result.outcome == Outcome::Deadlock) break;
        races.push_back(result.race_count > 0);
      }
      if (races.size() < 3) continue;
      INFO(c.name << " at depth " << depth);
      CHECK(races[1] == races[0]);
      CHECK(races[2] == races[0]);
      raced += races[0] ? 1 : 0;
    }
  }
  CHECK(raced >= 4);  // the racy cases did race
}

TEST_CASE("the sweep checks races at the fewest tiles of a call mode and derives the others",
          "[cpu][race]") {
  VerifyOptions options;
  options.tile_elements = {8, 64};  // 5 tiles, then 1
  options.derive_race_freedom = true;
  options.derive_results = true;
  options.skip_proven_seeds = true;
  options.in_place = false;
  SECTION("race-free: only the one-tile group's weakest depth checks") {
    const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
    options.fifo_depths = {2, 8};
    const VerifyReport report = verify(Executor(algo, standard_spec(algo, 0)), options);
    // By group (T 8, then T 64), by depth in the options' order.
    REQUIRE(report.cases.size() == 4);
    CHECK(report.passed());
    for (const CaseResult& c : report.cases) {
      INFO("T " << c.options.tile_elements << " D " << c.options.fifo_depth);
      CHECK(c.options.check_races == (c.options.tile_elements == 64 && c.options.fifo_depth == 8));
      // The weakest depth of each group moves data: T 8's result is checked, not derived.
      CHECK(c.options.completion_only == (c.options.fifo_depth == 2));
    }
  }
  SECTION("racy: the one-tile group finds it, and the others check for themselves") {
    const ir::Algorithm algo = testing::load(kBackPressure);
    options.fifo_depths = {1, 2};
    const VerifyReport report = verify(Executor(algo, back_pressure_spec()), options);
    CHECK_FALSE(report.passed());
    bool five_tiles_checked = false;
    for (const CaseResult& c : report.cases) {
      INFO("T " << c.options.tile_elements << " D " << c.options.fifo_depth << " seed "
                << c.options.seed << "\n"
                << c.result.report());
      if (c.options.fifo_depth == 2 && c.options.seed == 1) {
        CHECK(c.options.check_races);
        CHECK(c.result.outcome == Outcome::Race);
        five_tiles_checked = five_tiles_checked || c.options.tile_elements == 8;
      }
      if (c.options.fifo_depth == 1 && c.options.seed == 1) {
        CHECK(c.result.outcome == Outcome::Pass);  // checked for itself: depth 2 raced
        CHECK(c.options.check_races);
      }
    }
    CHECK(five_tiles_checked);
  }
}

}  // namespace
}  // namespace weft::cpu
