// Deadlocks (docs/architecture.md §2.4, §3): reported with every blocked threadblock, its step and
// what it waits for; min_fifo_depth finds the least depth at which an algorithm completes.
#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

TEST_CASE("an algorithm that deadlocks at every depth", "[cpu][deadlock]") {
  const ir::Algorithm algo = testing::load(testing::kReceiveFirstAllreduce2);
  const Executor executor(algo, standard_spec(algo, 0));
  for (int depth : {1, 2, 8, 0}) {
    const RunResult result = executor.run(testing::options(37, 8, depth));
    INFO(result.report());
    REQUIRE(result.outcome == Outcome::Deadlock);
    CHECK_THAT(result.message, Catch::Contains("deadlock"));
    REQUIRE(result.blocked.size() == 2);
    for (const BlockedThreadblock& tb : result.blocked) {
      CHECK(tb.threadblock == 0);
      CHECK(tb.tile == 0);
      CHECK(tb.step == 0);
      CHECK(tb.step_type == "rrc");
    }
    CHECK(testing::blocked_mentions(result, 0, 0, "receive from rank 1 on channel 0: FIFO empty"));
    CHECK(testing::blocked_mentions(result, 1, 0, "receive from rank 0 on channel 0: FIFO empty"));
    CHECK_THAT(result.report(), Catch::Contains("rank 0 tb 0 tile 0 step 0 (rrc): receive from "
                                                "rank 1 on channel 0: FIFO empty"));
  }
  CHECK_FALSE(executor.min_fifo_depth(testing::options(37, 8, 2)).has_value());
}

TEST_CASE("the ring deadlocks at depth 1 and completes at depths 2 and 8", "[cpu][deadlock]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const RunResult stuck = executor.run(testing::options(37, 8, 1, seed));
    INFO(stuck.report());
    REQUIRE(stuck.outcome == Outcome::Deadlock);
    // Every rank has sent its first chunk and holds the next message while it waits for room.
    REQUIRE(stuck.blocked.size() == 3);
    for (int r = 0; r < 3; ++r) {
      const BlockedThreadblock& tb = stuck.blocked[static_cast<std::size_t>(r)];
      CHECK(tb.rank == r);
      CHECK(tb.tile == 0);
      CHECK(tb.step == 1);
      CHECK(tb.step_type == "rrs");
      CHECK(tb.waiting_for ==
            "send to rank " + std::to_string((r + 1) % 3) + " on channel 0: FIFO full (depth 1)");
    }
    CHECK(executor.run(testing::options(37, 8, 2, seed)).outcome == Outcome::Pass);
    CHECK(executor.run(testing::options(37, 8, 8, seed)).outcome == Outcome::Pass);
  }
  CHECK(executor.min_fifo_depth(testing::options(37, 8, 2)) == 2);
}

TEST_CASE("a completion-only run, cached or not, completes where a data run does",
          "[cpu][deadlock]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  RunCache empty;  // nothing made yet: a completion-only run takes no buffers
  RunCache filled;
  CHECK(executor.run(testing::options(37, 8, 8), filled).outcome == Outcome::Pass);
  for (const int depth : {1, 2, 8}) {
    RunOptions options = testing::options(37, 8, depth);
    const Outcome moved = executor.run(options).outcome;
    options.completion_only = true;
    INFO("depth " << depth);
    CHECK(executor.run(options).outcome == moved);
    CHECK(executor.run(options, empty).outcome == moved);
    CHECK(executor.run(options, filled).outcome == moved);
    CHECK(moved == (depth == 1 ? Outcome::Deadlock : Outcome::Pass));
  }
  // The cache made nothing for those runs: a data run after them is checked as before.
  CHECK(executor.run(testing::options(37, 8, 2), empty).outcome == Outcome::Pass);
}

TEST_CASE("a receive nobody sends to names the missing sender", "[cpu][deadlock]") {
  // Rank 1 waits for a message from rank 0 on channel 1; rank 0 sends on channel 0.
  const ir::Algorithm algo = testing::read_unvalidated(R"xml(
<algo name="wrong_channel" proto="Simple" nchannels="2" nchunksperloop="1" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  const Executor executor(algo, CollectiveSpec{});
  RunOptions options = testing::options(4, 4, 2);
  std::vector<RankBuffers> buffers = executor.make_inputs(options);
  const RunResult result = executor.execute(options, buffers);
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::Deadlock);
  REQUIRE(result.blocked.size() == 1);
  CHECK(result.blocked[0].waiting_for ==
        "receive from rank 0 on channel 1: FIFO empty (no threadblock of that rank sends on it)");
}

TEST_CASE("a dependency that can never be met is reported with where its target is",
          "[cpu][deadlock]") {
  // tb 1 of rank 1 waits for tb 0's receive, which waits for a message rank 0 sends only after
  // receiving from rank 1's tb 1.
  const ir::Algorithm algo = testing::load(R"xml(
<algo name="cross_wait" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="1" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="0" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="0" deps="0" hasdep="0"/>
      <step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  const Executor executor(algo, CollectiveSpec{});
  RunOptions options = testing::options(4, 4, 0);
  std::vector<RankBuffers> buffers = executor.make_inputs(options);
  const RunResult result = executor.execute(options, buffers);
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::Deadlock);
  REQUIRE(result.blocked.size() == 3);
  CHECK(testing::blocked_mentions(result, 1, 1,
                                  "dependency on tb 0 step 0 (it is at tile 0 step 0)"));
  CHECK(result.blocked[2].step_type == "nop");
  CHECK(testing::blocked_mentions(result, 0, 0, "receive from rank 1 on channel 0: FIFO empty"));
  CHECK(testing::blocked_mentions(result, 1, 0, "receive from rank 0 on channel 0: FIFO empty"));
  CHECK(result.message.find("unbounded") != std::string::npos);
}

TEST_CASE("the least depth is found beyond the first probes", "[cpu][deadlock]") {
  // Each rank sends three chunks before it receives any: one tile needs three slots.
  const ir::Algorithm algo = testing::load(R"xml(
<algo name="send_three_first_2" proto="Simple" nchannels="1" nchunksperloop="3" ngpus="2" coll="allreduce" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="3" o_chunks="3" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="2" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="4" type="rrc" srcbuf="i" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="5" type="rrc" srcbuf="i" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="3" o_chunks="3" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="2" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="4" type="rrc" srcbuf="i" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="5" type="rrc" srcbuf="i" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  const Executor executor(algo, standard_spec(algo, 0));
  CHECK(executor.min_fifo_depth(testing::options(37, 64, 2)) == 3);  // one tile
  CHECK(executor.min_fifo_depth(testing::options(37, 8, 2)) == 3);   // five tiles
  CHECK(executor.run(testing::options(37, 8, 2)).outcome == Outcome::Deadlock);
  CHECK(executor.run(testing::options(37, 8, 3)).outcome == Outcome::Pass);
}

}  // namespace
}  // namespace weft::cpu
