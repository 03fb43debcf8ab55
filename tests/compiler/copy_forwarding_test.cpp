// Copy forwarding: steps read a copy's source while the copy's destination still holds it; copies
// left with no reader and overwritten later disappear.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "compiler_test_support.h"
#include "weft/algorithms/library.h"
#include "weft/compiler/forward.h"
#include "weft/compiler/lower.h"

using namespace weft;
using ir::BufferKind;
using ir::StepType;

namespace {

compiler::CompileResult compile_library(const std::string& name, int ranks, bool in_place) {
  dsl::Registry registry;
  algorithms::register_library(registry);
  dsl::AlgorithmParams params;
  params.ranks = ranks;
  params.in_place = in_place;
  return compiler::compile(registry.find(name)->build(params), test::quick());
}

int copies(const compiler::InstructionDag& dag) {
  return static_cast<int>(
      std::count_if(dag.instructions.begin(), dag.instructions.end(),
                    [](const compiler::Instruction& i) { return i.type == StepType::Copy; }));
}

}  // namespace

TEST_CASE("forward: out-of-place ring allreduce needs no copy", "[compiler][forward]") {
  for (const int ranks : {3, 8}) {
    INFO(fmt::format("{} ranks", ranks));
    const compiler::CompileResult out_of_place = compile_library("allreduce_ring", ranks, false);
    const compiler::CompileResult in_place = compile_library("allreduce_ring", ranks, true);
    INFO(out_of_place.error_text());
    REQUIRE(out_of_place.ok());
    REQUIRE(in_place.ok());
    CHECK(test::count_steps(*out_of_place.algorithm, StepType::Copy) == 0);
    CHECK(out_of_place.stats.steps == in_place.stats.steps);
    CHECK(out_of_place.stats.forwarded.copies_removed == ranks);
    // Sends and local operands come from the input; the output is only written.
    for (const ir::Gpu& gpu : out_of_place.algorithm->gpus) {
      for (const ir::Threadblock& tb : gpu.threadblocks) {
        for (const ir::Step& step : tb.steps) {
          if (step.type == StepType::Send || step.type == StepType::RecvReduceSend ||
              step.type == StepType::RecvReduceCopySend) {
            CHECK(step.srcbuf == BufferKind::Input);
          }
        }
      }
    }
  }
}

TEST_CASE("forward: a copy read after its source is overwritten stays", "[compiler][forward]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 1, false));
  p.chunk(0, dsl::input, 0).copy(0, dsl::output, 0);            // rank 0: o ← a
  p.chunk(1, dsl::input, 0).copy(1, dsl::output, 0);            // rank 1: o ← b
  p.chunk(0, dsl::input, 0).reduce(p.chunk(1, dsl::input, 0));  // rank 0: i ← a ⊕ b
  // Rank 0 sends its output, still a, although its input (the copy's source) now holds a ⊕ b.
  p.chunk(1, dsl::output, 0).reduce(p.chunk(0, dsl::output, 0));  // rank 1: o ← b ⊕ a
  p.chunk(0, dsl::input, 0).copy(0, dsl::output, 0);              // rank 0: o ← a ⊕ b

  const compiler::InstructionDag lowered = compiler::lower(p, {});
  compiler::ForwardStats stats;
  const std::optional<compiler::InstructionDag> changed = compiler::forward_copies(lowered, &stats);
  REQUIRE(changed);
  const compiler::InstructionDag& forwarded = *changed;
  bool send_checked = false;
  for (const compiler::Instruction& i : forwarded.instructions) {
    if (i.type == StepType::Send && i.rank == 0) {
      CHECK(i.srcbuf == BufferKind::Output);  // not forwarded to the overwritten input
      send_checked = true;
    }
    if (i.type == StepType::RecvReduceCopy && i.rank == 1) {
      CHECK(i.srcbuf == BufferKind::Input);  // rank 1's input is untouched: forwarded
      CHECK(i.dstbuf == BufferKind::Output);
    }
  }
  CHECK(send_checked);
  CHECK(stats.reads == 1);
  CHECK(stats.copies_removed == 1);  // rank 1's copy; rank 0's first copy is still read
  CHECK(copies(forwarded) == copies(lowered) - 1);

  const compiler::CompileResult result = compiler::compile(p, test::quick());
  INFO(result.error_text());
  CHECK(result.ok());
}

TEST_CASE("forward: a copy whose destination is never written again stays", "[compiler][forward]") {
  // Broadcast from rank 0: the root's output is its input, copied once and never rewritten.
  dsl::Program p("t", dsl::Collective::broadcast(2, 0, 1, false));
  p.chunk(0, dsl::input, 0).copy(0, dsl::output, 0);
  p.chunk(0, dsl::output, 0).copy(1, dsl::output, 0);

  compiler::ForwardStats stats;
  const std::optional<compiler::InstructionDag> changed =
      compiler::forward_copies(compiler::lower(p, {}), &stats);
  REQUIRE(changed);
  const compiler::InstructionDag& forwarded = *changed;
  REQUIRE(forwarded.size() == 3);
  CHECK(forwarded.instructions[0].type == StepType::Copy);
  CHECK(forwarded.instructions[1].type == StepType::Send);
  CHECK(forwarded.instructions[1].srcbuf == BufferKind::Input);
  // The send no longer waits for the copy.
  CHECK(forwarded.dependencies(1).empty());
  CHECK(stats.reads == 1);
  CHECK(stats.copies_removed == 0);

  const compiler::CompileResult result = compiler::compile(p, test::quick());
  INFO(result.error_text());
  REQUIRE(result.ok());
  CHECK(test::count_steps(*result.algorithm, StepType::Copy) == 1);
}

TEST_CASE("forward: a copy keeps only the chunks still needed", "[compiler][forward]") {
  // Reduce to rank 0, two chunks copied at once: chunk 0 is recv-reduced (its local operand can
  // come from the input), chunk 1 is reduced in place by `re`, which reads what the copy wrote.
  dsl::Program p("t", dsl::Collective::reduce(2, 0, 2, false));
  p.chunk(0, dsl::input, 0, 2).copy(0, dsl::output, 0);
  p.chunk(0, dsl::output, 0).reduce(p.chunk(1, dsl::input, 0));
  p.chunk(1, dsl::input, 1).copy(0, "tmp", 0);
  p.chunk(0, dsl::output, 1).reduce(p.chunk(0, "tmp", 0));

  compiler::ForwardStats stats;
  const std::optional<compiler::InstructionDag> changed =
      compiler::forward_copies(compiler::lower(p, {}), &stats);
  REQUIRE(changed);
  const compiler::InstructionDag& forwarded = *changed;
  CHECK(stats.reads == 1);
  CHECK(stats.copies_narrowed == 1);
  CHECK(stats.copies_removed == 0);
  REQUIRE(forwarded.size() == 6);
  const compiler::Instruction& copy = forwarded.instructions[0];
  CHECK(copy.type == StepType::Copy);
  CHECK(copy.count == 1);
  CHECK(copy.srcoff == 1);
  CHECK(copy.dstoff == 1);
  const compiler::Instruction& rrc = forwarded.instructions[2];
  CHECK(rrc.type == StepType::RecvReduceCopy);
  CHECK(rrc.srcbuf == BufferKind::Input);
  CHECK(rrc.recv_from == 1);
  CHECK(forwarded.instructions[1].send_to == 2);

  const compiler::CompileResult result = compiler::compile(p, test::quick());
  INFO(result.error_text());
  REQUIRE(result.ok());
  CHECK(test::count_steps(*result.algorithm, StepType::Copy) == 1);
}

TEST_CASE("forward: out-of-place library algorithms still verify", "[compiler][forward]") {
  dsl::Registry registry;
  algorithms::register_library(registry);
  for (const dsl::AlgorithmInfo& info : registry.algorithms()) {
    dsl::AlgorithmParams params;
    params.ranks = 4;
    if (info.shape == dsl::Shape::NodesTimesGpus) {
      params.nodes = 2;
      params.gpus_per_node = 2;
    }
    params.in_place = false;
    params.root = 1;
    const compiler::CompileResult result = compiler::compile(info.build(params), test::quick());
    INFO(info.name << ": " << result.error_text());
    CHECK(result.ok());
  }
}

TEST_CASE("forward: a staging copy outside the postcondition goes", "[compiler][forward]") {
  // The root stages its chunk in scratch and sends it from there: the send reads the input, and
  // the scratch chunk, read by nothing else and no result, needs no copy.
  dsl::Program p("t", dsl::Collective::broadcast(2, 0, 1, false));
  p.chunk(0, dsl::input, 0).copy(0, "stage", 0);
  p.chunk(0, "stage", 0).copy(1, dsl::output, 0);
  p.chunk(0, dsl::input, 0).copy(0, dsl::output, 0);

  compiler::ForwardStats stats;
  const std::optional<compiler::InstructionDag> changed =
      compiler::forward_copies(compiler::lower(p, {}), &stats);
  REQUIRE(changed);
  CHECK(stats.reads == 1);
  CHECK(stats.copies_removed == 1);
  REQUIRE(changed->size() == 3);
  CHECK(changed->instructions[0].type == StepType::Send);
  CHECK(changed->instructions[0].srcbuf == BufferKind::Input);
  CHECK(changed->instructions[1].recv_from == 0);
  CHECK(changed->instructions[0].send_to == 1);
  CHECK(changed->instructions[2].type == StepType::Copy);  // the root's output: a result

  const compiler::CompileResult result = compiler::compile(p, test::quick());
  INFO(result.error_text());
  REQUIRE(result.ok());
  CHECK(test::count_steps(*result.algorithm, StepType::Copy) == 1);
}
