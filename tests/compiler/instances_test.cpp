// Instances scale exactly: k copies of one compiled instance have k times its steps and fused
// steps and its critical path, for every algorithm and shape of scripts/bench-schedule.sh.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "compiler_test_support.h"
#include "weft/algorithms/library.h"
#include "weft/compiler/replicate.h"
#include "weft/ir/analysis.h"

using namespace weft;

namespace {

struct Shape {
  const char* algorithm;
  int ranks;
  int nodes;
  int gpus;
  int channels;
};

// The bench table's shapes (scripts/bench-schedule.sh).
const std::vector<Shape> kShapes{
    {"allreduce_ring", 8, 0, 0, 1},
    {"allreduce_ring", 8, 0, 0, 4},
    {"allreduce_allpairs", 8, 0, 0, 1},
    {"allreduce_recursive_halving_doubling", 8, 0, 0, 1},
    {"allreduce_double_binary_tree", 8, 0, 0, 1},
    // Eight channels: the default depends on the instances (twice the chains while they fit).
    {"allreduce_hierarchical", 8, 2, 4, 8},
    {"allreduce_hierarchical", 16, 2, 8, 8},
    {"allgather_ring", 8, 0, 0, 1},
    {"allgather_direct", 8, 0, 0, 1},
    {"allgather_recursive_doubling", 8, 0, 0, 1},
    {"reducescatter_ring", 8, 0, 0, 1},
    {"reducescatter_allpairs", 8, 0, 0, 1},
    {"alltoall_direct", 8, 0, 0, 1},
    {"alltoall_two_step", 8, 2, 4, 1},
    {"alltoall_two_step", 32, 4, 8, 1},
    {"broadcast_chain", 8, 0, 0, 1},
    {"broadcast_binomial_tree", 8, 0, 0, 1},
    {"reduce_chain", 8, 0, 0, 1},
    {"reduce_binomial_tree", 8, 0, 0, 1},
    {"all_to_next", 8, 0, 0, 1},
};

struct Figures {
  int steps = 0;
  int fused = 0;
  int critical_path = 0;
  int threadblocks = 0;
  int channels = 0;
};

Figures compile_figures(const dsl::Registry& registry, const Shape& shape, int instances,
                        bool* cut = nullptr) {
  dsl::AlgorithmParams params;
  params.ranks = shape.ranks;
  params.nodes = shape.nodes;
  params.gpus_per_node = shape.gpus;
  params.channels = shape.channels;
  params.instances = instances;
  const dsl::Program program = registry.find(shape.algorithm)->build(params);
  // Judged by the critical path: predicted time depends on the instances, so a judged compile of
  // one instance may keep another candidate than one of two; here every count copies the same.
  compiler::CompileOptions options;
  options.judge.enabled = false;
  const compiler::CompileResult result = compiler::compile_unverified(program, options);
  INFO(result.error_text());
  REQUIRE(result.algorithm.has_value());
  const ir::Summary summary = ir::summarize(*result.algorithm);
  if (cut) {
    // Whether some multi-chunk operation spans rank blocks, which no layout keeps contiguous.
    const compiler::BlockSizes blocks = compiler::replication_blocks(program.collective());
    *cut = false;
    for (const dsl::Operation& op : program.operations()) {
      for (const dsl::Location& at : {op.src, op.dst}) {
        const int block = at.buffer.kind == ir::BufferKind::Input    ? blocks.input
                          : at.buffer.kind == ir::BufferKind::Output ? blocks.output
                                                                     : blocks.scratch;
        if (block > 0 && at.index / block != (at.index + op.size - 1) / block) *cut = true;
      }
    }
  }
  const compiler::FuseStats& f = result.stats.fused;
  return Figures{result.stats.steps, f.rcs + f.rrcs + f.rrs, summary.critical_path_steps,
                 result.stats.threadblocks, result.stats.channels};
}

}  // namespace

TEST_CASE("instances: k copies have k times one's steps and fused steps, and its critical path",
          "[compiler][instances]") {
  dsl::Registry registry;
  algorithms::register_library(registry);
  for (const Shape& shape : kShapes) {
    bool cut = false;
    const Figures one = compile_figures(registry, shape, 1, &cut);
    const Figures two = compile_figures(registry, shape, 2);
    const Figures four = compile_figures(registry, shape, 4);
    INFO(
        fmt::format("{} ranks {} ({}x{}), channels {}: steps {} / {} / {}, fused {} / {} / {}, "
                    "critical path {} / {} / {}",
                    shape.algorithm, shape.ranks, shape.nodes, shape.gpus, shape.channels,
                    one.steps, two.steps, four.steps, one.fused, two.fused, four.fused,
                    one.critical_path, two.critical_path, four.critical_path));
    // Every instance is the same copy, whatever one instance is.
    CHECK(four.steps == 2 * two.steps);
    CHECK(four.fused == 2 * two.fused);
    CHECK(four.threadblocks == 2 * two.threadblocks);
    CHECK(four.channels == 2 * two.channels);
    CHECK(four.critical_path == two.critical_path);
    if (cut) {
      // A step across rank blocks (an alltoall's or an allgather's) is one range in one instance
      // and several in each of k: its copies cannot be one step each. Its pieces run side by side
      // on channels of their own, so the critical path does not grow.
      CHECK(two.critical_path <= one.critical_path);
      CHECK(four.critical_path <= one.critical_path);
      continue;
    }
    CHECK(two.steps == 2 * one.steps);
    CHECK(two.fused == 2 * one.fused);
    CHECK(two.critical_path == one.critical_path);
    CHECK(two.channels == 2 * one.channels);
  }
}

TEST_CASE("instances: Auto keeps MSCCL's interleaved layout for single-chunk programs only",
          "[compiler][instances]") {
  dsl::Options options;
  options.instances = 2;
  const dsl::Program ring = test::ring_allreduce(4, options);
  CHECK(compiler::replication_layout(ring) == dsl::Replication::Interleaved);
  dsl::Program wide("wide", dsl::Collective::allreduce(2, 2), options);
  wide.chunk(0, dsl::input, 0, 2).copy(1, dsl::input, 0);
  CHECK(compiler::replication_layout(wide) == dsl::Replication::Blocked);
  options.replication = dsl::Replication::Interleaved;
  dsl::Program asked("asked", dsl::Collective::allreduce(2, 2), options);
  asked.chunk(0, dsl::input, 0, 2).copy(1, dsl::input, 0);
  CHECK(compiler::replication_layout(asked) == dsl::Replication::Interleaved);
}

TEST_CASE("instances: hinted threadblocks are copied per instance", "[compiler][instances]") {
  dsl::Options options;
  options.instances = 3;
  dsl::Program p("hinted", dsl::Collective::allgather(2, 1, false), options);
  dsl::Hints hints;
  hints.sendtb = 0;
  hints.recvtb = 1;
  for (int r = 0; r < 2; ++r) {
    p.chunk(r, dsl::input, 0).copy(r, dsl::output, r, hints);
    p.chunk(r, dsl::input, 0).copy(1 - r, dsl::output, r, hints);
  }
  const compiler::CompileResult result = compiler::compile(p, test::quick());
  INFO(result.error_text());
  REQUIRE(result.ok());
  // As msccl-tools numbers them: of n = 3 instances, instance i of hinted threadblock t is
  // threadblock t·n + i, on channel i (one instance uses one channel).
  for (const ir::Gpu& gpu : result.algorithm->gpus) {
    REQUIRE(gpu.threadblocks.size() == 6);
    for (std::size_t k = 0; k < 6; ++k) {
      const ir::Threadblock& tb = gpu.threadblocks[k];
      CHECK(tb.id == static_cast<int>(k));
      CHECK(tb.channel == static_cast<int>(k % 3));
      // Hinted sendtb 0 sends, recvtb 1 receives.
      CHECK((k / 3 == 0 ? tb.send : tb.recv) == 1 - gpu.id);
    }
  }
}
