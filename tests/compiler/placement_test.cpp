// Threadblock placement: paired (a send and a receive with the same peer share a threadblock),
// separate (one threadblock per direction), msccl-tools' own, and auto: where time judges
// (judge_test.cpp) the fastest predicted, else separate only where it shortens the critical path.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "compiler_test_support.h"
#include "weft/algorithms/library.h"
#include "weft/ir/analysis.h"

using namespace weft;

namespace {

struct Placed {
  int threadblocks = 0;
  int critical_path = 0;
};

Placed compile_placed(const char* algorithm, int nodes, int gpus, dsl::Placement placement,
                      bool judged = true, int channels = 1) {
  dsl::Registry registry;
  algorithms::register_library(registry);
  dsl::AlgorithmParams params;
  params.ranks = nodes * gpus;
  if (nodes > 1) {
    params.nodes = nodes;
    params.gpus_per_node = gpus;
  }
  params.placement = placement;
  params.channels = channels;
  const dsl::Program program = registry.find(algorithm)->build(params);
  compiler::CompileOptions options = test::quick();
  options.judge.enabled = judged;
  const compiler::CompileResult result = compiler::compile(program, options);
  INFO(result.error_text());
  REQUIRE(result.ok());
  return Placed{result.stats.threadblocks, ir::summarize(*result.algorithm).critical_path_steps};
}

}  // namespace

TEST_CASE("placement: separate directions shorten alltoall's critical path to msccl-tools'",
          "[compiler][placement]") {
  using dsl::Placement;
  // Paired, a rank's threadblock for peer q sends to q before it receives from q.
  const Placed paired = compile_placed("alltoall_direct", 1, 8, Placement::Paired);
  const Placed separate = compile_placed("alltoall_direct", 1, 8, Placement::Separate);
  const Placed automatic = compile_placed("alltoall_direct", 1, 8, Placement::Auto);
  CHECK(paired.threadblocks == 8 * 7);
  CHECK(paired.critical_path == 3);
  CHECK(separate.threadblocks == 8 * 14);
  CHECK(separate.critical_path == 2);
  CHECK(automatic.threadblocks == separate.threadblocks);
  CHECK(automatic.critical_path == 2);
  // msccl-tools' two-step alltoall: 4 at 2 nodes × 4 GPUs, 8 at 4 × 8.
  CHECK(compile_placed("alltoall_two_step", 2, 4, Placement::Auto).critical_path <= 4);
  CHECK(compile_placed("alltoall_two_step", 4, 8, Placement::Auto).critical_path <= 8);
}

TEST_CASE("placement: unjudged, auto keeps the fewer threadblocks where separating does not help",
          "[compiler][placement]") {
  // Where time cannot judge (judging off, or a program too large to predict), the critical path
  // in steps decides.
  using dsl::Placement;
  for (const auto& [algorithm, nodes, gpus] :
       std::vector<std::tuple<const char*, int, int>>{{"allreduce_hierarchical", 2, 4},
                                                      {"allreduce_allpairs", 1, 8},
                                                      {"allreduce_ring", 1, 8}}) {
    const Placed paired = compile_placed(algorithm, nodes, gpus, Placement::Paired, false);
    const Placed separate = compile_placed(algorithm, nodes, gpus, Placement::Separate, false);
    const Placed automatic = compile_placed(algorithm, nodes, gpus, Placement::Auto, false);
    INFO(fmt::format("{}: paired {} threadblocks, path {}; separate {}, {}; auto {}, {}", algorithm,
                     paired.threadblocks, paired.critical_path, separate.threadblocks,
                     separate.critical_path, automatic.threadblocks, automatic.critical_path));
    CHECK(automatic.critical_path == std::min(paired.critical_path, separate.critical_path));
    if (separate.critical_path >= paired.critical_path) {
      CHECK(automatic.threadblocks == paired.threadblocks);
    }
  }
}

TEST_CASE("placement: a local step with nothing to follow goes to the least loaded threadblock",
          "[compiler][placement]") {
  // The two-step alltoall's gateway copies (input to scratch) depend on nothing; following the
  // send to the other node they piled onto its threadblock: 5 chunks there against msccl-tools'
  // 4, which bounded a large call.
  dsl::Registry registry;
  algorithms::register_library(registry);
  dsl::AlgorithmParams params;
  params.ranks = 8;
  params.nodes = 2;
  params.gpus_per_node = 4;
  const compiler::CompileResult result =
      compiler::compile(registry.find("alltoall_two_step")->build(params), test::quick());
  INFO(result.error_text());
  REQUIRE(result.ok());
  for (const ir::Gpu& gpu : result.algorithm->gpus) {
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      int chunks = 0;
      for (const ir::Step& step : tb.steps) chunks += step.count;
      INFO("rank " << gpu.id << " threadblock " << tb.id);
      CHECK(chunks <= 4);
    }
  }
}

TEST_CASE("placement: the hierarchical allreduce fuses each chunk's hop between the levels",
          "[compiler][placement]") {
  // With as many channels as chunks, each chunk's chain on a channel of its own: its last
  // receive inside the node and its send to the other node are one step (critical path 9 at
  // 2 × 4; 11 when the node's rings moved blocks of chunks on one channel). The default, twice
  // the chains, gives the allgather inside the node channels of its own: one hop more on the
  // path, as in msccl-tools' file (10), for a pipeline that overlaps the two halves.
  CHECK(compile_placed("allreduce_hierarchical", 2, 4, dsl::Placement::Auto).critical_path == 10);
  CHECK(compile_placed("allreduce_hierarchical", 2, 8, dsl::Placement::Auto).critical_path == 18);
  CHECK(
      compile_placed("allreduce_hierarchical", 2, 4, dsl::Placement::Auto, true, 8).critical_path ==
      9);
}
