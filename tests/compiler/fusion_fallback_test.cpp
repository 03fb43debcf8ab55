// Fusion fallbacks: a fusion that would deadlock at FIFO depth 2 is undone alone, and the note
// names it; the rest of the program keeps its fused schedule.
#include <catch2/catch.hpp>

#include <algorithm>

#include "compiler_test_support.h"
#include "weft/compiler/fuse.h"
#include "weft/compiler/lower.h"

using namespace weft;

namespace {

// Rank 1 forwards rank 0's first message to rank 2 (a fused rcs), but first sends rank 2 two
// messages of its own, which rank 2 takes only after data that rank 0's second message carries
// round through rank 3. Fused, the forward holds rank 0's first message while it waits for room
// towards rank 2, so the second message never arrives: at depth 2 the fusion deadlocks.
dsl::Program held_forward() {
  dsl::CustomCollective anything;
  anything.name = "anything";
  anything.ranks = 4;
  anything.input_chunks = {4, 4, 4, 4};
  anything.output_chunks = {4, 4, 4, 4};
  anything.postcondition = [](int, int) { return std::vector<ChunkId>{}; };
  dsl::Program p("held_forward", dsl::Collective::custom(anything));
  const dsl::Buffer a = p.scratch("a");
  p.chunk(0, dsl::input, 0).copy(1, a, 0);
  p.chunk(0, dsl::input, 0).reduce(p.chunk(0, dsl::input, 1));  // orders the next send after
  p.chunk(0, dsl::input, 0).copy(1, a, 1);
  p.chunk(1, dsl::input, 2).reduce(p.chunk(1, a, 1));
  p.chunk(1, dsl::input, 2).copy(3, dsl::output, 0);
  p.chunk(3, dsl::output, 0).copy(2, dsl::output, 0);
  p.chunk(1, dsl::input, 0).copy(2, dsl::output, 0);
  p.chunk(1, dsl::input, 1).copy(2, dsl::output, 0);
  p.chunk(1, a, 0).copy(2, dsl::output, 1);
  // A long way on from rank 2's output[0], so its sends come first on the critical path.
  for (int hop = 0; hop < 3; ++hop) {
    p.chunk(2, dsl::output, 0).copy(3, dsl::output, 2 + hop % 2);
    p.chunk(3, dsl::output, 2 + hop % 2).copy(2, dsl::output, 0);
  }
  return p;
}

}  // namespace

TEST_CASE("fusion fallback: only the fusion that deadlocks at depth 2 is undone",
          "[compiler][fusion-fallback]") {
  const dsl::Program p = held_forward();
  const compiler::CompileResult result = compiler::compile(p, test::quick());
  INFO(result.error_text());
  REQUIRE(result.ok());
  // One note, naming the fusion on rank 1; the critical-path order stands (no program-order or
  // unfused fallback followed).
  REQUIRE(result.notes.size() == 1);
  CHECK_THAT(result.notes[0],
             Catch::StartsWith("schedule (fused, critical path, FIFO depth 2): fusion undone"));
  CHECK_THAT(result.notes[0], Catch::Contains("fused with copy at fusion_fallback_test.cpp:"));
  CHECK_THAT(result.notes[0], Catch::Contains("(rank 1: from rank 0 to rank 2)"));
  // The two other fusions (the hops between ranks 2 and 3) are kept.
  CHECK(result.stats.fused.rcs == 2);
  CHECK(test::count_steps(*result.algorithm, ir::StepType::RecvCopySend) == 2);
  CHECK(result.verification.passed);
  CHECK(result.verification.min_fifo_depth.value_or(99) <= 2);
}

TEST_CASE("fusion fallback: the fuse pass keeps the sends it is told to keep apart",
          "[compiler][fusion-fallback]") {
  const dsl::Program p = test::ring_allreduce(3);
  const compiler::InstructionDag lowered = compiler::lower(p, {});
  std::vector<int> absorbed;
  compiler::FuseStats all;
  const compiler::InstructionDag fused = compiler::fuse(lowered, &all, {}, &absorbed);
  REQUIRE(absorbed.size() == fused.size());
  std::vector<char> apart(lowered.size(), 0);
  int first = -1;
  for (const int s : absorbed) {
    if (s >= 0 && first < 0) first = s;
  }
  REQUIRE(first >= 0);
  apart[static_cast<std::size_t>(first)] = 1;
  compiler::FuseStats fewer;
  const compiler::InstructionDag partly = compiler::fuse(lowered, &fewer, apart, &absorbed);
  CHECK(partly.size() == fused.size() + 1);
  CHECK(fewer.rcs + fewer.rrcs + fewer.rrs == all.rcs + all.rrcs + all.rrs - 1);
  CHECK(std::find(absorbed.begin(), absorbed.end(), first) == absorbed.end());
}
