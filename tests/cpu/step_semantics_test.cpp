// The effect of each step type (docs/architecture.md §2.5), on tiny custom algorithms whose int32
// inputs say where every value came from (1000·rank + 100·chunk + element). Chunks of 5 elements in
// tiles of 2, so every step runs for three tiles, the last one short.
#include <catch2/catch.hpp>

#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

using testing::kInt32Poison;
using testing::label;

constexpr std::size_t kChunk = 5;

// Runs `xml` (a custom collective) on labelled inputs, with several seeds; returns the buffers
// after the last run, having required that every seed gives the same ones.
std::vector<RankBuffers> run_labelled(std::string_view xml) {
  const ir::Algorithm algo = testing::load(xml);
  const Executor executor(algo, CollectiveSpec{});
  std::vector<RankBuffers> last;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    RunOptions options = testing::options(kChunk, 2, 2, seed);
    options.dtype = DataType::Int32;
    std::vector<RankBuffers> buffers = executor.make_inputs(options);
    for (int r = 0; r < algo.ngpus; ++r) {
      const int chunks = algo.gpus[static_cast<std::size_t>(r)].input_chunks;
      buffers[static_cast<std::size_t>(r)].input = testing::labelled_int32(r, chunks, kChunk);
    }
    const RunResult result = executor.execute(options, buffers);
    INFO(result.report());
    REQUIRE(result.outcome == Outcome::Pass);
    if (seed > 1) {
      for (std::size_t r = 0; r < buffers.size(); ++r) {
        REQUIRE(buffers[r].output == last[r].output);
      }
    }
    last = std::move(buffers);
  }
  return last;
}

std::int32_t out(const std::vector<RankBuffers>& buffers, int rank, int chunk, std::size_t e) {
  return testing::int32_at(buffers[static_cast<std::size_t>(rank)].output, kChunk, chunk, e);
}

TEST_CASE("s sends its source and r stores the message in its destination", "[cpu][steps]") {
  const auto buffers = run_labelled(R"xml(
<algo name="send_receive" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="2" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  for (std::size_t e = 0; e < kChunk; ++e) {
    CHECK(out(buffers, 1, 0, e) == label(0, 1, e));
    CHECK(out(buffers, 1, 1, e) == kInt32Poison);  // nobody writes it
  }
}

TEST_CASE("rcs stores the message and forwards it unchanged", "[cpu][steps]") {
  const auto buffers = run_labelled(R"xml(
<algo name="forward" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="3" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="0" o_chunks="2" s_chunks="0">
    <tb id="0" send="2" recv="0" chan="0">
      <step s="0" type="rcs" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="0" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  for (std::size_t e = 0; e < kChunk; ++e) {
    CHECK(out(buffers, 1, 1, e) == label(0, 0, e));
    CHECK(out(buffers, 1, 0, e) == kInt32Poison);
    CHECK(out(buffers, 2, 0, e) == label(0, 0, e));
  }
}

TEST_CASE("rrs sends message ⊕ local source and stores nothing", "[cpu][steps]") {
  const auto buffers = run_labelled(R"xml(
<algo name="reduce_forward" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="3" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="2" recv="0" chan="0">
      <step s="0" type="rrs" srcbuf="i" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="0" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  for (std::size_t e = 0; e < kChunk; ++e) {
    CHECK(out(buffers, 2, 0, e) == label(0, 0, e) + label(1, 1, e));
    CHECK(out(buffers, 1, 0, e) == kInt32Poison);
    CHECK(out(buffers, 1, 1, e) == kInt32Poison);
  }
}

TEST_CASE("rrc stores message ⊕ src, src being the receiver's own operand", "[cpu][steps]") {
  // The sender sends its chunk 1; the receiver's srcoff 0 names its own chunk 0. Reading the
  // sender's offset instead (msccl-tools' reading) would add the receiver's chunk 1.
  const auto buffers = run_labelled(R"xml(
<algo name="reduce_store" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  for (std::size_t e = 0; e < kChunk; ++e) {
    CHECK(out(buffers, 1, 1, e) == label(0, 1, e) + label(1, 0, e));
    CHECK(out(buffers, 1, 0, e) == kInt32Poison);
  }
}

TEST_CASE("rrcs stores message ⊕ src and sends the same value", "[cpu][steps]") {
  const auto buffers = run_labelled(R"xml(
<algo name="reduce_store_forward" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="3" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="1" s_chunks="0">
    <tb id="0" send="2" recv="0" chan="0">
      <step s="0" type="rrcs" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="0" o_chunks="2" s_chunks="0">
    <tb id="0" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  for (std::size_t e = 0; e < kChunk; ++e) {
    CHECK(out(buffers, 1, 0, e) == label(0, 0, e) + label(1, 1, e));
    CHECK(out(buffers, 2, 1, e) == label(0, 0, e) + label(1, 1, e));
    CHECK(out(buffers, 2, 0, e) == kInt32Poison);
  }
}

TEST_CASE("cpy copies and re reduces into its destination, chunk by chunk", "[cpu][steps]") {
  // cnt 2 copies input chunks 0..1 into output chunks 0..1; re then adds input chunk 2 into
  // output chunk 1 and scratch is a stop on the way.
  const auto buffers = run_labelled(R"xml(
<algo name="local" proto="Simple" nchannels="1" nchunksperloop="3" ngpus="1" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="3" o_chunks="3" s_chunks="1">
    <tb id="0" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="cpy" srcbuf="i" srcoff="2" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="re" srcbuf="s" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  for (std::size_t e = 0; e < kChunk; ++e) {
    CHECK(out(buffers, 0, 0, e) == label(0, 0, e));
    CHECK(out(buffers, 0, 1, e) == label(0, 1, e) + label(0, 2, e));
    CHECK(out(buffers, 0, 2, e) == kInt32Poison);
  }
}

TEST_CASE("a reduction applies the run's operator", "[cpu][steps]") {
  const ir::Algorithm algo = testing::load(R"xml(
<algo name="local_reduce" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="1" coll="custom" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="2" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="re" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>)xml");
  const Executor executor(algo, CollectiveSpec{});
  struct Case {
    ReduceOp op;
    std::int32_t expected;
  };
  // Inputs 7 and −3: sum 4, prod −21, max 7, min −3.
  for (const Case c : {Case{ReduceOp::Sum, 4}, Case{ReduceOp::Prod, -21}, Case{ReduceOp::Max, 7},
                       Case{ReduceOp::Min, -3}}) {
    RunOptions options = testing::options(1, 1, 2);
    options.dtype = DataType::Int32;
    options.op = c.op;
    std::vector<RankBuffers> buffers = executor.make_inputs(options);
    const std::int32_t inputs[2] = {7, -3};
    std::memcpy(buffers[0].input.data(), inputs, sizeof inputs);
    REQUIRE(executor.execute(options, buffers).outcome == Outcome::Pass);
    INFO(to_string(c.op));
    CHECK(testing::int32_at(buffers[0].output, 1, 0, 0) == c.expected);
  }
}

}  // namespace
}  // namespace weft::cpu
