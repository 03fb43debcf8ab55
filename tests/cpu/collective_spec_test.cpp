// standard_spec: which input chunks each output chunk of a standard collective must hold.
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "weft/ir/collective_spec.h"

namespace weft {
namespace {

// A list the spec holds, as a vector to compare with.
std::vector<ChunkId> ids(std::span<const ChunkId> list) {
  return {list.begin(), list.end()};
}

ir::Algorithm shape(ir::Collective collective, int ngpus, int chunks) {
  ir::Algorithm algo;
  algo.collective = collective;
  algo.ngpus = ngpus;
  algo.nchunksperloop = chunks;
  algo.gpus.resize(static_cast<std::size_t>(ngpus));
  return algo;
}

std::vector<ChunkId> every_rank(int ngpus, int chunk) {
  std::vector<ChunkId> ids;
  for (int q = 0; q < ngpus; ++q) ids.push_back({q, chunk});
  return ids;
}

TEST_CASE("allreduce: every output chunk reduces that chunk of every rank", "[cpu][spec]") {
  const CollectiveSpec spec = standard_spec(shape(ir::Collective::AllReduce, 4, 8), 0);
  CHECK(spec.name == "allreduce");
  REQUIRE(spec.ngpus == 4);
  CHECK(spec.input_chunks == std::vector<int>(4, 8));
  CHECK(spec.output_chunks == std::vector<int>(4, 8));
  CHECK(ids(spec.expected.at(2, 5)) == every_rank(4, 5));
  CHECK(spec.root == -1);
}

TEST_CASE("ranks that expect the same list share it", "[cpu][spec]") {
  // 64 ranks × 64 chunks × 64 contributors held per rank would be 262,144 ids; shared, 4,096.
  const CollectiveSpec allreduce = standard_spec(shape(ir::Collective::AllReduce, 64, 64), 0);
  CHECK(allreduce.expected.lists() == 64);
  CHECK(allreduce.expected.list(0, 7) == allreduce.expected.list(63, 7));
  CHECK(allreduce.expected.list(0, 7) != allreduce.expected.list(0, 8));
  const CollectiveSpec allgather = standard_spec(shape(ir::Collective::AllGather, 4, 8), 0);
  CHECK(allgather.expected.lists() == 8);
  // An alltoall's chunks each expect their own input chunk: nothing to share.
  const CollectiveSpec alltoall = standard_spec(shape(ir::Collective::AllToAll, 4, 8), 0);
  CHECK(alltoall.expected.lists() == 32);
}

TEST_CASE("expected outputs from explicit lists, and how they compare", "[cpu][spec]") {
  ExpectedOutputs written = {{{{1, 0}}, {}}, {{{0, 0}, {1, 0}}}};
  CHECK(written.ranks() == 2);
  CHECK(written.chunks(0) == 2);
  CHECK(written.list(0, 1) == ExpectedOutputs::kUnspecified);  // an empty list: unspecified
  CHECK(written.at(0, 1).empty());
  CHECK(ids(written.at(1, 0)) == std::vector<ChunkId>{{0, 0}, {1, 0}});

  // The same expectation built with a shared list compares equal; another one does not.
  ExpectedOutputs shared;
  shared.add_rank(2);
  shared.add_rank(1);
  const int pair = shared.add_list(std::vector<ChunkId>{{0, 0}, {1, 0}});
  shared.set(0, 0, {{1, 0}});
  shared.set_list(1, 0, pair);
  CHECK(shared == written);
  shared.set_chunks(0, 3);  // the chunk added is unspecified, but covered: not the same
  CHECK(shared.at(0, 2).empty());
  CHECK_FALSE(shared == written);
  written.set(1, 0, {{0, 0}});
  CHECK(ids(written.at(1, 0)) == std::vector<ChunkId>{{0, 0}});
}

TEST_CASE("allgather: output block q is rank q's input", "[cpu][spec]") {
  const CollectiveSpec spec = standard_spec(shape(ir::Collective::AllGather, 4, 8), 0);
  CHECK(spec.input_chunks == std::vector<int>(4, 2));
  CHECK(spec.output_chunks == std::vector<int>(4, 8));
  CHECK(ids(spec.expected.at(0, 5)) == std::vector<ChunkId>{{2, 1}});
  CHECK(ids(spec.expected.at(3, 0)) == std::vector<ChunkId>{{0, 0}});
}

TEST_CASE("reducescatter: rank r's output reduces block r of every input", "[cpu][spec]") {
  const CollectiveSpec spec = standard_spec(shape(ir::Collective::ReduceScatter, 4, 8), 0);
  CHECK(spec.input_chunks == std::vector<int>(4, 8));
  CHECK(spec.output_chunks == std::vector<int>(4, 2));
  CHECK(ids(spec.expected.at(1, 1)) == every_rank(4, 3));
}

TEST_CASE("alltoall: output block q of rank r is input block r of rank q", "[cpu][spec]") {
  const CollectiveSpec spec = standard_spec(shape(ir::Collective::AllToAll, 4, 8), 0);
  CHECK(ids(spec.expected.at(1, 5)) == std::vector<ChunkId>{{2, 3}});
  CHECK(ids(spec.expected.at(3, 0)) == std::vector<ChunkId>{{0, 6}});
}

TEST_CASE("broadcast and reduce follow the root", "[cpu][spec]") {
  const CollectiveSpec broadcast = standard_spec(shape(ir::Collective::Broadcast, 3, 2), 2);
  CHECK(broadcast.root == 2);
  for (int r = 0; r < 3; ++r) {
    CHECK(ids(broadcast.expected.at(r, 1)) == std::vector<ChunkId>{{2, 1}});
  }
  const CollectiveSpec reduce = standard_spec(shape(ir::Collective::Reduce, 3, 2), 1);
  CHECK(ids(reduce.expected.at(1, 0)) == every_rank(3, 0));
  CHECK(reduce.expected.at(0, 0).empty());  // non-root outputs are unspecified
  CHECK(reduce.expected.at(2, 1).empty());
}

TEST_CASE("no standard spec where the collective or its geometry gives none", "[cpu][spec]") {
  CHECK(standard_spec(shape(ir::Collective::Custom, 2, 2), 0).ngpus == 0);
  CHECK(standard_spec(shape(ir::Collective::AllToAll, 3, 4), 0).ngpus == 0);  // 4 % 3 != 0
  CHECK(standard_spec(shape(ir::Collective::Broadcast, 3, 3), 3).ngpus == 0);
  CHECK(standard_spec(shape(ir::Collective::Reduce, 3, 3), -1).ngpus == 0);
}

}  // namespace
}  // namespace weft
