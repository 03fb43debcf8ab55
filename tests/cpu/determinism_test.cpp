// The seed picks the interleaving and nothing else: the same seed gives the same schedule,
// different seeds different schedules, and every schedule the same result.
#include <set>

#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

TEST_CASE("the same seed gives the same trace", "[cpu][determinism]") {
  const ir::Algorithm algo = testing::load(testing::kAllToAll3);
  const Executor executor(algo, standard_spec(algo, 0));
  RunOptions options = testing::options(37, 8, 2, 7);
  options.record_trace = true;
  const RunResult first = executor.run(options);
  const RunResult second = executor.run(options);
  REQUIRE(first.outcome == Outcome::Pass);
  CHECK(first.trace == second.trace);
  CHECK(first.schedule_fingerprint == second.schedule_fingerprint);
  // Recording a trace does not change the schedule.
  options.record_trace = false;
  CHECK(executor.run(options).schedule_fingerprint == first.schedule_fingerprint);
}

TEST_CASE("different seeds interleave differently and compute the same bytes",
          "[cpu][determinism]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  std::set<std::uint64_t> fingerprints;
  std::vector<RankBuffers> reference;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    RunOptions options = testing::options(37, 8, 8, seed);
    std::vector<RankBuffers> buffers = executor.make_inputs(options);
    const RunResult result = executor.execute(options, buffers);
    REQUIRE(result.outcome == Outcome::Pass);
    fingerprints.insert(result.schedule_fingerprint);
    if (reference.empty()) reference = buffers;
    for (std::size_t r = 0; r < 3; ++r) CHECK(buffers[r].output == reference[r].output);
  }
  CHECK(fingerprints.size() == 6);
}

TEST_CASE("inputs depend on rank and element, not on the seed or the tile size",
          "[cpu][determinism]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  const auto a = executor.make_inputs(testing::options(37, 8, 2, 1));
  const auto b = executor.make_inputs(testing::options(37, 64, 8, 99));
  for (std::size_t r = 0; r < 3; ++r) CHECK(a[r].input == b[r].input);
  CHECK(a[0].input != a[1].input);
}

}  // namespace
}  // namespace weft::cpu
