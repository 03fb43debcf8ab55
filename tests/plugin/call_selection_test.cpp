#include <vector>

#include <catch2/catch.hpp>

#include "plugin_test_support.h"
#include "weft/plugin/call_selection.h"

namespace {

using weft::ir::Algorithm;
using weft::ir::Collective;
using weft::plugin::CollectiveCall;
using weft::plugin::select_algorithm;
using weft::plugin::Selection;
using weft::plugin::testing::header_only;

constexpr int kFloat = 7;  // ncclFloat
constexpr int kInt32 = 2;  // ncclInt32
constexpr int kFp8 = 10;   // ncclFloat8e4m3
constexpr int kSum = 0;
constexpr int kAvg = 4;
constexpr int kPreMulSum = 5;  // the first value ncclRedOpCreatePreMulSum hands out

// Buffers are never dereferenced: only their addresses matter (in-place detection).
alignas(16) char send_storage[1 << 12];
alignas(16) char recv_storage[1 << 12];

CollectiveCall call(Collective coll, std::size_t count, int nranks, int dtype = kFloat,
                    int op = kSum) {
  CollectiveCall c;
  c.collective = coll;
  c.sendbuf = send_storage;
  c.recvbuf = recv_storage;
  c.count = count;
  c.nccl_datatype = dtype;
  c.nccl_op = op;
  c.nranks = nranks;
  return c;
}

Selection choose(const std::vector<Algorithm>& algos, const CollectiveCall& c) {
  std::vector<const Algorithm*> candidates;
  for (const Algorithm& a : algos) candidates.push_back(&a);
  return select_algorithm(candidates, c);
}

}  // namespace

TEST_CASE("selection: the first applicable algorithm in catalog order wins") {
  const std::vector<Algorithm> algos = {
      header_only("gather4", Collective::AllGather, 4, 4, false, true),
      header_only("ring4", Collective::AllReduce, 4, 4, false, true),
      header_only("pairs4", Collective::AllReduce, 4, 16, false, true),
  };
  const Selection s = choose(algos, call(Collective::AllReduce, 64, 4));
  CHECK(s.index == 1);
  REQUIRE(s.rejections.size() == 1);
  CHECK(s.rejections[0].find("gather4") != std::string::npos);
}

TEST_CASE("selection: rank count and collective must match") {
  const std::vector<Algorithm> algos = {
      header_only("ring4", Collective::AllReduce, 4, 4, false, true)};
  const Selection s = choose(algos, call(Collective::AllReduce, 64, 8));
  CHECK_FALSE(s.found());
  CHECK(s.reason == "no loaded algorithm is a allreduce for 8 ranks");
  CHECK_FALSE(choose(algos, call(Collective::ReduceScatter, 64, 4)).found());
}

TEST_CASE("selection: the size band [minBytes, maxBytes] picks between algorithms") {
  const std::vector<Algorithm> algos = {
      header_only("small", Collective::AllReduce, 2, 2, false, true, 0, 1024),
      header_only("large", Collective::AllReduce, 2, 2, false, true, 1025, 0),
  };
  CHECK(choose(algos, call(Collective::AllReduce, 256, 2)).index == 0);  // 1024 bytes
  CHECK(choose(algos, call(Collective::AllReduce, 258, 2)).index == 1);  // 1032 bytes
  const std::vector<Algorithm> banded = {
      header_only("mid", Collective::AllReduce, 2, 2, false, true, 4096, 8192)};
  const Selection s = choose(banded, call(Collective::AllReduce, 256, 2));
  CHECK_FALSE(s.found());
  CHECK(s.reason.find("band") != std::string::npos);
}

TEST_CASE("selection: in-place and out-of-place flags follow NCCL's aliasing rules") {
  const std::vector<Algorithm> algos = {
      header_only("inplace", Collective::AllGather, 4, 4, true, false),
      header_only("outofplace", Collective::AllGather, 4, 4, false, true),
  };
  CollectiveCall c = call(Collective::AllGather, 16, 4);
  c.rank = 2;
  CHECK(choose(algos, c).index == 1);
  // allgather is in-place when send == recv + rank·count·size.
  c.sendbuf = recv_storage + 2 * 16 * 4;
  CHECK(weft::plugin::is_in_place(c));
  CHECK(choose(algos, c).index == 0);

  CollectiveCall rs = call(Collective::ReduceScatter, 16, 4);
  rs.rank = 3;
  rs.recvbuf = send_storage + 3 * 16 * 4;
  CHECK(weft::plugin::is_in_place(rs));
  CollectiveCall ar = call(Collective::AllReduce, 16, 4);
  ar.recvbuf = send_storage;
  CHECK(weft::plugin::is_in_place(ar));
  ar.recvbuf = recv_storage;
  CHECK_FALSE(weft::plugin::is_in_place(ar));
}

TEST_CASE("selection: the count must divide into the algorithm's chunks") {
  const std::vector<Algorithm> algos = {
      header_only("ring4", Collective::AllReduce, 4, 4, false, true),
      header_only("allgather4", Collective::AllGather, 4, 8, false, true)};
  CHECK(choose(algos, call(Collective::AllReduce, 64, 4)).found());
  const Selection odd = choose(algos, call(Collective::AllReduce, 66, 4));
  CHECK_FALSE(odd.found());
  CHECK(odd.reason.find("divisible") != std::string::npos);
  // allgather's total is count × ngpus: 2 × 4 = 8 chunks of 1.
  CHECK(choose(algos, call(Collective::AllGather, 2, 4)).index == 1);
  CHECK_FALSE(choose(algos, call(Collective::AllGather, 1, 4)).found());
}

TEST_CASE("selection: avg falls back to NCCL for integers, as do fp8 and PreMulSum") {
  const std::vector<Algorithm> algos = {
      header_only("ring2", Collective::AllReduce, 2, 2, false, true)};
  CHECK(choose(algos, call(Collective::AllReduce, 8, 2, kFloat, kAvg)).found());
  const Selection integer_avg = choose(algos, call(Collective::AllReduce, 8, 2, kInt32, kAvg));
  CHECK_FALSE(integer_avg.found());
  CHECK(integer_avg.reason.find("avg") != std::string::npos);
  const Selection fp8 = choose(algos, call(Collective::AllReduce, 8, 2, kFp8, kSum));
  CHECK_FALSE(fp8.found());
  CHECK(fp8.reason.find("float8e4m3") != std::string::npos);
  const Selection premul = choose(algos, call(Collective::AllReduce, 8, 2, kFloat, kPreMulSum));
  CHECK_FALSE(premul.found());
  CHECK(premul.reason.find("PreMulSum") != std::string::npos);
}

TEST_CASE("selection: collectives without a reduction ignore the operator") {
  const std::vector<Algorithm> algos = {
      header_only("a2a", Collective::AllToAll, 2, 4, false, true)};
  CHECK(choose(algos, call(Collective::AllToAll, 2, 2, kInt32, kPreMulSum)).found());
}

TEST_CASE("selection: broadcast and reduce need a root the algorithm accepts") {
  std::vector<Algorithm> algos = {header_only("bcast", Collective::Broadcast, 4, 4, false, true)};
  algos[0].root = 0;
  CollectiveCall c = call(Collective::Broadcast, 16, 4);
  c.root = 0;
  CHECK(choose(algos, c).found());
  c.root = 2;
  CHECK_FALSE(choose(algos, c).found());
}

TEST_CASE("selection: a group goes to Weft only when every member found an algorithm") {
  Selection found;
  found.index = 0;
  Selection missing;
  missing.reason = "no algorithm";
  CHECK(weft::plugin::group_runs_on_weft(std::vector<Selection>{found, found}));
  CHECK_FALSE(weft::plugin::group_runs_on_weft(std::vector<Selection>{found, missing}));
  CHECK_FALSE(weft::plugin::group_runs_on_weft(std::vector<Selection>{missing, found}));
  CHECK_FALSE(weft::plugin::group_runs_on_weft(std::vector<Selection>{}));
}

TEST_CASE("selection: calls are described for the log") {
  CollectiveCall c = call(Collective::Reduce, 1024, 4, kFloat, kSum);
  c.root = 1;
  CHECK(weft::plugin::describe(c) == "reduce of 1024 × float (sum, root 1, out-of-place)");
}
