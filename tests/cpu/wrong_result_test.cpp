// Wrong results are found and reported by rank, output chunk and element, with the expected and
// the found value: integers exactly, floating types beyond the reduction-order tolerance.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

using testing::replaced;

TEST_CASE("an allgather that forgets one rank's local copy", "[cpu][wrong]") {
  // Rank 1's copy of its input into output block 1 becomes a nop.
  const ir::Algorithm algo = testing::load(replaced(
      testing::kRingAllgather3, R"(type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1")",
      R"(type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0")"));
  const Executor executor(algo, standard_spec(algo, 0));
  const RunResult result = executor.run(testing::options(37, 8, 2));
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::WrongResult);
  CHECK(result.mismatch_count == 37);
  REQUIRE(result.mismatches.size() == 10);  // the first few are kept
  for (const Mismatch& m : result.mismatches) {
    CHECK(m.rank == 1);
    CHECK(m.buffer == ir::BufferKind::Output);
    CHECK(m.chunk == 1);
    CHECK_THAT(m.found, Catch::Contains("poison"));
  }
  CHECK(result.mismatches[3].element == 3);
  CHECK_THAT(result.message, Catch::StartsWith("37 of 333 checked output elements are wrong"));
  CHECK_THAT(result.report(), Catch::Contains("rank 1 output chunk 1 element 0: expected "));
}

TEST_CASE("an allreduce that forgets one contribution", "[cpu][wrong]") {
  // Rank 1 forwards chunk 2 without adding its own input: rcs instead of rrcs.
  const ir::Algorithm algo = testing::load(replaced(
      testing::kRingAllreduce3, R"(type="rrcs" srcbuf="i" srcoff="2" dstbuf="o" dstoff="2")",
      R"(type="rcs" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="2")"));
  const Executor executor(algo, standard_spec(algo, 0));
  RunOptions options = testing::options(37, 8, 2);
  options.dtype = DataType::Int32;
  const RunResult result = executor.run(options);
  INFO(result.report());
  REQUIRE(result.outcome == Outcome::WrongResult);
  CHECK(result.mismatch_count == 3 * 37);
  for (const Mismatch& m : result.mismatches) CHECK(m.chunk == 2);

  // The report's numbers are the real ones: expected the three-way sum, found it without rank 1.
  const std::vector<RankBuffers> inputs = executor.make_inputs(options);
  const Mismatch& first = result.mismatches.front();
  auto input = [&](int rank) {
    return static_cast<std::uint32_t>(
        testing::int32_at(inputs[static_cast<std::size_t>(rank)].input, 37, 2, first.element));
  };
  const auto expected = static_cast<std::int32_t>(input(0) + input(1) + input(2));
  const auto found = static_cast<std::int32_t>(input(0) + input(2));
  CHECK(first.expected == std::to_string(expected));
  CHECK(first.found == std::to_string(found));
}

TEST_CASE("a floating-point result off by more than rounding is caught", "[cpu][wrong]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  RunOptions options = testing::options(37, 8, 2);
  const std::vector<RankBuffers> inputs = executor.make_inputs(options);
  std::vector<RankBuffers> results = inputs;
  REQUIRE(executor.execute(options, results).outcome == Outcome::Pass);
  RunResult verdict;
  verdict.outcome = Outcome::Pass;
  REQUIRE(executor.check(options, inputs, results, verdict));

  // Rank 2, output chunk 1, element 3.
  const std::size_t index = 1 * 37 + 3;
  auto nudge = [&](auto change) {
    std::vector<RankBuffers> changed = results;
    float value;
    std::memcpy(&value, changed[2].output.data() + index * 4, 4);
    value = change(value);
    std::memcpy(changed[2].output.data() + index * 4, &value, 4);
    RunResult into;
    into.outcome = Outcome::Pass;
    const bool ok = executor.check(options, inputs, changed, into);
    return std::make_pair(ok, into);
  };
  // One unit in the last place is what a different reduction order could give: accepted.
  CHECK(nudge([](float v) { return std::nextafter(v, 10.0f); }).first);
  // A relative error of 1e-3 is not.
  const auto [ok, into] = nudge([](float v) { return v + 1e-3f * std::max(std::fabs(v), 0.1f); });
  CHECK_FALSE(ok);
  CHECK(into.outcome == Outcome::WrongResult);
  REQUIRE(into.mismatch_count == 1);
  CHECK(into.mismatches[0].rank == 2);
  CHECK(into.mismatches[0].chunk == 1);
  CHECK(into.mismatches[0].element == 3);
  CHECK_THAT(into.mismatches[0].expected, Catch::Contains("±"));
  CHECK_FALSE(nudge([](float) { return std::nanf(""); }).first);
}

TEST_CASE("a run's check, which makes the inputs' values again, agrees with make_inputs' buffers",
          "[cpu][wrong]") {
  // run() keeps no copy of the inputs: the check makes each contributor's values again. Checked
  // against the public path, which checks a run of make_inputs' buffers against those buffers:
  // the same verdict, count and reported values, for every type and operator (avg premultiplies
  // the run's buffers, never the values the check expects from).
  const ir::Algorithm wrong = testing::load(replaced(
      testing::kRingAllreduce3, R"(type="rrcs" srcbuf="i" srcoff="2" dstbuf="o" dstoff="2")",
      R"(type="rcs" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="2")"));
  const ir::Algorithm right = testing::load(testing::kRingAllreduce3);
  const auto dtype = GENERATE(DataType::Float, DataType::Half, DataType::Int32, DataType::Int8);
  const auto op = GENERATE(ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Avg);
  const bool in_place = GENERATE(false, true);
  if (op == ReduceOp::Avg && !is_floating(dtype)) return;  // refused, as NCCL does
  RunOptions options = testing::options(37, 8, 2);
  options.dtype = dtype;
  options.op = op;
  options.in_place = in_place;
  INFO(to_string(dtype) << " " << to_string(op) << (in_place ? " in place" : " out of place"));
  for (const ir::Algorithm* algo : {&wrong, &right}) {
    const Executor executor(*algo, standard_spec(*algo, 0));
    const RunResult run = executor.run(options);
    const std::vector<RankBuffers> inputs = executor.make_inputs(options);
    std::vector<RankBuffers> results = inputs;
    REQUIRE(executor.execute(options, results).outcome == Outcome::Pass);
    RunResult checked;
    checked.outcome = Outcome::Pass;
    const bool ok = executor.check(options, inputs, results, checked);
    INFO(run.report());
    CHECK(ok == (algo == &right));
    CHECK(run.outcome == checked.outcome);
    CHECK(run.mismatch_count == checked.mismatch_count);
    CHECK(run.message == checked.message);
    REQUIRE(run.mismatches.size() == checked.mismatches.size());
    for (std::size_t k = 0; k < run.mismatches.size(); ++k) {
      CHECK(run.mismatches[k].str() == checked.mismatches[k].str());
    }
  }
}

}  // namespace
}  // namespace weft::cpu
