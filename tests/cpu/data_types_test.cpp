// Every data type with every reduction operator on a small allreduce: integers checked exactly,
// floating types within the reduction-order tolerance; avg on integers is refused.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

TEST_CASE("every type and operator on the ring allreduce", "[cpu][types]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  for (DataType type : kAllDataTypes) {
    for (ReduceOp op : kAllReduceOps) {
      for (bool in_place : {false, true}) {
        RunOptions options = testing::options(37, 8, 2);
        options.dtype = type;
        options.op = op;
        options.in_place = in_place;
        const RunResult result = executor.run(options);
        INFO(to_string(type) << " " << to_string(op) << (in_place ? " in place" : "") << "\n"
                             << result.report());
        if (op == ReduceOp::Avg && !is_floating(type)) {
          CHECK(result.outcome == Outcome::Error);
          CHECK_THAT(result.message, Catch::Contains("unsupported"));
        } else {
          CHECK(result.outcome == Outcome::Pass);
        }
      }
    }
  }
}

TEST_CASE("avg is the mean, computed as a sum of premultiplied inputs", "[cpu][types]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  RunOptions options = testing::options(37, 8, 2);
  options.dtype = DataType::Double;
  options.op = ReduceOp::Avg;
  const std::vector<RankBuffers> inputs = executor.make_inputs(options);
  std::vector<RankBuffers> results = inputs;
  REQUIRE(executor.execute(options, results).outcome == Outcome::Pass);
  auto at = [](const std::vector<std::byte>& bytes, std::size_t index) {
    double v;
    std::memcpy(&v, bytes.data() + index * 8, 8);
    return v;
  };
  for (std::size_t index : {0u, 40u, 110u}) {
    const double mean =
        (at(inputs[0].input, index) + at(inputs[1].input, index) + at(inputs[2].input, index)) / 3;
    CHECK(at(results[1].output, index) == Approx(mean).margin(1e-15));
    // execute() leaves the input premultiplied, as documented.
    CHECK(at(results[1].input, index) == Approx(at(inputs[1].input, index) / 3).margin(1e-15));
  }
}

TEST_CASE("half and bfloat16 results are checked with their own precision", "[cpu][types]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  for (DataType type : {DataType::Half, DataType::Bfloat16}) {
    RunOptions options = testing::options(37, 8, 2);
    options.dtype = type;
    const std::vector<RankBuffers> inputs = executor.make_inputs(options);
    std::vector<RankBuffers> results = inputs;
    REQUIRE(executor.execute(options, results).outcome == Outcome::Pass);
    // Flip the highest exponent bit's neighbour of rank 0, output element 5: a factor of 2 or
    // more, far beyond rounding.
    results[0].output[5 * 2 + 1] ^= std::byte{0x40};
    RunResult into;
    into.outcome = Outcome::Pass;
    INFO(to_string(type));
    CHECK_FALSE(executor.check(options, inputs, results, into));
    CHECK(into.mismatch_count == 1);
  }
}

}  // namespace
}  // namespace weft::cpu
