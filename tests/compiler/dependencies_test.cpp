// The dependencies pass: cross-threadblock waits, nops and hasdep.
#include <catch2/catch.hpp>

#include "compiler_test_support.h"
#include "weft/compiler/assign.h"
#include "weft/compiler/dependencies.h"
#include "weft/compiler/fuse.h"
#include "weft/compiler/lower.h"
#include "weft/compiler/schedule.h"

using namespace weft;

namespace {

ir::Algorithm resolve(const dsl::Program& p) {
  const compiler::InstructionDag dag = compiler::fuse(compiler::lower(p, {}));
  const auto s = compiler::schedule(dag, {});
  REQUIRE(s.has_value());
  const compiler::Assignment a = compiler::assign(dag, *s, p.options().threadblocks, {});
  return compiler::resolve_dependencies(dag, *s, a);
}

}  // namespace

TEST_CASE("dependencies: a step waiting on two threadblocks gets one nop",
          "[compiler][dependencies]") {
  // Rank 2 gathers chunks from ranks 0 and 1 (two receiving threadblocks), then sends both on.
  dsl::Program p("g", dsl::Collective::allgather(4, 1, false));
  p.chunk(0, dsl::input, 0).copy(2, dsl::output, 0);
  p.chunk(1, dsl::input, 0).copy(2, dsl::output, 1);
  p.chunk(2, dsl::output, 0, 2).copy(3, dsl::output, 0);
  const ir::Algorithm algo = resolve(p);
  const ir::Gpu& gpu = algo.gpus[2];
  REQUIRE(gpu.threadblocks.size() == 3);
  const ir::Threadblock& sender = gpu.threadblocks[2];
  REQUIRE(test::step_types(sender) == "nop s");
  const ir::Step& nop = sender.steps[0];
  const ir::Step& send = sender.steps[1];
  CHECK(nop.depid != send.depid);
  for (const ir::Step* waiting : {&nop, &send}) {
    REQUIRE(waiting->depid >= 0);
    const ir::Step& target = gpu.threadblocks[static_cast<std::size_t>(waiting->depid)]
                                 .steps[static_cast<std::size_t>(waiting->deps)];
    CHECK(target.type == ir::StepType::Recv);
    CHECK(target.hasdep);
  }
}

TEST_CASE("dependencies: waits implied by earlier waits are dropped", "[compiler][dependencies]") {
  // Recursive doubling allgather on 8 ranks: the last round's send depends on the receives of the
  // first two rounds, but the second round's threadblock already waited for the first.
  dsl::Program p("rd", dsl::Collective::allgather(8, 1, true));
  for (int d = 1; d < 8; d *= 2) {
    for (int r = 0; r < 8; ++r) {
      const int first = (r / d) * d;
      p.chunk(r, dsl::output, first, d).copy(r ^ d, dsl::output, first);
    }
  }
  const ir::Algorithm algo = resolve(p);
  CHECK(test::count_steps(algo, ir::StepType::Nop) == 0);
  int waits = 0;
  for (const ir::Gpu& gpu : algo.gpus) {
    CHECK(gpu.threadblocks.size() == 3);
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      for (const ir::Step& step : tb.steps) waits += step.depid >= 0 ? 1 : 0;
    }
  }
  CHECK(waits == 8 * 2);  // rounds 2 and 3 wait once each
}

TEST_CASE("dependencies: steps of one threadblock need no wait", "[compiler][dependencies]") {
  const ir::Algorithm algo = resolve(test::ring_allreduce(5));
  for (const ir::Gpu& gpu : algo.gpus) {
    for (const ir::Step& step : gpu.threadblocks[0].steps) {
      CHECK(step.depid == -1);
      CHECK_FALSE(step.hasdep);
    }
  }
}
