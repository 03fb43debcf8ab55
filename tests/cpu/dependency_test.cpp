// Dependencies (docs/architecture.md §2.6): a step waits for another threadblock's step in the same
// tile; several waits are chained through nops; threadblocks otherwise run ahead independently.
#include <algorithm>
#include <map>
#include <tuple>

#include <catch2/catch.hpp>

#include "cpu_test_support.h"
#include "weft/cpu/verify.h"

namespace weft::cpu {
namespace {

// Rank 1 sends its chunks 0 and 1 to rank 0 over two channels; rank 0 receives them into
// scratch on tbs 0 and 1, and tb 2 sums them into its output: a nop waits for tb 0, the cpy for
// tb 1, the re needs nothing more.
constexpr std::string_view kGatherSum = R"xml(
<algo name="gather_sum" proto="Simple" nchannels="2" nchunksperloop="2" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="0" o_chunks="1" s_chunks="2">
    <tb id="0" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="-1" recv="1" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="2" send="-1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="0" deps="0" hasdep="0"/>
      <step s="1" type="cpy" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="1" deps="0" hasdep="0"/>
      <step s="2" type="re" srcbuf="s" srcoff="1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="0" recv="-1" chan="1">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml";

CollectiveSpec gather_sum_spec() {
  CollectiveSpec spec;
  spec.name = "gather_sum";
  spec.ngpus = 2;
  spec.input_chunks = {0, 2};
  spec.output_chunks = {1, 0};
  spec.expected = {{{{1, 0}, {1, 1}}}, {}};
  return spec;
}

// Position of each (rank, tb, tile, step) execution in a trace.
using Key = std::tuple<int, int, int, int>;
std::map<Key, std::size_t> positions(const RunResult& result) {
  std::map<Key, std::size_t> at;
  for (std::size_t k = 0; k < result.trace.size(); ++k) {
    const ExecutedStep& s = result.trace[k];
    at[{s.rank, s.threadblock, s.tile, s.step}] = k;
  }
  return at;
}

TEST_CASE("waits chained through a nop hold in every tile and every interleaving",
          "[cpu][dependencies]") {
  const ir::Algorithm algo = testing::load(kGatherSum);
  const Executor executor(algo, gather_sum_spec());
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    RunOptions options = testing::options(37, 8, 2, seed);
    options.record_trace = true;
    const RunResult result = executor.run(options);
    INFO("seed " << seed << "\n" << result.report());
    REQUIRE(result.outcome == Outcome::Pass);
    REQUIRE(result.trace.size() == result.steps_executed);
    const auto at = positions(result);
    for (int tile = 0; tile < 5; ++tile) {
      CHECK(at.at({0, 0, tile, 0}) < at.at({0, 2, tile, 0}));  // the nop waits for tb 0
      CHECK(at.at({0, 1, tile, 0}) < at.at({0, 2, tile, 1}));  // the cpy waits for tb 1
      CHECK(at.at({0, 2, tile, 0}) < at.at({0, 2, tile, 1}));  // program order
    }
  }
}

TEST_CASE("without the nop's wait some interleavings read scratch before it is written",
          "[cpu][dependencies]") {
  std::string xml(kGatherSum);
  const std::string wait = R"(cnt="0" depid="0" deps="0")";
  xml.replace(xml.find(wait), wait.size(), R"(cnt="0" depid="-1" deps="-1")");
  const ir::Algorithm algo = testing::load(xml);
  const Executor executor(algo, gather_sum_spec());
  int wrong = 0;
  int passed = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    // The schedules themselves are under test here: the race check would fail every run.
    RunOptions options = testing::options(37, 8, 2, seed);
    options.check_races = false;
    const RunResult result = executor.run(options);
    if (result.outcome == Outcome::Pass) ++passed;
    if (result.outcome == Outcome::WrongResult) {
      ++wrong;
      CHECK(result.mismatches.front().rank == 0);
      CHECK(result.mismatches.front().chunk == 0);
      CHECK_THAT(result.mismatches.front().found, Catch::Contains("poison"));
    }
  }
  CHECK(wrong > 0);
  CHECK(passed > 0);
  CHECK(wrong + passed == 40);
  // The default sweep's twelve schedules include one that shows it.
  CHECK_FALSE(verify(executor, VerifyOptions{}).passed());
}

TEST_CASE("threadblocks run ahead of each other by whole tiles", "[cpu][dependencies]") {
  // With unbounded FIFOs rank 1's senders need nobody; in some interleaving one of them finishes
  // its last tile before rank 0 has received anything.
  const ir::Algorithm algo = testing::load(kGatherSum);
  const Executor executor(algo, gather_sum_spec());
  bool ran_ahead = false;
  for (std::uint64_t seed = 1; seed <= 20 && !ran_ahead; ++seed) {
    RunOptions options = testing::options(37, 8, 0, seed);
    options.record_trace = true;
    const RunResult result = executor.run(options);
    REQUIRE(result.outcome == Outcome::Pass);
    const auto at = positions(result);
    ran_ahead = at.at({1, 0, 4, 0}) < at.at({0, 0, 0, 0});
  }
  CHECK(ran_ahead);
}

}  // namespace
}  // namespace weft::cpu
