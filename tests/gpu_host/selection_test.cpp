// check_applicable: every reason an algorithm does not apply, in words; and Status texts.
#include <catch2/catch.hpp>

#include "builtin_algorithms.h"
#include "weft/program/selection.h"
#include "weft/program/status.h"

namespace weft::gpu::testing {
namespace {

using namespace weft::perf;

CallShape call(ir::Collective coll, int n, std::size_t count, bool in_place = false) {
  CallShape c;
  c.collective = coll;
  c.nranks = n;
  c.count = count;
  c.in_place = in_place;
  return c;
}

TEST_CASE("an algorithm applies to the calls it was written for", "[selection]") {
  const ir::Algorithm ring = ring_allreduce(4, ir::Protocol::Simple);
  CHECK(check_applicable(ring, call(ir::Collective::AllReduce, 4, 4096)).applies);
  CHECK(check_applicable(ring, call(ir::Collective::AllReduce, 4, 4096, true)).applies);
}

TEST_CASE("each reason for not applying is named", "[selection]") {
  ir::Algorithm ring = ring_allreduce(4, ir::Protocol::Simple);
  auto reason = [&](const CallShape& c) {
    const Applicability a = check_applicable(ring, c);
    CHECK_FALSE(a.applies);
    return a.reason;
  };
  CHECK_THAT(reason(call(ir::Collective::AllGather, 4, 4096)), Catch::Contains("allgather"));
  CHECK_THAT(reason(call(ir::Collective::AllReduce, 8, 4096)), Catch::Contains("8"));
  CHECK_THAT(reason(call(ir::Collective::AllReduce, 4, 4097)), Catch::Contains("divisible"));
  CHECK_THAT(reason(call(ir::Collective::AllReduce, 4, 0)), Catch::Contains("count is 0"));
  CallShape avg_int = call(ir::Collective::AllReduce, 4, 4096);
  avg_int.dtype = DataType::Int32;
  avg_int.op = ReduceOp::Avg;
  CHECK_THAT(reason(avg_int), Catch::Contains("avg"));
  ring.max_bytes = 1024;
  CHECK_THAT(reason(call(ir::Collective::AllReduce, 4, 4096)), Catch::Contains("band"));
  ring.max_bytes = 0;
  ring.inplace = false;
  CHECK_THAT(reason(call(ir::Collective::AllReduce, 4, 4096, true)),
             Catch::Contains("out-of-place only"));
  ring.inplace = true;
  ring.outofplace = false;
  CHECK_THAT(reason(call(ir::Collective::AllReduce, 4, 4096)), Catch::Contains("in-place only"));
}

TEST_CASE("rooted collectives need a root that matches the file's", "[selection]") {
  ir::Algorithm b = ring_allreduce(4, ir::Protocol::Simple);
  b.collective = ir::Collective::Broadcast;
  CallShape c = call(ir::Collective::Broadcast, 4, 4096);
  CHECK_FALSE(check_applicable(b, c).applies);  // no root given
  c.root = 2;
  CHECK(check_applicable(b, c).applies);
  b.root = 1;
  CHECK_THAT(check_applicable(b, c).reason, Catch::Contains("root 1"));
}

TEST_CASE("avg is supported for floating types only", "[selection]") {
  for (DataType t : kAllDataTypes) {
    CHECK(supports(t, ReduceOp::Sum));
    CHECK(supports(t, ReduceOp::Avg) == is_floating(t));
  }
}

TEST_CASE("status codes read as words", "[selection]") {
  CHECK(Status::success().str() == "success");
  const Status s = Status::error(ErrorCode::Timeout, "rank 1 waited");
  CHECK(s.str() == "timeout: rank 1 waited");
  for (int code = 0; code <= static_cast<int>(ErrorCode::Mismatch); ++code) {
    CHECK_FALSE(describe(static_cast<ErrorCode>(code)).empty());
  }
  CHECK(to_string(static_cast<ErrorCode>(99)) == "unknown error");
}

}  // namespace
}  // namespace weft::gpu::testing
