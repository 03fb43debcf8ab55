// The whole pipeline: what the acceptance pins (the 3-rank ring's fused steps, a forgotten step,
// a cross-rank reduce between different indices), limits, and writing only verified results.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

#include "compiler_test_support.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

using namespace weft;

TEST_CASE("a 3-rank ring allreduce fuses into s, rrs, rrcs, rcs, r on every threadblock",
          "[compiler][pipeline]") {
  const compiler::CompileResult result = compiler::compile(test::ring_allreduce(3));
  INFO(result.error_text());
  REQUIRE(result.ok());
  const ir::Algorithm& algo = *result.algorithm;
  CHECK(algo.nchannels == 1);
  for (int r = 0; r < 3; ++r) {
    const ir::Gpu& gpu = algo.gpus[static_cast<std::size_t>(r)];
    REQUIRE(gpu.threadblocks.size() == 1);
    const ir::Threadblock& tb = gpu.threadblocks[0];
    CHECK(tb.send == (r + 1) % 3);
    CHECK(tb.recv == (r + 2) % 3);
    CHECK(test::step_types(tb) == "s rrs rrcs rcs r");
    // Chunk r starts here; chunk r-1 passes through; chunk r+1 is completed here.
    CHECK(tb.steps[0].srcoff == r);
    CHECK(tb.steps[1].srcoff == (r + 2) % 3);
    CHECK(tb.steps[2].dstoff == (r + 1) % 3);
  }
  CHECK(result.stats.steps == 15);
  CHECK(result.verification.passed);
  CHECK(result.verification.min_fifo_depth == 2);
}

TEST_CASE("a program that forgets a step gets a clear postcondition error and no file",
          "[compiler][pipeline]") {
  dsl::Program p("ring", dsl::Collective::allreduce(3, 3));
  const int reduce_line = __LINE__ + 3;
  for (int step = 0; step < 2; ++step) {
    for (int k = 0; k < 3; ++k) {
      p.chunk((k + step + 1) % 3, dsl::input, k).reduce(p.chunk((k + step) % 3, dsl::input, k));
    }
  }
  for (int step = 0; step < 2; ++step) {
    for (int k = 0; k < 3; ++k) {
      if (step == 1 && k == 0) continue;  // forgotten: chunk 0's last hop, rank 1 → rank 2
      const int from = (k + 2 + step) % 3;
      p.chunk(from, dsl::input, k).copy((from + 1) % 3, dsl::input, k);
    }
  }
  const compiler::CompileResult result = compiler::compile(p);
  CHECK_FALSE(result.ok());
  CHECK_FALSE(result.algorithm.has_value());
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0] ==
        "postcondition fails for 1 output chunk:\n"
        "  rank 1 output[0]: expected {r0c0, r1c0, r2c0}, found {r0c0, r1c0}; missing {r2c0} "
        "(last written by reduce at pipeline_test.cpp:" +
            std::to_string(reduce_line) + ")");
  const std::string path = "forgotten_step_should_not_exist.xml";
  std::string error;
  CHECK_FALSE(compiler::write_xml_file(result, path, &error));
  CHECK_THAT(error, Catch::Contains("not written"));
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a cross-rank reduce between different indices reduces the receiver's own chunk",
          "[compiler][pipeline]") {
  // Custom collective: rank 1's output is rank 0's chunk 0 reduced with rank 1's chunk 1.
  dsl::CustomCollective c;
  c.name = "crossindex";
  c.ranks = 2;
  c.input_chunks = {2, 2};
  c.output_chunks = {0, 1};
  c.postcondition = [](int, int) { return std::vector<ChunkId>{{0, 0}, {1, 1}}; };
  dsl::Program p("cross", dsl::Collective::custom(c));
  p.chunk(1, dsl::input, 1).reduce(p.chunk(0, dsl::input, 0));
  p.chunk(1, dsl::input, 1).copy(1, dsl::output, 0);
  const compiler::CompileResult result = compiler::compile(p);
  INFO(result.error_text());
  REQUIRE(result.ok());  // the executor checked the values
  const ir::Gpu& receiver = result.algorithm->gpus[1];
  bool found = false;
  for (const ir::Threadblock& tb : receiver.threadblocks) {
    for (const ir::Step& step : tb.steps) {
      if (step.type != ir::StepType::RecvReduceCopy) continue;
      found = true;
      CHECK(step.srcbuf == ir::BufferKind::Input);
      CHECK(step.srcoff == 1);  // the local operand, not the sender's offset 0
      CHECK(step.dstoff == 1);
    }
  }
  CHECK(found);
  // And the sender reads its chunk 0.
  CHECK(result.algorithm->gpus[0].threadblocks[0].steps[0].srcoff == 0);
}

TEST_CASE("an in-place custom collective: each rank's output is its input",
          "[compiler][pipeline]") {
  // Rotate by one rank, in place: rank r ends with rank r-1's chunk where its own was.
  dsl::CustomCollective c;
  c.name = "rotate";
  c.ranks = 3;
  c.input_chunks = {1, 1, 1};
  c.output_chunks = {1, 1, 1};
  c.in_place = true;
  c.postcondition = [](int rank, int) { return std::vector<ChunkId>{{(rank + 2) % 3, 0}}; };
  SECTION("through scratch, each chunk is sent before its place is overwritten") {
    dsl::Program p("rotate", dsl::Collective::custom(c));
    for (int r = 0; r < 3; ++r) p.chunk(r, dsl::input, 0).copy((r + 1) % 3, "landing", 0);
    for (int r = 0; r < 3; ++r) p.chunk(r, "landing", 0).copy(r, dsl::output, 0);
    const compiler::CompileResult result = compiler::compile(p);
    INFO(result.error_text());
    REQUIRE(result.ok());  // run by the executor as an in-place call
    CHECK(result.algorithm->inplace);
    CHECK_FALSE(result.algorithm->outofplace);
    for (const ir::Gpu& gpu : result.algorithm->gpus) {
      for (const ir::Threadblock& tb : gpu.threadblocks) {
        for (const ir::Step& step : tb.steps) {
          CHECK(step.srcbuf != ir::BufferKind::Output);
          CHECK(step.dstbuf != ir::BufferKind::Output);
        }
      }
    }
  }
  SECTION("straight into the output, a chunk is overwritten before it is sent") {
    dsl::Program p("rotate", dsl::Collective::custom(c));
    for (int r = 0; r < 3; ++r) p.chunk(r, dsl::input, 0).copy((r + 1) % 3, dsl::output, 0);
    const compiler::CompileResult result = compiler::compile(p);
    CHECK_FALSE(result.ok());
    // Out of place this program would be right; in place rank 1 forwards rank 0's chunk.
    CHECK_THAT(result.error_text(),
               Catch::Contains("rank 0 output[0]: expected {r2c0}, found {r0c0}"));
  }
}

TEST_CASE("manual assignment errors reach the result, naming the operation",
          "[compiler][pipeline]") {
  dsl::Options options;
  options.threadblocks = dsl::ThreadblockPolicy::Manual;
  // Both sends lack a sendtb, so they share rank 0's one more threadblock: two send peers.
  dsl::Program p("m", dsl::Collective::broadcast(3, 0, 1), options);
  p.chunk(0, dsl::input, 0).copy(1, dsl::input, 0, {.recvtb = 0});
  const int line = __LINE__ + 1;
  p.chunk(0, dsl::input, 0).copy(2, dsl::input, 0, {.recvtb = 0});
  const compiler::CompileResult result = compiler::compile(p);
  REQUIRE(result.errors.size() == 1);
  CHECK_THAT(result.errors[0],
             Catch::StartsWith("copy at pipeline_test.cpp:" + std::to_string(line)));
  CHECK_THAT(result.errors[0], Catch::Contains("for operations without threadblock hints already "
                                               "sends to rank 1"));
}

TEST_CASE("limits: the msccl profile spreads a long ring over channels, weft's does not",
          "[compiler][pipeline]") {
  const compiler::CompileResult msccl = compiler::compile_unverified(test::ring_allreduce(40));
  REQUIRE(msccl.errors.empty());
  CHECK(msccl.stats.channels == 2);
  CHECK(msccl.stats.max_steps_per_threadblock <= 64);
  CHECK_FALSE(ir::validate(*msccl.algorithm, ir::msccl_limits()).has_errors());
  dsl::Options options;
  options.limits = "weft";
  const compiler::CompileResult weft =
      compiler::compile_unverified(test::ring_allreduce(40, options));
  REQUIRE(weft.errors.empty());
  CHECK(weft.stats.channels == 1);
  CHECK(weft.stats.max_steps_per_threadblock == 79);
}

TEST_CASE("limits that hints make impossible are an error", "[compiler][pipeline]") {
  dsl::Program p("star", dsl::Collective::allgather(40, 1, false));
  for (int r = 0; r < 40; ++r) {
    p.chunk(r, dsl::input, 0).copy(r, dsl::output, r);
    for (int q = 0; q < 40; ++q) {
      if (q != r) p.chunk(r, dsl::input, 0).copy(q, dsl::output, r, {.channel = 0});
    }
  }
  const compiler::CompileResult result = compiler::compile_unverified(p);
  REQUIRE(result.errors.size() == 1);
  CHECK_THAT(result.errors[0], Catch::Contains("cannot meet the 'msccl' limits profile"));
  CHECK_THAT(result.errors[0], Catch::Contains("more than 32 sending threadblocks on channel 0"));
}

TEST_CASE("a verified result is written and reads back the same", "[compiler][pipeline]") {
  const compiler::CompileResult result = compiler::compile(test::ring_allreduce(4), test::quick());
  REQUIRE(result.ok());
  const std::string path =
      (std::filesystem::temp_directory_path() / "weft_pipeline_ring4.xml").string();
  std::string error;
  REQUIRE(compiler::write_xml_file(result, path, &error));
  const ir::LoadResult loaded = ir::load_xml_file(path, ir::msccl_limits());
  std::remove(path.c_str());
  REQUIRE(loaded.ok());
  CHECK(loaded.algorithm->name == "ring");
  CHECK(loaded.algorithm->inplace);
  CHECK(loaded.algorithm->gpus.size() == 4);
  CHECK(result.summary().find("4 ranks, 4 threadblocks, 28 steps, 1 channel; verified") == 0);
}

TEST_CASE("fusion can be switched off", "[compiler][pipeline]") {
  dsl::Options options;
  options.fusion = false;
  const compiler::CompileResult result =
      compiler::compile(test::ring_allreduce(3, options), test::quick());
  REQUIRE(result.ok());
  CHECK(test::count_steps(*result.algorithm, ir::StepType::RecvCopySend) == 0);
  CHECK(test::count_steps(*result.algorithm, ir::StepType::Send) == 12);
}

// MSCCL's XML reader keeps 4,096 elements per rank: a schedule whose threadblocks each fit the
// 64 steps can still have too many in all. The plan search says so as a limit, naming the rank,
// as it does for the others, not as a compiler bug after emitting the IR. Each rank sends 2,048
// chunks, 64 to a threadblock on each of 32 channels (a sending and a receiving threadblock per
// channel): 4,162 elements.
dsl::Program many_short_threadblocks(const std::string& limits) {
  dsl::Options options;
  options.fusion = false;
  options.limits = limits;
  dsl::Program p("many_steps", dsl::Collective::allgather(2, 2048, true), options);
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 2048; ++j) {
      const int channel = j / 64;
      p.chunk(r, dsl::output, r * 2048 + j)
          .copy(1 - r, dsl::output, r * 2048 + j, {channel, channel, 32 + channel});
    }
  }
  return p;
}

TEST_CASE("too many XML elements for MSCCL's reader is a limit the search names",
          "[compiler][pipeline]") {
  const compiler::CompileResult msccl =
      compiler::compile_unverified(many_short_threadblocks("msccl"));
  REQUIRE(msccl.errors.size() == 1);
  CHECK_THAT(msccl.errors[0], Catch::Contains("cannot meet the 'msccl' limits profile"));
  CHECK_THAT(msccl.errors[0], Catch::Contains("rank 0 needs 4162 XML elements"));
  CHECK_THAT(msccl.errors[0], Catch::Contains("above 4096"));
  CHECK_THAT(msccl.errors[0], !Catch::Contains("compiler bug"));
  const compiler::CompileResult weft =
      compiler::compile_unverified(many_short_threadblocks("weft"));
  CHECK(weft.errors.empty());
}
