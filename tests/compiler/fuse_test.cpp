// The fuse pass: fusing receives with the sends of what they stored.
#include <catch2/catch.hpp>

#include <algorithm>

#include "weft/compiler/fuse.h"
#include "weft/compiler/lower.h"
#include "weft/dsl/dsl.h"

using namespace weft;
using ir::StepType;

namespace {

std::vector<StepType> types(const compiler::InstructionDag& dag) {
  std::vector<StepType> result;
  for (const compiler::Instruction& i : dag.instructions) result.push_back(i.type);
  return result;
}

}  // namespace

TEST_CASE("fuse: a forwarded receive becomes rcs, whatever the indices", "[compiler][fuse]") {
  dsl::Program p("t", dsl::Collective::broadcast(3, 0, 4));
  // Rank 1 keeps the chunk in scratch slot 3 and forwards it into rank 2's chunk 1.
  p.chunk(0, dsl::input, 1).copy(1, "hop", 3);
  p.chunk(1, "hop", 3).copy(2, dsl::output, 1);
  p.chunk(1, "hop", 3).copy(1, dsl::output, 1);
  const compiler::InstructionDag lowered = compiler::lower(p, {});
  compiler::FuseStats stats;
  const compiler::InstructionDag fused = compiler::fuse(lowered, &stats);
  CHECK(types(fused) == std::vector<StepType>{StepType::Send, StepType::RecvCopySend,
                                              StepType::Recv, StepType::Copy});
  CHECK(stats.rcs == 1);
  const compiler::Instruction& rcs = fused.instructions[1];
  CHECK(rcs.recv_peer == 0);
  CHECK(rcs.send_peer == 2);
  CHECK(rcs.dstbuf == ir::BufferKind::Scratch);
  CHECK(rcs.send_to == 2);
  CHECK(fused.instructions[2].recv_from == 1);
  CHECK(fused.instructions[0].send_to == 1);
  // The local copy still reads what rcs stored.
  CHECK(fused.dependencies(3).size() == 1);
  CHECK(fused.dependencies(3)[0] == 1);
}

TEST_CASE("fuse: recv-reduce then send is rrs when the sum is never read again",
          "[compiler][fuse]") {
  // Reduce to root 2 along a chain 0 → 1 → 2: rank 1's partial sum only travels on.
  dsl::Program p("t", dsl::Collective::reduce(3, 2, 1));
  p.chunk(1, dsl::input, 0).reduce(p.chunk(0, dsl::input, 0));
  p.chunk(2, dsl::input, 0).reduce(p.chunk(1, dsl::input, 0));
  compiler::FuseStats stats;
  const compiler::InstructionDag fused = compiler::fuse(compiler::lower(p, {}), &stats);
  CHECK(types(fused) ==
        std::vector<StepType>{StepType::Send, StepType::RecvReduceSend, StepType::RecvReduceCopy});
  CHECK(stats.rrs == 1);
}

TEST_CASE("fuse: recv-reduce then send is rrcs when the sum is still needed", "[compiler][fuse]") {
  SECTION("it is part of the postcondition") {
    dsl::Program p("t", dsl::Collective::allreduce(3, 1));
    p.chunk(1, dsl::input, 0).reduce(p.chunk(0, dsl::input, 0));
    p.chunk(2, dsl::input, 0).reduce(p.chunk(1, dsl::input, 0));
    p.chunk(2, dsl::input, 0).copy(0, dsl::input, 0);
    p.chunk(0, dsl::input, 0).copy(1, dsl::input, 0);
    const compiler::InstructionDag fused = compiler::fuse(compiler::lower(p, {}));
    // Rank 1's partial sum is overwritten later: rrs. Rank 2's total stays: rrcs.
    CHECK(types(fused) == std::vector<StepType>{StepType::Send, StepType::RecvReduceSend,
                                                StepType::RecvReduceCopySend,
                                                StepType::RecvCopySend, StepType::Recv});
  }
  SECTION("a later step reads it") {
    dsl::Program p("t", dsl::Collective::reduce(3, 2, 1, false));
    p.chunk(1, dsl::input, 0).reduce(p.chunk(0, dsl::input, 0));
    p.chunk(1, dsl::input, 0).copy(2, dsl::output, 0);
    p.chunk(1, dsl::input, 0).copy(1, dsl::output, 0);
    const compiler::InstructionDag fused = compiler::fuse(compiler::lower(p, {}));
    CHECK(fused.instructions[1].type == StepType::RecvReduceCopySend);
  }
}

TEST_CASE("fuse: a send of data changed since the receive is not fused", "[compiler][fuse]") {
  dsl::Program p("t", dsl::Collective::allreduce(3, 2, false));
  p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0);
  p.chunk(1, dsl::output, 0).reduce(p.chunk(1, dsl::input, 0));  // re: a new value
  p.chunk(1, dsl::output, 0).copy(2, dsl::output, 0);
  const compiler::InstructionDag fused = compiler::fuse(compiler::lower(p, {}));
  CHECK(types(fused) == std::vector<StepType>{StepType::Send, StepType::Recv, StepType::Reduce,
                                              StepType::Send, StepType::Recv});
}

TEST_CASE("fuse: hints that put the two halves on different threadblocks prevent fusion",
          "[compiler][fuse]") {
  dsl::Program p("t", dsl::Collective::broadcast(3, 0, 1));
  p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.recvtb = 0});
  p.chunk(1, dsl::output, 0).copy(2, dsl::output, 0, {.sendtb = 1});
  const compiler::InstructionDag fused = compiler::fuse(compiler::lower(p, {}));
  CHECK(fused.size() == 4);
  dsl::Program q("t", dsl::Collective::broadcast(3, 0, 1));
  q.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.channel = 0});
  q.chunk(1, dsl::output, 0).copy(2, dsl::output, 0, {.channel = 1});
  CHECK(compiler::fuse(compiler::lower(q, {})).size() == 4);
}

TEST_CASE("fuse: a receive connection is fused with sends to one peer only", "[compiler][fuse]") {
  // Rank 1 forwards chunk 0 to rank 2 and chunk 1 to rank 3, both received from rank 0: only the
  // first pairing is kept, so one threadblock can drive both connections.
  dsl::Program p("t", dsl::Collective::broadcast(4, 0, 2));
  for (int k = 0; k < 2; ++k) {
    p.chunk(0, dsl::input, k).copy(1, dsl::output, k);
    p.chunk(1, dsl::output, k).copy(2 + k, dsl::output, k);
  }
  compiler::FuseStats stats;
  compiler::fuse(compiler::lower(p, {}), &stats);
  CHECK(stats.rcs == 1);
}

TEST_CASE("fuse: msccl-tools' rule leaves alone a sum read twice and a receive sent elsewhere",
          "[compiler][fuse][msccl]") {
  const auto apart_count = [](const std::vector<char>& apart) {
    return std::count(apart.begin(), apart.end(), 1);
  };
  SECTION("a sum that only travels on is fused as Weft fuses it") {
    dsl::Program p("t", dsl::Collective::reduce(3, 2, 1));
    p.chunk(1, dsl::input, 0).reduce(p.chunk(0, dsl::input, 0));
    p.chunk(2, dsl::input, 0).reduce(p.chunk(1, dsl::input, 0));
    const compiler::InstructionDag lowered = compiler::lower(p, {});
    const std::vector<char> apart = compiler::msccl_unfused_sends(lowered);
    CHECK(apart_count(apart) == 0);
    CHECK(
        types(compiler::fuse(lowered, nullptr, apart)) ==
        std::vector<StepType>{StepType::Send, StepType::RecvReduceSend, StepType::RecvReduceCopy});
  }
  SECTION("a sum also read on its own rank keeps its send apart") {
    // Weft fuses the send to rank 2 (rrcs); msccl-tools sees two operations depend on the sum.
    dsl::Program p("t", dsl::Collective::reduce(3, 2, 1, false));
    p.chunk(1, dsl::input, 0).reduce(p.chunk(0, dsl::input, 0));
    p.chunk(1, dsl::input, 0).copy(2, dsl::output, 0);
    p.chunk(1, dsl::input, 0).copy(1, dsl::output, 0);
    const compiler::InstructionDag lowered = compiler::lower(p, {});
    const std::vector<char> apart = compiler::msccl_unfused_sends(lowered);
    CHECK(apart_count(apart) == 1);
    CHECK(types(compiler::fuse(lowered, nullptr, apart)) ==
          std::vector<StepType>{StepType::Send, StepType::RecvReduceCopy, StepType::Send,
                                StepType::Recv, StepType::Copy});
    CHECK(types(compiler::fuse(lowered)) == std::vector<StepType>{StepType::Send,
                                                                  StepType::RecvReduceCopySend,
                                                                  StepType::Recv, StepType::Copy});
  }
  SECTION("a receive sent on to another buffer keeps its send apart") {
    dsl::Program p("t", dsl::Collective::broadcast(3, 0, 4));
    p.chunk(0, dsl::input, 1).copy(1, "hop", 3);
    p.chunk(1, "hop", 3).copy(2, dsl::output, 1);
    p.chunk(1, "hop", 3).copy(1, dsl::output, 1);
    const compiler::InstructionDag lowered = compiler::lower(p, {});
    const std::vector<char> apart = compiler::msccl_unfused_sends(lowered);
    CHECK(apart_count(apart) == 1);
    CHECK(types(compiler::fuse(lowered, nullptr, apart)) ==
          std::vector<StepType>{StepType::Send, StepType::Recv, StepType::Send, StepType::Recv,
                                StepType::Copy});
  }
}
