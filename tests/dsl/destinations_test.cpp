// The two conveniences msccl-tools' alltoall programs use: copying into the next free place of a
// scratch buffer, and a chunk's destination (rank and output index) from the collective.
#include <catch2/catch.hpp>

#include <functional>

#include "weft/dsl/dsl.h"

namespace dsl = weft::dsl;
using weft::ChunkId;

TEST_CASE("next_free: copies line up in a scratch buffer, per rank", "[dsl][next-free]") {
  dsl::Program p("t", dsl::Collective::alltoall(3, 1, false));
  const dsl::Buffer gathered = p.scratch("gathered");
  const dsl::ChunkRef first = p.chunk(0, dsl::input, 1).copy(1, gathered, dsl::next_free);
  const dsl::ChunkRef second = p.chunk(2, dsl::input, 0, 2).copy(1, "gathered", dsl::next_free);
  const dsl::ChunkRef elsewhere = p.chunk(2, dsl::input, 2).copy(0, gathered, dsl::next_free);
  CHECK(first.index() == 0);
  CHECK(second.index() == 1);
  CHECK(second.size() == 2);
  CHECK(elsewhere.index() == 0);  // rank 0's scratch is empty so far
  CHECK(p.scratch_chunks(1, gathered.scratch) == 3);
  // Past the largest index written, not into holes.
  p.chunk(0, dsl::input, 0).copy(2, gathered, 5);
  CHECK(p.chunk(1, dsl::input, 1).copy(2, gathered, dsl::next_free).index() == 6);
}

TEST_CASE("next_free: only scratch buffers have a next free place", "[dsl][next-free]") {
  dsl::Program p("t", dsl::Collective::alltoall(2, 1, false));
  CHECK_THROWS_WITH(p.chunk(0, dsl::input, 1).copy(1, dsl::output, dsl::next_free),
                    Catch::Contains("the next free place is for scratch buffers"));
}

TEST_CASE("destinations: the collective's definition turned around", "[dsl][destinations]") {
  using Place = dsl::Place;
  const auto alltoall = dsl::Collective::alltoall(4, 2, false);
  CHECK(alltoall.destinations(1, 5) == std::vector<Place>{{2, 3}});
  const auto scatter = dsl::Collective::reducescatter(3, 2, false);
  CHECK(scatter.destinations(0, 3) == std::vector<Place>{{1, 1}});
  const auto gather = dsl::Collective::allgather(3, 1, false);
  CHECK(gather.destinations(2, 0) == std::vector<Place>{{0, 2}, {1, 2}, {2, 2}});
  const auto bcast = dsl::Collective::broadcast(3, 1, 1, false);
  CHECK(bcast.destinations(0, 0).empty());
  CHECK(bcast.destinations(1, 0).size() == 3);
  // Every collective agrees with its own postcondition, custom ones included.
  dsl::CustomCollective shift;
  shift.name = "shift";
  shift.ranks = 3;
  shift.input_chunks = {2, 2, 2};
  shift.output_chunks = {2, 2, 2};
  shift.postcondition = [](int rank, int index) {
    return std::vector<ChunkId>{{(rank + 2) % 3, 1 - index}};
  };
  const std::vector<dsl::Collective> all{
      dsl::Collective::allreduce(3, 2),     dsl::Collective::allgather(3, 2),
      dsl::Collective::reducescatter(3, 2), dsl::Collective::alltoall(3, 2),
      dsl::Collective::broadcast(3, 2, 2),  dsl::Collective::reduce(3, 0, 2),
      dsl::Collective::custom(shift)};
  for (const dsl::Collective& coll : all) {
    for (int r = 0; r < coll.ranks(); ++r) {
      for (int k = 0; k < coll.input_chunks(r); ++k) {
        for (const Place& at : coll.destinations(r, k)) {
          const std::vector<ChunkId> wanted = coll.expected(at.rank, at.index);
          INFO(coll.name() << ": input (" << r << ", " << k << ") -> (" << at.rank << ", "
                           << at.index << ")");
          CHECK(std::find(wanted.begin(), wanted.end(), ChunkId{r, k}) != wanted.end());
        }
      }
    }
    // And the other way round: every chunk an output wants names that output.
    for (int q = 0; q < coll.ranks(); ++q) {
      for (int k = 0; k < coll.output_chunks(q); ++k) {
        for (const ChunkId& id : coll.expected(q, k)) {
          const std::vector<Place> places = coll.destinations(id.rank, id.chunk);
          CHECK(std::find(places.begin(), places.end(), Place{q, k}) != places.end());
        }
      }
    }
  }
}

TEST_CASE("dst_rank / dst_index follow the data wherever it travels", "[dsl][destinations]") {
  dsl::Program p("t", dsl::Collective::alltoall(4, 1, false));
  const dsl::ChunkRef staged = p.chunk(0, dsl::input, 3).copy(1, "staged", dsl::next_free);
  CHECK(staged.dst_rank() == 3);
  CHECK(staged.dst_index() == 0);
  staged.copy(staged.dst_rank(), dsl::output, staged.dst_index());
  // A partial sum of a reduce-scatter block still has one destination.
  dsl::Program rs("rs", dsl::Collective::reducescatter(3, 1, false));
  const dsl::ChunkRef sum = rs.chunk(0, dsl::input, 2).reduce(rs.chunk(1, dsl::input, 2));
  CHECK(sum.dst_rank() == 2);
  CHECK(sum.dst_index() == 0);
}

TEST_CASE("dst_rank: data with several destinations, or none, is an error at the call",
          "[dsl][destinations]") {
  dsl::Program p("t", dsl::Collective::allgather(3, 1, false));
  CHECK_THROWS_WITH(p.chunk(0, dsl::input, 0).dst_rank(),
                    Catch::Contains("dst_rank") && Catch::Contains("3 places, not one") &&
                        Catch::Contains("destinations_test.cpp"));
  CHECK_THROWS_WITH(p.chunk(0, "empty", 0).dst_index(), Catch::Contains("holds no data"));
}
