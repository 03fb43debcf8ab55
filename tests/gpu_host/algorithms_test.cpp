// The test algorithms are what the GPU tests trust: check each against the CPU reference
// executor (the oracle) at several rank counts, both call modes and FIFO depths.
#include <catch2/catch.hpp>

#include "builtin_algorithms.h"
#include "perf_options.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/ir/collective_spec.h"
#include "weft/ir/validate.h"

namespace weft::gpu::testing {
namespace {

using namespace weft::perf;

void check_with_cpu(const ir::Algorithm& algo, bool expect_pass) {
  const Diagnostics found = ir::validate(algo, ir::weft_limits());
  INFO(algo.name << " on " << algo.ngpus << " ranks\n" << found.str());
  REQUIRE_FALSE(found.has_errors());
  const cpu::Executor executor(algo, standard_spec(algo, 0));
  for (bool in_place : {false, true}) {
    if ((in_place && !algo.inplace) || (!in_place && !algo.outofplace)) continue;
    for (int depth : {2, 8}) {
      cpu::RunOptions options;
      options.chunk_elements = 37;
      options.tile_elements = 8;
      options.fifo_depth = depth;
      options.in_place = in_place;
      options.dtype = DataType::Int32;
      const cpu::RunResult result = executor.run(options);
      INFO("in place " << in_place << ", depth " << depth << "\n" << result.report());
      CHECK((result.outcome == cpu::Outcome::Pass) == expect_pass);
    }
  }
}

TEST_CASE("ring allreduce builder is a correct allreduce", "[algorithms]") {
  for (int n : {2, 3, 4, 8}) {
    check_with_cpu(ring_allreduce(n, ir::Protocol::Simple), true);
    check_with_cpu(ring_allreduce(n, ir::Protocol::LL, 2), true);
  }
}

TEST_CASE("all-pairs allreduce builders are correct allreduces, with and without nops",
          "[algorithms]") {
  for (int n : {2, 4, 8}) {
    check_with_cpu(allpairs_chain_allreduce(n, ir::Protocol::LL, false), true);
    check_with_cpu(allpairs_chain_allreduce(n, ir::Protocol::LL128, true), true);
    check_with_cpu(allpairs_allreduce(n, ir::Protocol::Simple), true);
  }
}

TEST_CASE("ring allgather builder is a correct allgather", "[algorithms]") {
  for (int n : {2, 4, 8}) check_with_cpu(ring_allgather(n, ir::Protocol::Simple), true);
}

TEST_CASE("the step-latency chains are correct broadcasts of 1 to 64 hops", "[algorithms]") {
  for (int hops : {1, 2, 3, 8, 64}) check_with_cpu(chain_broadcast(hops, ir::Protocol::LL), true);
  // The chain has one step per hop on its threadblocks, and nothing else on the path.
  const ir::Algorithm eight = chain_broadcast(8, ir::Protocol::Simple);
  CHECK(eight.gpus[0].threadblocks[0].steps.size() + eight.gpus[1].threadblocks[0].steps.size() ==
        9);
  auto bad = builtin_algorithm("chain:0", 2, ir::Protocol::LL);
  CHECK_FALSE(bad.ok());
  auto four_ranks = builtin_algorithm("chain:8", 4, ir::Protocol::LL);
  REQUIRE_FALSE(four_ranks.ok());
  CHECK_THAT(four_ranks.status().message, Catch::Contains("2 ranks"));
  CHECK(builtin_algorithm("chain:64", 2, ir::Protocol::LL128).ok());
}

TEST_CASE("the deadlocking pair deadlocks on the CPU too", "[algorithms]") {
  const ir::Algorithm algo = deadlock_pair(ir::Protocol::Simple);
  const cpu::Executor executor(algo, standard_spec(algo, 0));
  cpu::RunOptions options;
  options.dtype = DataType::Int32;
  CHECK(executor.run(options).outcome == cpu::Outcome::Deadlock);
}

}  // namespace
}  // namespace weft::gpu::testing
