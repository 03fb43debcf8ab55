// IR that validation rejects, and wrong calls, end a run with Outcome::Error and a message that
// says where and why: never a crash, never a hang.
#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

// A 2-rank custom algorithm: rank 0's single threadblock runs `sender`, rank 1's runs
// `receiver` (step elements), over channel 0.
std::string two_ranks(std::string_view sender, std::string_view receiver) {
  return std::string(
             R"(<algo name="pair" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
)") + std::string(sender) +
         R"(
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
)" + std::string(receiver) +
         R"(
    </tb>
  </gpu>
</algo>)";
}

constexpr std::string_view kSend2 =
    R"(<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="2" depid="-1" deps="-1" hasdep="0"/>)";
constexpr std::string_view kSend1Twice =
    R"(<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
       <step s="1" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>)";
constexpr std::string_view kReceive1 =
    R"(<step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>)";

RunResult execute(const std::string& xml, RunOptions options) {
  const ir::Algorithm algo = testing::read_unvalidated(xml);
  const Executor executor(algo, CollectiveSpec{});
  std::vector<RankBuffers> buffers = executor.make_inputs(options);
  RunResult result = executor.execute(options, buffers);
  // min_fifo_depth on the same IR must not crash either.
  (void)executor.min_fifo_depth(options);
  return result;
}

TEST_CASE("a receive whose cnt differs from the message's names both steps", "[cpu][robust]") {
  const RunResult result = execute(two_ranks(kSend2, kReceive1), testing::options(4, 4, 2));
  INFO(result.report());
  CHECK(result.outcome == Outcome::Error);
  CHECK(result.message ==
        "gpu 1 / tb 0 / step 0 ('r', cnt 1, tile 0) received the message that gpu 0 / tb 0 / "
        "step 0 sent with cnt 2 in tile 0: the send and receive steps on this connection do not "
        "match");
}

TEST_CASE("more sends than receives on a connection", "[cpu][robust]") {
  // One tile: the extra message is left over at the end.
  const RunResult left = execute(two_ranks(kSend1Twice, kReceive1), testing::options(4, 4, 0));
  CHECK(left.outcome == Outcome::Error);
  CHECK(left.message ==
        "rank 0 sent 1 message(s) to rank 1 on channel 0 that no step received (the send and "
        "receive steps on this connection do not match)");
  // Several tiles: the receiver's tile 1 gets the sender's second message of tile 0.
  const RunResult shifted = execute(two_ranks(kSend1Twice, kReceive1), testing::options(4, 2, 0));
  CHECK(shifted.outcome == Outcome::Error);
  CHECK_THAT(shifted.message, Catch::Contains("tile 1) received the message that gpu 0 / tb 0 / "
                                              "step 1 sent with cnt 1 in tile 0"));
}

TEST_CASE("offsets outside a buffer, bad peers and dependencies are refused", "[cpu][robust]") {
  struct Case {
    std::string xml;
    std::string message;
  };
  const std::string send_outside =
      R"(<step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="-1" cnt="2" depid="-1" deps="-1" hasdep="0"/>)";
  const std::string missing_tb =
      R"(<step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="3" deps="0" hasdep="0"/>)";
  const std::string missing_step =
      R"(<step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="0" deps="4" hasdep="0"/>)";
  const std::string no_buffer =
      R"(<step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>)";
  std::string self_peer = two_ranks(std::string(kSend2), std::string(kReceive1));
  self_peer.replace(self_peer.find(R"(send="1")"), 8, R"(send="0")");
  std::string send_without_peer = two_ranks(std::string(kSend2), std::string(kReceive1));
  send_without_peer.replace(send_without_peer.find(R"(send="1")"), 8, R"(send="-1")");
  for (const Case& c : {
           Case{two_ranks(send_outside, kReceive1),
                "gpu 0 / tb 0 / step 0: source i[1..3) lies outside the input buffer (2 chunks)"},
           Case{two_ranks(kSend1Twice, missing_tb),
                "gpu 1 / tb 0 / step 0: depends on threadblock 3, which rank 1 does not have"},
           Case{two_ranks(kSend1Twice, missing_step),
                "gpu 1 / tb 0 / step 0: depends on step 4 of tb 0, which has 1 steps"},
           Case{two_ranks(kSend1Twice, no_buffer),
                "gpu 1 / tb 0 / step 0: the step needs a destination buffer"},
           Case{self_peer, "gpu 0 / tb 0: peer 0 is not another rank"},
           Case{send_without_peer,
                "gpu 0 / tb 0 / step 0: step 's' sends in a threadblock with no send peer"},
       }) {
    const RunResult result = execute(c.xml, testing::options(4, 4, 2));
    INFO(c.xml);
    CHECK(result.outcome == Outcome::Error);
    CHECK(result.message == c.message);
  }
}

TEST_CASE("two threadblocks on one connection are refused", "[cpu][robust]") {
  const std::string xml =
      R"(<algo name="twice" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0"/>
    <tb id="1" send="1" recv="-1" chan="0"/>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="0" s_chunks="0"/>
</algo>)";
  const RunResult result = execute(xml, testing::options(4, 4, 2));
  CHECK(result.outcome == Outcome::Error);
  CHECK(result.message == "gpu 0 / tb 1: a second threadblock sends to rank 1 on channel 0");
}

TEST_CASE("a dependency cycle deadlocks instead of hanging", "[cpu][robust]") {
  const std::string xml =
      R"(<algo name="cycle" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="1" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="1" deps="0" hasdep="1"/>
    </tb>
    <tb id="1" send="-1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="0" deps="0" hasdep="1"/>
    </tb>
  </gpu>
</algo>)";
  const RunResult result = execute(xml, testing::options(4, 4, 2));
  INFO(result.report());
  CHECK(result.outcome == Outcome::Deadlock);
  CHECK(testing::blocked_mentions(result, 0, 0,
                                  "dependency on tb 1 step 0 (it is at tile 0 step 0)"));
  CHECK(testing::blocked_mentions(result, 0, 1,
                                  "dependency on tb 0 step 0 (it is at tile 0 step 0)"));
}

TEST_CASE("wrong calls are refused", "[cpu][robust]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  const RunOptions good = testing::options(37, 8, 2);

  std::vector<RankBuffers> short_buffers = executor.make_inputs(good);
  short_buffers[2].output.resize(3);
  const RunResult sizes = executor.execute(good, short_buffers);
  CHECK(sizes.outcome == Outcome::Error);
  CHECK(sizes.message == "rank 2 output buffer has 3 bytes; 3 chunks of 37 elements need 444");

  std::vector<RankBuffers> too_few(2);
  CHECK(executor.execute(good, too_few).message == "2 rank buffers given for 3 ranks");

  RunOptions bad = good;
  bad.chunk_elements = 0;
  CHECK(executor.run(bad).outcome == Outcome::Error);
  bad = good;
  bad.tile_elements = 0;
  CHECK(executor.run(bad).outcome == Outcome::Error);
  bad = good;
  bad.fifo_depth = -1;
  CHECK(executor.run(bad).message == "FIFO depth -1 is negative");
  bad = good;
  bad.dtype = DataType::Uint8;
  bad.op = ReduceOp::Avg;
  CHECK(executor.run(bad).message ==
        "unsupported: reduction 'avg' on uint8; avg is defined for floating-point types only");
}

TEST_CASE("a spec that does not fit the algorithm is refused", "[cpu][robust]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const RunOptions options = testing::options(37, 8, 2);
  CHECK_THAT(Executor(algo, CollectiveSpec{}).run(options).message,
             Catch::StartsWith("no collective spec to check"));
  CollectiveSpec spec = standard_spec(algo, 0);
  spec.expected.set(1, 2, {{0, 3}});  // rank 0 has input chunks 0..2
  CHECK(Executor(algo, spec).run(options).message ==
        "the collective spec has rank 1 output chunk 2 take input chunk 3 of rank 0, which does "
        "not exist");
  spec = standard_spec(algo, 0);
  spec.ngpus = 4;
  CHECK(Executor(algo, spec).run(options).outcome == Outcome::Error);
}

TEST_CASE("an algorithm whose rank count disagrees with its gpus is refused", "[cpu][robust]") {
  ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  algo.gpus.pop_back();
  const Executor executor(algo, CollectiveSpec{});
  std::vector<RankBuffers> none;
  const RunResult result = executor.execute(testing::options(37, 8, 2), none);
  CHECK(result.outcome == Outcome::Error);
  CHECK(result.message == "ngpus is 3 but the algorithm has 2 gpu elements");
  CHECK(executor.make_inputs(testing::options(37, 8, 2)).empty());
}

}  // namespace
}  // namespace weft::cpu

namespace weft::cpu {
namespace {

TEST_CASE("absurd chunk and tile sizes are refused or handled", "[cpu][robust]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  RunOptions options = testing::options(std::size_t{1} << 62, 8, 2);
  CHECK(executor.make_inputs(options).empty());
  const RunResult huge = executor.run(options);
  CHECK(huge.outcome == Outcome::Error);
  CHECK_THAT(huge.message, Catch::Contains("elements per chunk are too many"));
  CHECK_FALSE(executor.min_fifo_depth(options).has_value());
  // A tile larger than any chunk is one tile, however large.
  options = testing::options(37, SIZE_MAX, 2);
  const RunResult one_tile = executor.run(options);
  CHECK(one_tile.outcome == Outcome::Pass);
  CHECK(one_tile.steps_executed == 15);
}

}  // namespace
}  // namespace weft::cpu
