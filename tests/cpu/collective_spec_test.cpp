// standard_spec: which input chunks each output chunk of a standard collective must hold.
#include <catch2/catch.hpp>

#include "weft/runtime/collective_spec.h"

namespace weft {
namespace {

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
  CHECK(spec.expected[2][5] == every_rank(4, 5));
  CHECK(spec.root == -1);
}

TEST_CASE("allgather: output block q is rank q's input", "[cpu][spec]") {
  const CollectiveSpec spec = standard_spec(shape(ir::Collective::AllGather, 4, 8), 0);
  CHECK(spec.input_chunks == std::vector<int>(4, 2));
  CHECK(spec.output_chunks == std::vector<int>(4, 8));
  CHECK(spec.expected[0][5] == std::vector<ChunkId>{{2, 1}});
  CHECK(spec.expected[3][0] == std::vector<ChunkId>{{0, 0}});
}

TEST_CASE("reducescatter: rank r's output reduces block r of every input", "[cpu][spec]") {
  const CollectiveSpec spec = standard_spec(shape(ir::Collective::ReduceScatter, 4, 8), 0);
  CHECK(spec.input_chunks == std::vector<int>(4, 8));
  CHECK(spec.output_chunks == std::vector<int>(4, 2));
  CHECK(spec.expected[1][1] == every_rank(4, 3));
}

TEST_CASE("alltoall: output block q of rank r is input block r of rank q", "[cpu][spec]") {
  const CollectiveSpec spec = standard_spec(shape(ir::Collective::AllToAll, 4, 8), 0);
  CHECK(spec.expected[1][5] == std::vector<ChunkId>{{2, 3}});
  CHECK(spec.expected[3][0] == std::vector<ChunkId>{{0, 6}});
}

TEST_CASE("broadcast and reduce follow the root", "[cpu][spec]") {
  const CollectiveSpec broadcast = standard_spec(shape(ir::Collective::Broadcast, 3, 2), 2);
  CHECK(broadcast.root == 2);
  for (int r = 0; r < 3; ++r) {
    CHECK(broadcast.expected[static_cast<std::size_t>(r)][1] == std::vector<ChunkId>{{2, 1}});
  }
  const CollectiveSpec reduce = standard_spec(shape(ir::Collective::Reduce, 3, 2), 1);
  CHECK(reduce.expected[1][0] == every_rank(3, 0));
  CHECK(reduce.expected[0][0].empty());  // non-root outputs are unspecified
  CHECK(reduce.expected[2][1].empty());
}

TEST_CASE("no standard spec where the collective or its geometry gives none", "[cpu][spec]") {
  CHECK(standard_spec(shape(ir::Collective::Custom, 2, 2), 0).ngpus == 0);
  CHECK(standard_spec(shape(ir::Collective::AllToAll, 3, 4), 0).ngpus == 0);  // 4 % 3 != 0
  CHECK(standard_spec(shape(ir::Collective::Broadcast, 3, 3), 3).ngpus == 0);
  CHECK(standard_spec(shape(ir::Collective::Reduce, 3, 3), -1).ngpus == 0);
}

}  // namespace
}  // namespace weft
