// The replicate pass: instances.
#include <catch2/catch.hpp>

#include "compiler_test_support.h"
#include "weft/compiler/replicate.h"

using namespace weft;

TEST_CASE("replicate: chunk layouts", "[compiler][replicate]") {
  using compiler::replicated_index;
  using dsl::Replication;
  CHECK(replicated_index(3, 1, 2, Replication::Interleaved, 4) == 7);
  CHECK(replicated_index(3, 0, 2, Replication::Interleaved, 4) == 6);
  // Blocked: within each block of 4, instance 1's copy follows instance 0's.
  CHECK(replicated_index(3, 1, 2, Replication::Blocked, 4) == 7);
  CHECK(replicated_index(5, 1, 2, Replication::Blocked, 4) == 13);
  CHECK(replicated_index(5, 0, 2, Replication::Blocked, 4) == 9);
  CHECK(replicated_index(5, 0, 1, Replication::Blocked, 4) == 5);
}

TEST_CASE("replicate: instances get their own channels and threadblocks", "[compiler][replicate]") {
  dsl::Options options;
  options.instances = 2;
  const dsl::Program p = test::ring_allreduce(3, options);
  const compiler::CompileResult result = compiler::compile(p, test::quick());
  REQUIRE(result.ok());
  const ir::Algorithm& algo = *result.algorithm;
  CHECK(algo.nchannels == 2);
  CHECK(algo.nchunksperloop == 6);
  for (const ir::Gpu& gpu : algo.gpus) {
    CHECK(gpu.input_chunks == 6);
    REQUIRE(gpu.threadblocks.size() == 2);
    CHECK(gpu.threadblocks[0].channel == 0);
    CHECK(gpu.threadblocks[1].channel == 1);
    CHECK(test::step_types(gpu.threadblocks[1]) == "s rrs rrcs rcs r");
    // Instance 1 handles the odd chunks.
    for (const ir::Step& step : gpu.threadblocks[1].steps) CHECK((step.srcoff % 2) == 1);
  }
}

TEST_CASE("replicate: multi-chunk steps stay whole when the layout keeps them contiguous",
          "[compiler][replicate]") {
  auto program = [](dsl::Replication layout) {
    dsl::Options options;
    options.instances = 2;
    options.replication = layout;
    dsl::Program p("rd", dsl::Collective::allgather(4, 2, true), options);
    for (int d = 1; d < 4; d *= 2) {
      for (int r = 0; r < 4; ++r) {
        const int first = (r / d) * d;
        p.chunk(r, dsl::output, first * 2, d * 2).copy(r ^ d, dsl::output, first * 2);
      }
    }
    return p;
  };
  const compiler::CompileResult blocked =
      compiler::compile(program(dsl::Replication::Blocked), test::quick());
  const compiler::CompileResult interleaved =
      compiler::compile(program(dsl::Replication::Interleaved), test::quick());
  REQUIRE(blocked.ok());
  REQUIRE(interleaved.ok());
  // Round one sends one rank block (2 chunks): Blocked keeps its instance's copy contiguous,
  // Interleaved does not. Round two sends two blocks, contiguous in neither. Cut steps are cut
  // on both ends of their messages alike, or verification would fail.
  int blocked_max = 0;
  int interleaved_max = 0;
  for (const ir::Gpu& gpu : blocked.algorithm->gpus) {
    for (const auto& tb : gpu.threadblocks)
      for (const auto& s : tb.steps) blocked_max = std::max(blocked_max, s.count);
  }
  for (const ir::Gpu& gpu : interleaved.algorithm->gpus) {
    for (const auto& tb : gpu.threadblocks)
      for (const auto& s : tb.steps) interleaved_max = std::max(interleaved_max, s.count);
  }
  CHECK(interleaved_max == 1);
  CHECK(blocked_max == 2);
  CHECK(interleaved.stats.steps > blocked.stats.steps);
}

TEST_CASE("replicate: a custom collective's postcondition is replicated too",
          "[compiler][replicate]") {
  dsl::CustomCollective c;
  c.name = "shift";
  c.ranks = 3;
  c.input_chunks = {2, 2, 2};
  c.output_chunks = {2, 2, 2};
  c.postcondition = [](int rank, int index) {
    return std::vector<ChunkId>{{(rank + 2) % 3, 1 - index}};
  };
  for (const dsl::Replication layout : {dsl::Replication::Interleaved, dsl::Replication::Blocked}) {
    dsl::Options options;
    options.instances = 3;
    options.replication = layout;
    dsl::Program p("shift", dsl::Collective::custom(c), options);
    for (int r = 0; r < 3; ++r) {
      p.chunk(r, dsl::input, 0).copy((r + 1) % 3, dsl::output, 1);
      p.chunk(r, dsl::input, 1).copy((r + 1) % 3, dsl::output, 0);
    }
    const compiler::CompileResult result = compiler::compile(p, test::quick());
    INFO(result.error_text());
    CHECK(result.ok());
  }
}
