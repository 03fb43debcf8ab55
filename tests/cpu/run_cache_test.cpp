// Executor::run through a RunCache: the expected values and buffers it keeps between runs give
// the same verdicts as fresh runs, for every call shape it is switched between, and a wrong
// result is still caught.
#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

using testing::replaced;

void check_same(const RunResult& cached, const RunResult& fresh) {
  INFO("cached:\n" << cached.report() << "\nfresh:\n" << fresh.report());
  CHECK(cached.outcome == fresh.outcome);
  CHECK(cached.message == fresh.message);
  CHECK(cached.mismatch_count == fresh.mismatch_count);
  CHECK(cached.steps_executed == fresh.steps_executed);
  CHECK(cached.schedule_fingerprint == fresh.schedule_fingerprint);
}

TEST_CASE("runs through one cache agree with fresh runs across call shapes", "[cpu][cache]") {
  const auto* text = GENERATE(&testing::kRingAllreduce3, &testing::kAllToAll3,
                              &testing::kRingReduceScatter3, &testing::kBroadcast3Root1);
  const ir::Algorithm algo = testing::load(*text);
  const Executor executor(algo, standard_spec(algo, 1));
  RunCache cache;
  // Switches S, type, operator, call mode and root back and forth, so that every part of the
  // cache is both reused and replaced.
  struct Shape {
    std::size_t chunk;
    DataType dtype;
    ReduceOp op;
    bool in_place;
    int root;
  };
  const Shape shapes[] = {
      {37, DataType::Float, ReduceOp::Sum, false, 1},
      {37, DataType::Float, ReduceOp::Sum, true, 1},
      {5, DataType::Float, ReduceOp::Sum, false, 1},
      {37, DataType::Int32, ReduceOp::Prod, false, 1},
      {37, DataType::Half, ReduceOp::Avg, false, 1},
      {37, DataType::Float, ReduceOp::Sum, false, 0},
      {37, DataType::Float, ReduceOp::Sum, false, 1},
  };
  for (const Shape& shape : shapes) {
    for (int depth : {2, 8}) {
      RunOptions options = testing::options(shape.chunk, 8, depth);
      options.dtype = shape.dtype;
      options.op = shape.op;
      options.in_place = shape.in_place;
      options.root = shape.root;
      INFO("S " << shape.chunk << " " << to_string(shape.dtype) << " " << to_string(shape.op)
                << (shape.in_place ? " in place" : " out of place") << " root " << shape.root
                << " depth " << depth);
      check_same(executor.run(options, cache), executor.run(options));
    }
  }
}

TEST_CASE("a wrong result is caught through the cache too", "[cpu][cache]") {
  // Rank 1 forwards chunk 2 without adding its own input: rcs instead of rrcs.
  const ir::Algorithm wrong = testing::load(replaced(
      testing::kRingAllreduce3, R"(type="rrcs" srcbuf="i" srcoff="2" dstbuf="o" dstoff="2")",
      R"(type="rcs" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="2")"));
  const ir::Algorithm right = testing::load(testing::kRingAllreduce3);
  const Executor bad(wrong, standard_spec(wrong, 0));
  const Executor good(right, standard_spec(right, 0));
  RunCache cache;
  const RunOptions options = testing::options(37, 8, 2);
  // The good executor fills the cache first; the bad one must not reuse what it computed.
  CHECK(good.run(options, cache).outcome == Outcome::Pass);
  for (int k = 0; k < 2; ++k) {
    const RunResult result = bad.run(options, cache);
    CHECK(result.outcome == Outcome::WrongResult);
    CHECK(result.mismatch_count == 3 * 37);
  }
  CHECK(good.run(options, cache).outcome == Outcome::Pass);
}

TEST_CASE("a copy that differs from its input is reported element by element", "[cpu][cache]") {
  // Rank 1's copy of its own input into output block 1 becomes a nop: the alltoall-style
  // single-contributor chunk is compared as bytes, and then named per element.
  const ir::Algorithm algo = testing::load(replaced(
      testing::kRingAllgather3, R"(type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1")",
      R"(type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0")"));
  const Executor executor(algo, standard_spec(algo, 0));
  RunCache cache;
  for (DataType dtype : {DataType::Float, DataType::Int8}) {
    RunOptions options = testing::options(37, 8, 2);
    options.dtype = dtype;
    const RunResult result = executor.run(options, cache);
    CHECK(result.outcome == Outcome::WrongResult);
    CHECK(result.mismatch_count == 37);
  }
}

}  // namespace
}  // namespace weft::cpu
