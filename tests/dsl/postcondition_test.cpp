// The postcondition on the trace: which output chunks are wrong, and how.
#include <catch2/catch.hpp>

#include "weft/dsl/dsl.h"

namespace dsl = weft::dsl;
using weft::ChunkId;

namespace {

// A correct 3-rank ring allreduce, optionally leaving out one propagation copy.
dsl::Program ring(bool forget_a_step) {
  const int n = 3;
  dsl::Program p("ring", dsl::Collective::allreduce(n, n));
  for (int step = 0; step < n - 1; ++step) {
    for (int k = 0; k < n; ++k) {
      p.chunk((k + step + 1) % n, dsl::input, k).reduce(p.chunk((k + step) % n, dsl::input, k));
    }
  }
  for (int step = 0; step < n - 1; ++step) {
    for (int k = 0; k < n; ++k) {
      if (forget_a_step && step == 1 && k == 2) continue;
      const int from = (k + n - 1 + step) % n;
      p.chunk(from, dsl::input, k).copy((from + 1) % n, dsl::input, k);
    }
  }
  return p;
}

}  // namespace

TEST_CASE("a correct program satisfies its postcondition", "[dsl][postcondition]") {
  const dsl::PostconditionReport report = dsl::check_postcondition(ring(false));
  CHECK(report.ok());
  CHECK(report.str() == "postcondition holds");
}

TEST_CASE("a forgotten step is reported with rank, index, expected and found",
          "[dsl][postcondition]") {
  const dsl::PostconditionReport report = dsl::check_postcondition(ring(true));
  REQUIRE(report.failure_count == 1);
  const dsl::PostconditionFailure& f = report.failures.front();
  // Chunk 2 is complete on rank 1 and copied to rank 2; the copy to rank 0 was forgotten.
  CHECK(f.rank == 0);
  CHECK(f.index == 2);
  CHECK(f.expected == std::vector<ChunkId>{{0, 2}, {1, 2}, {2, 2}});
  REQUIRE(f.found.size() == 2);
  CHECK_THAT(f.str(), Catch::StartsWith("rank 0 output[2]: expected {r0c2, r1c2, r2c2}, found "
                                        "{r0c2, r2c2}; missing {r1c2} (last written by reduce at "
                                        "postcondition_test.cpp:"));
  CHECK_THAT(report.str(), Catch::StartsWith("postcondition fails for 1 output chunk:"));
}

TEST_CASE("a chunk reduced twice is told apart from one reduced once", "[dsl][postcondition]") {
  dsl::Program p("twice", dsl::Collective::reduce(2, 0, 1));
  p.chunk(0, dsl::input, 0).reduce(p.chunk(1, dsl::input, 0));
  p.chunk(0, dsl::input, 0).reduce(p.chunk(1, dsl::input, 0));
  const dsl::PostconditionReport report = dsl::check_postcondition(p);
  REQUIRE(report.failure_count == 1);
  CHECK_THAT(report.failures[0].str(), Catch::Contains("reduced more than once {r1c0×2}"));
}

TEST_CASE("unspecified outputs are not checked, and unexpected chunks are named",
          "[dsl][postcondition]") {
  // Reduce to root 1: rank 0's output is free.
  dsl::Program p("reduce", dsl::Collective::reduce(2, 1, 1, false));
  p.chunk(1, dsl::input, 0).copy(1, dsl::output, 0);
  p.chunk(1, dsl::output, 0).reduce(p.chunk(0, dsl::input, 0));
  CHECK(dsl::check_postcondition(p).ok());

  dsl::Program q("allgather", dsl::Collective::allgather(2, 1, false));
  q.chunk(0, dsl::input, 0).copy(0, dsl::output, 0);
  q.chunk(1, dsl::input, 0).copy(1, dsl::output, 1);
  q.chunk(1, dsl::input, 0).copy(0, dsl::output, 1);
  const int wrong_line = __LINE__ + 1;
  q.chunk(1, dsl::input, 0).copy(1, dsl::output, 0);  // wrong: should be rank 0's
  const dsl::PostconditionReport report = dsl::check_postcondition(q);
  REQUIRE(report.failure_count == 1);
  CHECK(report.failures[0].str() ==
        "rank 1 output[0]: expected {r0c0}, found {r1c0}; missing {r0c0}; unexpected {r1c0} (last "
        "written by copy at postcondition_test.cpp:" +
            std::to_string(wrong_line) + ")");
}

TEST_CASE("an output never written is reported as such", "[dsl][postcondition]") {
  dsl::Program p("empty", dsl::Collective::allgather(2, 1, false));
  const dsl::PostconditionReport report = dsl::check_postcondition(p, 1);
  CHECK(report.failure_count == 4);
  REQUIRE(report.failures.size() == 1);
  CHECK_THAT(report.failures[0].str(), Catch::EndsWith("found nothing (no operation wrote it)"));
  CHECK_THAT(report.str(), Catch::Contains("... and 3 more"));
}
