// The lower pass: the chunk DAG to per-rank instructions.
#include <catch2/catch.hpp>

#include "weft/compiler/lower.h"
#include "weft/dsl/dsl.h"

using namespace weft;
using ir::BufferKind;
using ir::StepType;

TEST_CASE("lower: a cross-rank copy is a send and a receive joined by a message",
          "[compiler][lower]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 4, false));
  p.chunk(0, dsl::input, 1).copy(1, dsl::output, 2, {.channel = 1, .sendtb = 3, .recvtb = 4});
  const compiler::InstructionDag dag = compiler::lower(p, {});
  REQUIRE(dag.size() == 2);
  const compiler::Instruction& s = dag.instructions[0];
  const compiler::Instruction& r = dag.instructions[1];
  CHECK(s.type == StepType::Send);
  CHECK(s.rank == 0);
  CHECK(s.srcbuf == BufferKind::Input);
  CHECK(s.srcoff == 1);
  CHECK(s.send_peer == 1);
  CHECK(s.send_to == 1);
  CHECK(s.sendtb == 3);
  CHECK(r.type == StepType::Recv);
  CHECK(r.rank == 1);
  CHECK(r.dstbuf == BufferKind::Output);
  CHECK(r.dstoff == 2);
  CHECK(r.recv_peer == 0);
  CHECK(r.recv_from == 0);
  CHECK(r.recvtb == 4);
  CHECK(r.channel == 1);
  CHECK(dag.describe(1).rfind("copy at lower_test.cpp:", 0) == 0);
}

TEST_CASE("lower: a cross-rank reduce between different indices reduces the local operand",
          "[compiler][lower]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 4));
  // Rank 1's chunk 2 ⊕= rank 0's chunk 0.
  p.chunk(1, dsl::input, 2).reduce(p.chunk(0, dsl::input, 0));
  const compiler::InstructionDag dag = compiler::lower(p, {});
  REQUIRE(dag.size() == 2);
  CHECK(dag.instructions[0].srcoff == 0);
  const compiler::Instruction& rrc = dag.instructions[1];
  CHECK(rrc.type == StepType::RecvReduceCopy);
  // src is the receiver's own chunk 2, not the sender's offset 0.
  CHECK(rrc.srcbuf == BufferKind::Input);
  CHECK(rrc.srcoff == 2);
  CHECK(rrc.dstoff == 2);
}

TEST_CASE("lower: local operations become cpy and re", "[compiler][lower]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 4, false));
  p.chunk(0, dsl::input, 0, 2).copy(0, dsl::output, 2, {.sendtb = 5});
  p.chunk(0, dsl::output, 2).reduce(p.chunk(0, dsl::input, 3), {.recvtb = 6});
  const compiler::InstructionDag dag = compiler::lower(p, {});
  REQUIRE(dag.size() == 2);
  CHECK(dag.instructions[0].type == StepType::Copy);
  CHECK(dag.instructions[0].count == 2);
  CHECK(dag.instructions[0].sendtb == 5);
  CHECK(dag.instructions[1].type == StepType::Reduce);
  CHECK(dag.instructions[1].srcoff == 3);
  CHECK(dag.instructions[1].dstoff == 2);
  CHECK(dag.instructions[1].sendtb == 6);  // a local step takes whichever hint is given
  // re reads its destination, which the cpy wrote.
  CHECK(dag.dependencies(1).size() == 1);
}

TEST_CASE("lower: dependencies follow reads and writes of each slot", "[compiler][lower]") {
  dsl::Program p("t", dsl::Collective::allreduce(3, 1, false));
  p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0);   // 0: s   1: r writes 1.o0
  p.chunk(1, dsl::output, 0).copy(2, dsl::output, 0);  // 2: s reads 1.o0   3: r
  p.chunk(2, dsl::input, 0).copy(1, dsl::output, 0);   // 4: s   5: r writes 1.o0 again
  const compiler::InstructionDag dag = compiler::lower(p, {});
  REQUIRE(dag.size() == 6);
  auto deps = [&](int i) {
    const auto d = dag.dependencies(i);
    return std::vector<int>(d.begin(), d.end());
  };
  CHECK(deps(2) == std::vector<int>{1});     // read after write
  CHECK(deps(5) == std::vector<int>{1, 2});  // write after write, write after read
  CHECK(deps(0).empty());
  CHECK(deps(3).empty());  // ranks order each other only through messages
}

TEST_CASE("lower: operations larger than the count limit are cut", "[compiler][lower]") {
  dsl::Program p("t", dsl::Collective::allgather(2, 100, false));
  p.chunk(0, dsl::input, 0, 100).copy(1, dsl::output, 0);
  const compiler::InstructionDag dag = compiler::lower(p, {.max_count = 72});
  REQUIRE(dag.size() == 4);
  CHECK(dag.instructions[0].count == 71);
  CHECK(dag.instructions[1].count == 71);
  CHECK(dag.instructions[2].count == 29);
  CHECK(dag.instructions[2].srcoff == 71);
  CHECK(dag.instructions[3].dstoff == 71);
  CHECK(dag.instructions[3].recv_from == 2);
}

TEST_CASE("lower: named scratch buffers are laid out one after another", "[compiler][lower]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 2));
  p.chunk(0, dsl::input, 0, 2).copy(1, "first", 0);
  p.chunk(0, dsl::input, 0).copy(1, "second", 1);
  const compiler::InstructionDag dag = compiler::lower(p, {});
  CHECK(dag.scratch_chunks == std::vector<int>{0, 4});
  CHECK(dag.instructions[1].dstbuf == BufferKind::Scratch);
  CHECK(dag.instructions[1].dstoff == 0);
  CHECK(dag.instructions[3].dstoff == 3);  // "second" starts after "first"'s 2 chunks
}
