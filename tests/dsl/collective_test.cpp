// Buffer extents, postconditions and IR headers of the collectives.
#include <catch2/catch.hpp>

#include <algorithm>

#include "weft/dsl/dsl.h"

namespace dsl = weft::dsl;
using weft::ChunkId;
using weft::ir::BufferKind;
using weft::ir::Collective;

TEST_CASE("extents follow NCCL's buffer shapes", "[dsl][collective]") {
  const auto ar = dsl::Collective::allreduce(4, 3);
  CHECK(ar.input_chunks(0) == 3);
  CHECK(ar.output_chunks(0) == 3);
  CHECK(ar.chunks_per_loop() == 3);
  const auto ag = dsl::Collective::allgather(4, 3);
  CHECK(ag.input_chunks(1) == 3);
  CHECK(ag.output_chunks(1) == 12);
  CHECK(ag.chunks_per_loop() == 12);
  const auto rs = dsl::Collective::reducescatter(4, 3);
  CHECK(rs.input_chunks(1) == 12);
  CHECK(rs.output_chunks(1) == 3);
  const auto a2a = dsl::Collective::alltoall(4, 2);
  CHECK(a2a.input_chunks(0) == 8);
  CHECK(a2a.output_chunks(0) == 8);
  CHECK_FALSE(a2a.in_place());
}

TEST_CASE("postconditions of the standard collectives", "[dsl][collective]") {
  CHECK(dsl::Collective::allreduce(3, 2).expected(1, 1) ==
        std::vector<ChunkId>{{0, 1}, {1, 1}, {2, 1}});
  CHECK(dsl::Collective::allgather(3, 2).expected(0, 3) == std::vector<ChunkId>{{1, 1}});
  CHECK(dsl::Collective::reducescatter(3, 2).expected(2, 1) ==
        std::vector<ChunkId>{{0, 5}, {1, 5}, {2, 5}});
  // Output block q of rank r is input block r of rank q.
  CHECK(dsl::Collective::alltoall(3, 2).expected(1, 5) == std::vector<ChunkId>{{2, 3}});
  CHECK(dsl::Collective::broadcast(3, 2, 2).expected(0, 1) == std::vector<ChunkId>{{2, 1}});
  const auto reduce = dsl::Collective::reduce(3, 1, 2);
  CHECK(reduce.expected(0, 0).empty());
  CHECK_FALSE(reduce.specified(0, 0));
  CHECK(reduce.specified(1, 0));
  CHECK(reduce.expected(1, 0).size() == 3);
}

TEST_CASE("custom collectives carry their own pre- and postcondition", "[dsl][collective]") {
  dsl::CustomCollective c;
  c.name = "swap";
  c.ranks = 2;
  c.input_chunks = {1, 2};
  c.output_chunks = {2, 1};
  c.precondition = [](int rank, int index) { return rank == 0 || index == 1; };
  c.postcondition = [](int rank, int index) -> std::vector<ChunkId> {
    if (rank == 0) return index == 1 ? std::vector<ChunkId>{{1, 1}} : std::vector<ChunkId>{};
    return {{0, 0}};
  };
  const auto coll = dsl::Collective::custom(c);
  CHECK(coll.kind() == Collective::Custom);
  CHECK(coll.input_chunks(1) == 2);
  CHECK(coll.output_chunks(0) == 2);
  CHECK(coll.chunks_per_loop() == 2);
  CHECK_FALSE(coll.holds_data(1, 0));
  CHECK(coll.holds_data(1, 1));
  CHECK_FALSE(coll.specified(0, 0));
  const weft::CollectiveSpec spec = coll.custom_spec();
  CHECK(spec.name == "swap");
  CHECK(spec.input_chunks == std::vector<int>{1, 2});
  CHECK(std::ranges::equal(spec.expected.at(0, 1), std::vector<ChunkId>{{1, 1}}));
  CHECK(std::ranges::equal(spec.expected.at(1, 0), std::vector<ChunkId>{{0, 0}}));
  const weft::ir::Algorithm header = coll.ir_header();
  CHECK(header.collective_name == "swap");
  CHECK(header.outofplace);
}

TEST_CASE("an in-place custom collective's output is its input", "[dsl][collective]") {
  dsl::CustomCollective c;
  c.name = "rotate";
  c.ranks = 2;
  c.input_chunks = {2, 2};
  c.output_chunks = {2, 2};
  c.in_place = true;
  c.postcondition = [](int rank, int index) -> std::vector<ChunkId> { return {{1 - rank, index}}; };
  const auto coll = dsl::Collective::custom(c);
  CHECK(coll.in_place());
  const weft::ir::Alias at = coll.resolve(1, BufferKind::Output, 1);
  CHECK(at.buffer == BufferKind::Input);
  CHECK(at.chunk == 1);
  CHECK(coll.resolve(1, BufferKind::Input, 1).buffer == BufferKind::Input);
  const weft::ir::Algorithm header = coll.ir_header();
  CHECK(header.inplace);
  CHECK_FALSE(header.outofplace);
  // One buffer cannot have two sizes.
  c.output_chunks = {2, 1};
  CHECK_THROWS_WITH(dsl::Collective::custom(c),
                    Catch::Contains("in place, rank 1's output is its input, but it has 2 input "
                                    "chunks and 1 output chunks"));
}

TEST_CASE("aliases of in-place calls", "[dsl][collective]") {
  const auto ar = dsl::Collective::allreduce(4, 2, true);
  CHECK(ar.resolve(3, BufferKind::Output, 1).buffer == BufferKind::Input);
  const auto ag = dsl::Collective::allgather(4, 2, true);
  const weft::ir::Alias a = ag.resolve(3, BufferKind::Input, 1);
  CHECK(a.buffer == BufferKind::Output);
  CHECK(a.chunk == 7);
  CHECK(ag.resolve(3, BufferKind::Scratch, 4).chunk == 4);
  const auto oop = dsl::Collective::allgather(4, 2, false);
  CHECK(oop.resolve(3, BufferKind::Input, 1).buffer == BufferKind::Input);
}
