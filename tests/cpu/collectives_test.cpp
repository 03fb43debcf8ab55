// Small hand-written algorithms of every standard collective run and check, in the call modes
// they declare; roots and in-place aliasing are honoured.
#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"
#include "weft/cpu/verify.h"

namespace weft::cpu {
namespace {

void require_verified(std::string_view xml, int root = 0) {
  const ir::Algorithm algo = testing::load(xml);
  const Executor executor(algo, standard_spec(algo, root));
  VerifyOptions options;
  options.root = root;
  const VerifyReport report = verify(executor, options);
  for (const auto& c : report.cases) {
    INFO(algo.name << (c.options.in_place ? " in place" : " out of place")
                   << " T=" << c.options.tile_elements << " D=" << c.options.fifo_depth
                   << " seed=" << c.options.seed << "\n"
                   << c.result.report());
    CHECK(c.result.outcome == Outcome::Pass);
  }
  CHECK(report.passed());
}

TEST_CASE("ring allreduce, allgather, reducescatter and an alltoall verify", "[cpu][collectives]") {
  require_verified(testing::kRingAllreduce3);
  require_verified(testing::kRingAllgather3);
  require_verified(testing::kRingAllgather3InPlace);
  require_verified(testing::kRingReduceScatter3);
  require_verified(testing::kAllToAll3);
}

TEST_CASE("broadcast is checked against the root the run names", "[cpu][collectives]") {
  require_verified(testing::kBroadcast3Root1, 1);
  const ir::Algorithm algo = testing::load(testing::kBroadcast3Root1);
  const Executor executor(algo, standard_spec(algo, 1));
  RunOptions options = testing::options(37, 8, 2);
  options.root = 0;  // the algorithm broadcasts rank 1's buffer, not rank 0's
  const RunResult wrong = executor.run(options);
  INFO(wrong.report());
  CHECK(wrong.outcome == Outcome::WrongResult);
  options.root = 3;
  const RunResult refused = executor.run(options);
  CHECK(refused.outcome == Outcome::Error);
  CHECK_THAT(refused.message, Catch::Contains("root 3 is not a rank"));
}

TEST_CASE("reduce checks the root's output and leaves the others unspecified",
          "[cpu][collectives]") {
  require_verified(testing::kChainReduce3Root2, 2);
  const ir::Algorithm algo = testing::load(testing::kChainReduce3Root2);
  const Executor executor(algo, standard_spec(algo, 2));
  RunOptions options = testing::options(37, 8, 2);
  options.root = 2;
  options.dtype = DataType::Int32;
  std::vector<RankBuffers> buffers = executor.make_inputs(options);
  const std::vector<RankBuffers> inputs = buffers;
  REQUIRE(executor.execute(options, buffers).outcome == Outcome::Pass);
  // Ranks 0 and 1 never write their outputs, and that is fine for a reduce.
  CHECK(testing::int32_at(buffers[0].output, 37, 0, 0) == testing::kInt32Poison);
  RunResult result;
  result.outcome = Outcome::Pass;
  CHECK(executor.check(options, inputs, buffers, result));
  options.root = 0;
  CHECK_FALSE(executor.check(options, inputs, buffers, result));
  CHECK(result.outcome == Outcome::WrongResult);
}

TEST_CASE("in-place allgather: the input is the rank's block of the output", "[cpu][collectives]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllgather3InPlace);
  const Executor executor(algo, standard_spec(algo, 0));
  RunOptions options = testing::options(37, 8, 2);
  options.in_place = true;
  options.dtype = DataType::Int32;
  const std::vector<RankBuffers> inputs = executor.make_inputs(options);
  REQUIRE(inputs.size() == 3);
  CHECK(inputs[1].input.empty());
  CHECK(inputs[1].output.size() == 3 * 37 * 4);
  // Rank 1's input lives in output block 1; blocks 0 and 2 wait for the others.
  CHECK(testing::int32_at(inputs[1].output, 37, 0, 0) == testing::kInt32Poison);
  CHECK(testing::int32_at(inputs[1].output, 37, 1, 0) != testing::kInt32Poison);
  CHECK(executor.run(options).outcome == Outcome::Pass);

  // Out of place nothing copies the input into the output block: exactly those chunks are wrong.
  options.in_place = false;
  const RunResult result = executor.run(options);
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::WrongResult);
  CHECK(result.mismatch_count == 3 * 37);
  for (const Mismatch& m : result.mismatches) CHECK(m.chunk == m.rank);
  CHECK_THAT(result.mismatches.front().found, Catch::Contains("poison"));
}

TEST_CASE("in-place reducescatter: the output is the rank's block of the input",
          "[cpu][collectives]") {
  const ir::Algorithm algo = testing::load(testing::kRingReduceScatter3);
  const Executor executor(algo, standard_spec(algo, 0));
  RunOptions options = testing::options(5, 2, 2);
  options.in_place = true;
  options.dtype = DataType::Int32;
  std::vector<RankBuffers> buffers = executor.make_inputs(options);
  REQUIRE(buffers[0].output.empty());
  for (int r = 0; r < 3; ++r) {
    buffers[static_cast<std::size_t>(r)].input = testing::labelled_int32(r, 3, 5);
  }
  REQUIRE(executor.execute(options, buffers).outcome == Outcome::Pass);
  for (int r = 0; r < 3; ++r) {
    for (std::size_t e = 0; e < 5; ++e) {
      const std::int32_t sum =
          testing::label(0, r, e) + testing::label(1, r, e) + testing::label(2, r, e);
      CHECK(testing::int32_at(buffers[static_cast<std::size_t>(r)].input, 5, r, e) == sum);
    }
  }
}

}  // namespace
}  // namespace weft::cpu
