// verify(): the sweep over chunk sizes, tile sizes, FIFO depths, seeds and call modes.
#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"
#include "weft/cpu/verify.h"

namespace weft::cpu {
namespace {

TEST_CASE("the default sweep covers both declared modes", "[cpu][verify]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);  // inplace and outofplace
  const Executor executor(algo, standard_spec(algo, 0));
  const VerifyReport report = verify(executor, VerifyOptions{});
  // 2 modes × 1 chunk size × 2 tile sizes × 2 depths × 3 seeds.
  CHECK(report.cases.size() == 24);
  CHECK(report.passed());
  CHECK(report.failures() == 0);
  CHECK(report.min_fifo_depth == 2);
  std::size_t in_place = 0;
  for (const CaseResult& c : report.cases) in_place += c.options.in_place ? 1 : 0;
  CHECK(in_place == 12);
}

TEST_CASE("a sweep can pin the mode and count failures by case", "[cpu][verify]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  VerifyOptions options;
  options.in_place = false;
  options.fifo_depths = {1, 2};
  options.seeds = 2;
  options.dtype = DataType::Int64;
  options.op = ReduceOp::Prod;
  const VerifyReport report = verify(executor, options);
  CHECK(report.cases.size() == 8);
  CHECK(report.failures() == 4);  // every case at depth 1 deadlocks
  CHECK_FALSE(report.passed());
  for (const CaseResult& c : report.cases) {
    CHECK_FALSE(c.options.in_place);
    CHECK(c.options.dtype == DataType::Int64);
    CHECK(c.result.outcome == (c.options.fifo_depth == 1 ? Outcome::Deadlock : Outcome::Pass));
  }
}

TEST_CASE("an algorithm that always deadlocks fails every case and has no depth", "[cpu][verify]") {
  const ir::Algorithm algo = testing::load(testing::kReceiveFirstAllreduce2);
  const Executor executor(algo, standard_spec(algo, 0));
  const VerifyReport report = verify(executor, VerifyOptions{});
  CHECK(report.failures() == report.cases.size());
  CHECK_FALSE(report.min_fifo_depth.has_value());
}

TEST_CASE("an empty sweep does not pass", "[cpu][verify]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  VerifyOptions options;
  options.seeds = 0;
  CHECK_FALSE(verify(executor, options).passed());
}

}  // namespace
}  // namespace weft::cpu
