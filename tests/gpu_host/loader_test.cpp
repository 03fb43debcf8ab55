// flatten_rank: nop folding, re merging, dependency lists and what they refuse.
#include <catch2/catch.hpp>

#include "builtin_algorithms.h"
#include "weft/ir/validate.h"
#include "weft/program/device_program.h"

namespace weft::gpu::testing {
namespace {

using namespace weft::perf;

using ir::BufferKind;
using ir::StepType;

// One rank, `tbs` threadblocks without peers: a canvas for local-step programs.
ir::Algorithm local_canvas(int tbs, int chunks = 8) {
  ir::Algorithm a =
      base_algorithm("canvas", ir::Collective::Custom, 1, chunks, ir::Protocol::Simple);
  a.gpus[0].input_chunks = a.gpus[0].output_chunks = a.gpus[0].scratch_chunks = chunks;
  for (int t = 0; t < tbs; ++t) {
    ir::Threadblock tb;
    tb.id = t;
    a.gpus[0].threadblocks.push_back(tb);
  }
  return a;
}

std::vector<ir::Step>& steps(ir::Algorithm& a, int tb) {
  return a.gpus[0].threadblocks[static_cast<std::size_t>(tb)].steps;
}

ir::Step copy(int src, int dst, int depid = -1, int deps = -1, bool hasdep = false) {
  return make_step(StepType::Copy, BufferKind::Input, src, BufferKind::Output, dst, 1, depid, deps,
                   hasdep);
}

ir::Step reduce(BufferKind srcbuf, int src, int dst, int depid = -1, int deps = -1,
                bool hasdep = false) {
  return make_step(StepType::Reduce, srcbuf, src, BufferKind::Output, dst, 1, depid, deps, hasdep);
}

RankProgram flatten_ok(const ir::Algorithm& a, int rank = 0) {
  auto program = flatten_rank(a, rank);
  INFO(program.status().str());
  REQUIRE(program.ok());
  return std::move(program).value();
}

const DeviceStep& flat(const RankProgram& p, int tb, int f) {
  const DeviceThreadblock& block = p.threadblocks[static_cast<std::size_t>(tb)];
  REQUIRE(f < block.step_count);
  return p.steps[static_cast<std::size_t>(block.first_step + f)];
}

std::vector<std::pair<int, int>> deps_of(const RankProgram& p, const DeviceStep& s) {
  std::vector<std::pair<int, int>> out;
  for (int k = 0; k < s.dependency_count; ++k) {
    const DeviceDependency& d = p.dependencies[static_cast<std::size_t>(s.first_dependency + k)];
    out.emplace_back(d.threadblock, d.step);
  }
  return out;
}

TEST_CASE("nops fold into the next real step's dependency list", "[loader]") {
  ir::Algorithm a = local_canvas(3);
  steps(a, 0) = {copy(0, 0, -1, -1, true)};
  steps(a, 1) = {copy(1, 1, -1, -1, true)};
  steps(a, 2) = {nop(0, 0), nop(1, 0), copy(2, 2)};
  REQUIRE_FALSE(ir::validate(a, ir::weft_limits()).has_errors());
  const RankProgram p = flatten_ok(a);
  CHECK(p.nops_folded == 2);
  REQUIRE(p.threadblocks[2].step_count == 1);
  const DeviceStep& s = flat(p, 2, 0);
  CHECK(s.ir_step == 2);
  CHECK(deps_of(p, s) == std::vector<std::pair<int, int>>{{0, 0}, {1, 0}});
  // The awaited steps publish their completion; the others need not.
  CHECK((flat(p, 0, 0).flags & kStepPublishes) != 0);
  CHECK((flat(p, 1, 0).flags & kStepPublishes) != 0);
  CHECK((s.flags & kStepPublishes) == 0);
  // The tile stride of each dependency is its threadblock's flat step count.
  CHECK(p.dependencies[static_cast<std::size_t>(s.first_dependency)].steps == 1);
}

TEST_CASE("a dependency on a nop becomes the nop's own conditions", "[loader]") {
  ir::Algorithm a = local_canvas(3);
  steps(a, 0) = {copy(0, 0, -1, -1, true)};
  // tb 1: a real step, then a nop that waits on tb 0 and is itself waited on, then more work.
  steps(a, 1) = {copy(1, 1, -1, -1, false), nop(0, 0), copy(3, 3)};
  steps(a, 1)[1].hasdep = true;
  steps(a, 2) = {copy(2, 2, 1, 1)};
  REQUIRE_FALSE(ir::validate(a, ir::weft_limits()).has_errors());
  const RankProgram p = flatten_ok(a);
  // "tb 1 finished its nop" = tb 1 finished the copy before it, and tb 0 finished step 0.
  CHECK(deps_of(p, flat(p, 2, 0)) == std::vector<std::pair<int, int>>{{0, 0}, {1, 0}});
  CHECK((flat(p, 1, 0).flags & kStepPublishes) != 0);
  // tb 1's second copy carries the nop's wait.
  CHECK(deps_of(p, flat(p, 1, 1)) == std::vector<std::pair<int, int>>{{0, 0}});
}

TEST_CASE("nops that wait on nops expand transitively; trailing nops disappear", "[loader]") {
  ir::Algorithm a = local_canvas(4);
  steps(a, 0) = {copy(0, 0, -1, -1, true)};
  steps(a, 1) = {nop(0, 0)};  // only a nop: no flat step at all
  steps(a, 1)[0].hasdep = true;
  steps(a, 2) = {nop(1, 0)};
  steps(a, 2)[0].hasdep = true;
  steps(a, 3) = {copy(3, 3, 2, 0)};
  REQUIRE_FALSE(ir::validate(a, ir::weft_limits()).has_errors());
  const RankProgram p = flatten_ok(a);
  CHECK(p.threadblocks[1].step_count == 0);
  CHECK(p.threadblocks[2].step_count == 0);
  CHECK(deps_of(p, flat(p, 3, 0)) == std::vector<std::pair<int, int>>{{0, 0}});
}

TEST_CASE("a nop cycle is refused with the element's path", "[loader]") {
  ir::Algorithm a = local_canvas(3);
  steps(a, 0) = {nop(1, 0)};
  steps(a, 0)[0].hasdep = true;
  steps(a, 1) = {nop(0, 0)};
  steps(a, 1)[0].hasdep = true;
  steps(a, 2) = {copy(0, 0, 0, 0)};
  auto program = flatten_rank(a, 0);  // not validated on purpose: validation rejects cycles
  REQUIRE_FALSE(program.ok());
  CHECK(program.status().code == ErrorCode::InvalidAlgorithm);
  CHECK_THAT(program.status().message, Catch::Contains("cycle") && Catch::Contains("gpu 0 / tb"));
}

TEST_CASE("consecutive re onto one destination merge into one n-ary reduction", "[loader]") {
  ir::Algorithm a = local_canvas(1);
  steps(a, 0) = {reduce(BufferKind::Input, 1, 0), reduce(BufferKind::Input, 2, 0),
                 reduce(BufferKind::Scratch, 3, 0), copy(4, 4)};
  const RankProgram p = flatten_ok(a);
  CHECK(p.reduces_merged == 2);
  REQUIRE(p.threadblocks[0].step_count == 2);
  const DeviceStep& merged = flat(p, 0, 0);
  CHECK(merged.srcbuf == DeviceBuffer::Input);
  CHECK(merged.srcoff == 1);
  REQUIRE(merged.source_count == 2);
  CHECK(p.sources[static_cast<std::size_t>(merged.first_source)].offset == 2);
  CHECK(p.sources[static_cast<std::size_t>(merged.first_source + 1)].buffer ==
        DeviceBuffer::Scratch);
  CHECK(merged.ir_step == 2);
}

TEST_CASE("re merging stops where merging would change results or waits", "[loader]") {
  SECTION("a step someone waits on ends the run") {
    ir::Algorithm a = local_canvas(2);
    steps(a, 0) = {reduce(BufferKind::Input, 1, 0, -1, -1, true), reduce(BufferKind::Input, 2, 0)};
    steps(a, 1) = {copy(5, 5, 0, 0)};
    const RankProgram p = flatten_ok(a);
    CHECK(p.reduces_merged == 0);
    CHECK(p.threadblocks[0].step_count == 2);
  }
  SECTION("a source that overlaps the destination") {
    ir::Algorithm a = local_canvas(1);
    steps(a, 0) = {reduce(BufferKind::Input, 1, 0), reduce(BufferKind::Output, 0, 0)};
    CHECK(flatten_ok(a).reduces_merged == 0);
  }
  SECTION("in an in-place call input and output alias") {
    ir::Algorithm a = local_canvas(1);
    a.collective = ir::Collective::AllReduce;
    a.inplace = true;
    steps(a, 0) = {reduce(BufferKind::Input, 1, 0), reduce(BufferKind::Input, 0, 0)};
    CHECK(flatten_ok(a).reduces_merged == 0);
  }
  SECTION("another destination") {
    ir::Algorithm a = local_canvas(1);
    steps(a, 0) = {reduce(BufferKind::Input, 1, 0), reduce(BufferKind::Input, 2, 3)};
    CHECK(flatten_ok(a).reduces_merged == 0);
  }
  SECTION("a wait of the later step is hoisted onto the merged step") {
    ir::Algorithm a = local_canvas(2);
    steps(a, 1) = {copy(6, 6, -1, -1, true)};
    steps(a, 0) = {reduce(BufferKind::Input, 1, 0), reduce(BufferKind::Input, 2, 0, 1, 0)};
    const RankProgram p = flatten_ok(a);
    CHECK(p.reduces_merged == 1);
    CHECK(deps_of(p, flat(p, 0, 0)) == std::vector<std::pair<int, int>>{{1, 0}});
  }
  SECTION("at most kMaxReduceSources sources") {
    ir::Algorithm a = local_canvas(1, 32);
    for (int k = 1; k <= 20; ++k) steps(a, 0).push_back(reduce(BufferKind::Input, k, 0));
    const RankProgram p = flatten_ok(a);
    for (const DeviceStep& s : p.steps) CHECK(1 + s.source_count <= kMaxReduceSources);
    CHECK(p.threadblocks[0].step_count == (20 + kMaxReduceSources - 1) / kMaxReduceSources);
  }
}

TEST_CASE("waits on one threadblock keep only the latest step", "[loader]") {
  ir::Algorithm a = local_canvas(2);
  steps(a, 0) = {copy(0, 0, -1, -1, true), copy(1, 1, -1, -1, true)};
  steps(a, 1) = {nop(0, 0), copy(2, 2, 0, 1)};
  const RankProgram p = flatten_ok(a);
  CHECK(deps_of(p, flat(p, 1, 0)) == std::vector<std::pair<int, int>>{{0, 1}});
  CHECK((flat(p, 0, 0).flags & kStepPublishes) == 0);
  CHECK((flat(p, 0, 1).flags & kStepPublishes) != 0);
}

TEST_CASE("shifted overlap between reads and writes serialises pieces", "[loader]") {
  ir::Algorithm a = local_canvas(1);
  steps(a, 0) = {make_step(StepType::Copy, BufferKind::Output, 1, BufferKind::Output, 0, 2),
                 make_step(StepType::Reduce, BufferKind::Output, 4, BufferKind::Output, 4, 2),
                 make_step(StepType::Copy, BufferKind::Input, 0, BufferKind::Output, 0, 2)};
  const RankProgram p = flatten_ok(a);
  CHECK((flat(p, 0, 0).flags & kStepSerialPieces) != 0);   // o[1..3) → o[0..2)
  CHECK((flat(p, 0, 0).flags & kStepReversePieces) == 0);  // ascending reads chunk 1 first
  CHECK((flat(p, 0, 1).flags & kStepSerialPieces) == 0);   // element-wise in place
  CHECK((flat(p, 0, 2).flags & kStepSerialPieces) == 0);   // disjoint out of place
}

TEST_CASE("a write onto a later-read piece runs the pieces last to first", "[loader]") {
  // cpy o[0..2) → o[1..3) and re o[2..4) += o[3..5): ascending would overwrite the chunk the
  // next piece reads (the CPU reference reads every piece before writing any).
  ir::Algorithm a = local_canvas(1);
  steps(a, 0) = {make_step(StepType::Copy, BufferKind::Output, 0, BufferKind::Output, 1, 2),
                 make_step(StepType::Reduce, BufferKind::Output, 3, BufferKind::Output, 2, 2)};
  const RankProgram p = flatten_ok(a);
  CHECK((flat(p, 0, 0).flags & kStepSerialPieces) != 0);
  CHECK((flat(p, 0, 0).flags & kStepReversePieces) != 0);
  CHECK((flat(p, 0, 1).flags & kStepSerialPieces) != 0);
  CHECK((flat(p, 0, 1).flags & kStepReversePieces) == 0);  // o[3] read at piece 0, written at 1
}

TEST_CASE("in-place aliasing counts as overlap when ordering pieces", "[loader]") {
  // In-place allgather, 2 ranks × 3 chunks: on rank 1 the input i[k] is the output o[3 + k].
  // cpy i[0..2) → o[4..6): piece 0 writes o[4] = i[1], which piece 1 reads: last to first.
  ir::Algorithm a = base_algorithm("ag", ir::Collective::AllGather, 2, 6, ir::Protocol::Simple);
  a.inplace = true;
  for (ir::Gpu& gpu : a.gpus) {
    ir::Threadblock tb;
    tb.steps = {make_step(StepType::Copy, BufferKind::Input, 0, BufferKind::Output, 4, 2)};
    gpu.threadblocks.push_back(tb);
  }
  const RankProgram in_place = flatten_ok(a, 1);
  CHECK((flat(in_place, 0, 0).flags & kStepSerialPieces) != 0);
  CHECK((flat(in_place, 0, 0).flags & kStepReversePieces) != 0);
  a.inplace = false;  // never called in place: the buffers are disjoint
  const RankProgram out_of_place = flatten_ok(a, 1);
  CHECK((flat(out_of_place, 0, 0).flags & kStepSerialPieces) == 0);
}

TEST_CASE("receive steps whose pieces cannot be ordered are refused", "[loader]") {
  // Rank 0 of a pair: rrc o[dstoff..+2) ← m ⊕ o[srcoff..+2).
  const auto pair = [](ir::Protocol proto, int srcoff, int dstoff) {
    ir::Algorithm a = base_algorithm("pair", ir::Collective::Custom, 2, 4, proto);
    for (int r = 0; r < 2; ++r) {
      ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
      gpu.input_chunks = gpu.output_chunks = 4;
      ir::Threadblock tb;
      tb.send = tb.recv = 1 - r;
      tb.steps = {make_step(StepType::Send, BufferKind::Input, 0, BufferKind::None, -1, 2),
                  make_step(StepType::RecvReduceCopy, BufferKind::Output, srcoff,
                            BufferKind::Output, dstoff, 2)};
      gpu.threadblocks.push_back(tb);
    }
    return a;
  };
  // LL and LL128 process a message's words side by side: any shifted overlap is refused.
  for (ir::Protocol proto : {ir::Protocol::LL, ir::Protocol::LL128}) {
    const auto refused = flatten_rank(pair(proto, 1, 0), 0);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.status().message, Catch::Contains("gpu 0 / tb 0 / step 1") &&
                                             Catch::Contains("overlaps its destination"));
    CHECK(flatten_rank(pair(proto, 2, 0), 0).ok());  // disjoint
    CHECK(flatten_rank(pair(proto, 0, 0), 0).ok());  // element-wise
  }
  // Simple: ascending is right for src o[1..3) → dst o[0..2) (o[1] read at piece 0, written at
  // piece 1); the other way round would need last to first, which arriving messages forbid.
  const RankProgram ascending = flatten_ok(pair(ir::Protocol::Simple, 1, 0));
  CHECK((flat(ascending, 0, 1).flags & kStepSerialPieces) != 0);
  CHECK((flat(ascending, 0, 1).flags & kStepReversePieces) == 0);
  const auto descending = flatten_rank(pair(ir::Protocol::Simple, 0, 1), 0);
  REQUIRE_FALSE(descending.ok());
  CHECK_THAT(descending.status().message, Catch::Contains("earlier chunk of its destination"));
}

TEST_CASE("ring and all-pairs programs have the expected shape", "[loader]") {
  for (int n : {2, 4, 8}) {
    const ir::Algorithm ring = ring_allreduce(n, ir::Protocol::Simple, 2);
    const RankProgram p = flatten_ok(ring, n - 1);
    CHECK(p.threadblocks.size() == 2);
    CHECK(p.max_steps == 2 * n - 1);  // s, n−2 rrs, rrcs, n−2 rcs, r
    CHECK(p.max_count == 1);
    CHECK(p.dependencies.empty());

    const ir::Algorithm chain = allpairs_chain_allreduce(n, ir::Protocol::LL, true);
    const RankProgram q = flatten_ok(chain, 1);
    CHECK(q.nops_folded == 2 * (n - 1));
    // Each sender's final send waits for the end of the reduction chain.
    for (const DeviceThreadblock& tb : q.threadblocks) {
      if (tb.send_peer < 0) continue;
      REQUIRE(tb.step_count == 2);
      const auto deps = deps_of(q, flat(q, tb.id, 1));
      REQUIRE(deps.size() == 1);
      CHECK(deps[0].first == 2 * (n - 1));
    }

    // The parallel version: n−1 `re` steps become one reduction of n−1 sources that waits on
    // every receiving threadblock, and the senders wait on it.
    const RankProgram m = flatten_ok(allpairs_allreduce(n, ir::Protocol::LL), 0);
    REQUIRE(m.threadblocks[0].step_count == 2);
    const DeviceStep& reduction = flat(m, 0, 1);
    CHECK(reduction.type == static_cast<std::uint8_t>(StepType::Reduce));
    CHECK(reduction.source_count == n - 2);
    CHECK((reduction.flags & kStepPublishes) != 0);
    CHECK(deps_of(m, reduction).size() == static_cast<std::size_t>(n - 1));
    CHECK(deps_of(m, flat(m, 1, 1)) == std::vector<std::pair<int, int>>{{0, 1}});
  }
}

TEST_CASE("flatten refuses what it cannot run, naming the element", "[loader]") {
  SECTION("a rank the algorithm does not have") {
    const auto program = flatten_rank(ring_allreduce(2, ir::Protocol::Simple), 5);
    REQUIRE_FALSE(program.ok());
    CHECK_THAT(program.status().message, Catch::Contains("no gpu 5"));
  }
  SECTION("a dependency on a missing step") {
    ir::Algorithm a = local_canvas(2);
    steps(a, 0) = {copy(0, 0)};
    steps(a, 1) = {copy(1, 1, 0, 7)};
    const auto program = flatten_rank(a, 0);
    REQUIRE_FALSE(program.ok());
    CHECK_THAT(program.status().message, Catch::Contains("gpu 0 / tb 1 / step 0"));
  }
  SECTION("a send without a send peer") {
    ir::Algorithm a = local_canvas(1);
    steps(a, 0) = {make_step(StepType::Send, BufferKind::Input, 0, BufferKind::None, -1)};
    const auto program = flatten_rank(a, 0);
    REQUIRE_FALSE(program.ok());
    CHECK_THAT(program.status().message, Catch::Contains("no send peer"));
  }
  SECTION("duplicate threadblock ids") {
    ir::Algorithm a = local_canvas(2);
    a.gpus[0].threadblocks[1].id = 0;
    CHECK_FALSE(flatten_rank(a, 0).ok());
  }
}

TEST_CASE("fingerprints see structure, not names", "[loader]") {
  const ir::Algorithm a = ring_allreduce(4, ir::Protocol::Simple);
  ir::Algorithm b = a;
  b.name = "renamed";
  b.source = "elsewhere.xml";
  CHECK(fingerprint(a) == fingerprint(b));
  b.gpus[2].threadblocks[0].steps[1].srcoff ^= 1;
  CHECK(fingerprint(a) != fingerprint(b));
  CHECK(fingerprint(ring_allreduce(4, ir::Protocol::LL)) != fingerprint(a));
}

}  // namespace
}  // namespace weft::gpu::testing
