// Recording operations: what slots hold afterwards, in-place aliasing, scratch buffers, and the
// chunk-reference helpers.
#include <catch2/catch.hpp>

#include "weft/dsl/dsl.h"

namespace dsl = weft::dsl;
using weft::ChunkId;
using weft::ir::BufferKind;

namespace {

std::vector<ChunkId> chunks_of(const dsl::Program& p, const dsl::ChunkRef& ref) {
  std::vector<ChunkId> result;
  for (const dsl::Contribution& c : p.contributions(ref.location())) {
    for (int t = 0; t < c.times; ++t) result.push_back(c.chunk);
  }
  return result;
}

}  // namespace

TEST_CASE("copy shares the source's contents and reduce unites them", "[dsl]") {
  dsl::Program p("t", dsl::Collective::allreduce(3, 2, /*in_place=*/false));
  p.chunk(0, dsl::input, 1).copy(1, dsl::output, 0);
  CHECK(chunks_of(p, p.chunk(1, dsl::output, 0)) == std::vector<ChunkId>{{0, 1}});
  p.chunk(1, dsl::output, 0).reduce(p.chunk(2, dsl::input, 0));
  CHECK(chunks_of(p, p.chunk(1, dsl::output, 0)) == std::vector<ChunkId>{{0, 1}, {2, 0}});
  REQUIRE(p.operations().size() == 2);
  const dsl::Operation& reduce = p.operations()[1];
  CHECK(reduce.kind == dsl::OperationKind::Reduce);
  CHECK(reduce.src.rank == 2);
  CHECK(reduce.dst.rank == 1);
  CHECK(reduce.dst.buffer.kind == BufferKind::Output);
  CHECK(reduce.cross_rank());
}

TEST_CASE("a reference reads what its place holds when it is used", "[dsl]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 1));
  const dsl::ChunkRef mine = p.chunk(1, dsl::input, 0);
  p.chunk(1, dsl::input, 0).reduce(p.chunk(0, dsl::input, 0));
  CHECK(chunks_of(p, mine) == std::vector<ChunkId>{{0, 0}, {1, 0}});
}

TEST_CASE("in-place calls resolve aliases when a reference is made", "[dsl]") {
  SECTION("allreduce: output k is input k") {
    dsl::Program p("t", dsl::Collective::allreduce(2, 4, true));
    const dsl::ChunkRef out = p.chunk(1, dsl::output, 3);
    CHECK(out.buffer() == dsl::input);
    CHECK(out.index() == 3);
    CHECK(chunks_of(p, out) == std::vector<ChunkId>{{1, 3}});
  }
  SECTION("allgather: the input is the rank's block of the output") {
    dsl::Program p("t", dsl::Collective::allgather(4, 2, true));
    const dsl::ChunkRef in = p.chunk(2, dsl::input, 1);
    CHECK(in.buffer() == dsl::output);
    CHECK(in.index() == 5);
    CHECK(chunks_of(p, p.chunk(2, dsl::output, 5)) == std::vector<ChunkId>{{2, 1}});
    CHECK(p.contributions(p.chunk(2, dsl::output, 0).location()).empty());
  }
  SECTION("reducescatter: the output is the rank's block of the input") {
    dsl::Program p("t", dsl::Collective::reducescatter(3, 1, true));
    const dsl::ChunkRef out = p.chunk(2, dsl::output, 0);
    CHECK(out.buffer() == dsl::input);
    CHECK(out.index() == 2);
  }
  SECTION("out of place: no aliasing") {
    dsl::Program p("t", dsl::Collective::allreduce(2, 4, false));
    CHECK(p.chunk(1, dsl::output, 3).buffer() == dsl::output);
    CHECK(p.contributions(p.chunk(1, dsl::output, 3).location()).empty());
  }
}

TEST_CASE("named scratch buffers grow with the largest index written", "[dsl]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 2));
  const dsl::Buffer tmp = p.scratch("tmp");
  CHECK(p.scratch("tmp") == tmp);
  const dsl::Buffer other = p.scratch("other");
  CHECK(other.scratch != tmp.scratch);
  p.chunk(0, dsl::input, 0, 2).copy(1, tmp, 5);
  p.chunk(0, dsl::input, 1).copy(1, "other", 0);
  CHECK(p.scratch_chunks(1, tmp.scratch) == 7);
  CHECK(p.scratch_chunks(0, tmp.scratch) == 0);
  CHECK(p.scratch_chunks(1, other.scratch) == 1);
  CHECK(chunks_of(p, p.chunk(1, tmp, 6)) == std::vector<ChunkId>{{0, 1}});
  CHECK(p.scratch_names() == std::vector<std::string>{"tmp", "other"});
}

TEST_CASE("split, slice and group", "[dsl]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 6));
  const dsl::ChunkRef all = p.chunk(0, dsl::input, 0, 6);
  const std::vector<dsl::ChunkRef> parts = all.split(3);
  REQUIRE(parts.size() == 3);
  CHECK(parts[1].index() == 2);
  CHECK(parts[1].size() == 2);
  CHECK(all.slice(4, 2).index() == 4);
  const dsl::ChunkRef joined = dsl::group(std::vector<dsl::ChunkRef>{parts[1], parts[2]});
  CHECK(joined.index() == 2);
  CHECK(joined.size() == 4);
  // A grouped reference moves as one operation.
  joined.copy(1, dsl::output, 0);
  CHECK(p.operations().back().size == 4);
}

TEST_CASE("copy and reduce return the destination", "[dsl]") {
  dsl::Program p("t", dsl::Collective::allreduce(3, 1, false));
  const dsl::ChunkRef at1 = p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0);
  CHECK(at1.rank() == 1);
  const dsl::ChunkRef reduced = at1.reduce(p.chunk(2, dsl::input, 0));
  CHECK(reduced.rank() == 1);
  CHECK(chunks_of(p, reduced) == std::vector<ChunkId>{{0, 0}, {2, 0}});
}

TEST_CASE("options and hints are recorded", "[dsl]") {
  dsl::Options options;
  options.protocol = weft::ir::Protocol::LL128;
  options.instances = 2;
  options.threadblocks = dsl::ThreadblockPolicy::Manual;
  dsl::Program p("t", dsl::Collective::allreduce(2, 1), options);
  CHECK(p.options().instances == 2);
  CHECK(p.options().protocol == weft::ir::Protocol::LL128);
  p.chunk(0, dsl::input, 0).copy(1, "tmp", 0, {.channel = 3, .sendtb = 1, .recvtb = 2});
  const dsl::Hints& hints = p.operations().back().hints;
  CHECK(hints.channel == 3);
  CHECK(hints.sendtb == 1);
  CHECK(hints.recvtb == 2);
}
