// The schedule pass: the global order threadblocks take their steps from.
#include <catch2/catch.hpp>

#include <map>

#include "compiler_test_support.h"
#include "weft/compiler/fuse.h"
#include "weft/compiler/lower.h"
#include "weft/compiler/schedule.h"

using namespace weft;

namespace {

// Two ranks each sending `n` chunks to the other, all sends recorded first.
dsl::Program exchange(int n) {
  dsl::Program p("x", dsl::Collective::alltoall(2, n, false));
  for (int r = 0; r < 2; ++r) {
    p.chunk(r, dsl::input, r * n, n).copy(r, dsl::output, r * n);
    for (int k = 0; k < n; ++k)
      p.chunk(r, dsl::input, (1 - r) * n + k).copy(1 - r, dsl::output, r * n + k);
  }
  return p;
}

void check_order(const compiler::InstructionDag& dag, const compiler::Schedule& s, int depth) {
  REQUIRE(s.order.size() == dag.size());
  // Topological: dependencies and messages come first.
  for (std::size_t k = 0; k < dag.size(); ++k) {
    for (const int d : dag.dependencies(static_cast<int>(k))) {
      CHECK(s.position[static_cast<std::size_t>(d)] < s.position[k]);
    }
    if (dag.instructions[k].recv_from >= 0) {
      CHECK(s.position[static_cast<std::size_t>(dag.instructions[k].recv_from)] < s.position[k]);
    }
  }
  // Between two ranks, receives come in the order of the sends, with at most `depth` in flight.
  std::map<std::pair<int, int>, std::vector<int>> sent;
  std::map<std::pair<int, int>, std::size_t> received;
  for (const int k : s.order) {
    const compiler::Instruction& i = dag.instructions[static_cast<std::size_t>(k)];
    if (i.recv_from >= 0) {
      const auto pair = std::make_pair(i.recv_peer, i.rank);
      REQUIRE(received[pair] < sent[pair].size());
      CHECK(sent[pair][received[pair]++] == i.recv_from);
    }
    if (i.send_to >= 0) {
      const auto pair = std::make_pair(i.rank, i.send_peer);
      sent[pair].push_back(k);
      if (depth > 0) CHECK(sent[pair].size() - received[pair] <= static_cast<std::size_t>(depth));
    }
  }
}

}  // namespace

TEST_CASE("schedule: critical path first, within the FIFO depth", "[compiler][schedule]") {
  const dsl::Program p = exchange(5);
  const compiler::InstructionDag dag = compiler::lower(p, {});
  for (const int depth : {1, 2, 0}) {
    const auto s = compiler::schedule(dag, {compiler::ScheduleOrder::CriticalPath, depth});
    REQUIRE(s.has_value());
    check_order(dag, *s, depth);
  }
}

TEST_CASE("schedule: the ring's chains run in lockstep", "[compiler][schedule]") {
  const dsl::Program p = test::ring_allreduce(4);
  const compiler::InstructionDag dag = compiler::fuse(compiler::lower(p, {}));
  const auto s = compiler::schedule(dag, {});
  REQUIRE(s.has_value());
  check_order(dag, *s, 2);
  // Each chunk's chain has 2n - 1 steps; its head has the longest path.
  int longest = 0;
  for (const int q : s->priority) longest = std::max(longest, q);
  CHECK(longest == 7);
  CHECK(s->priority[static_cast<std::size_t>(s->order.front())] == 7);
}

TEST_CASE("schedule: program order keeps the recorded order where it can", "[compiler][schedule]") {
  const dsl::Program p = exchange(3);
  const compiler::InstructionDag dag = compiler::lower(p, {});
  const auto s = compiler::schedule(dag, {compiler::ScheduleOrder::ProgramOrder, 0});
  REQUIRE(s.has_value());
  for (std::size_t k = 0; k < s->order.size(); ++k) CHECK(s->order[k] == static_cast<int>(k));
}

TEST_CASE("schedule: receives that need another order than the sends are reported",
          "[compiler][schedule]") {
  // A collective that leaves every output unspecified: only the order matters here.
  dsl::CustomCollective anything;
  anything.name = "anything";
  anything.ranks = 3;
  anything.input_chunks = {2, 2, 2};
  anything.output_chunks = {2, 2, 2};
  anything.postcondition = [](int, int) { return std::vector<ChunkId>{}; };
  dsl::Program p("x", dsl::Collective::custom(anything));
  p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0);  // s1, r1
  p.chunk(0, dsl::input, 1).copy(1, dsl::output, 0);  // s2, r2: overwrites r1's slot
  // After s2, rank 0's input[1] starts a long chain, which puts s2 on the critical path ahead of
  // s1; but rank 1 must receive s1's message first.
  p.chunk(2, dsl::input, 0).copy(0, dsl::input, 1);
  for (int hop = 0; hop < 3; ++hop) {
    p.chunk(0, dsl::input, 1).copy(2, dsl::output, 1);
    p.chunk(2, dsl::output, 1).copy(0, dsl::input, 1);
  }
  const compiler::InstructionDag dag = compiler::lower(p, {});
  std::string why;
  CHECK_FALSE(compiler::schedule(dag, {compiler::ScheduleOrder::CriticalPath, 0}, &why));
  CHECK_THAT(why, Catch::Contains("from rank 0 to rank 1 cannot be received in the order"));
  const auto fallback = compiler::schedule(dag, {compiler::ScheduleOrder::ProgramOrder, 2});
  REQUIRE(fallback.has_value());
  check_order(dag, *fallback, 2);
  // The pipeline takes the fallback and says so.
  const compiler::CompileResult result = compiler::compile(p, test::quick());
  CHECK(result.ok());
  REQUIRE_FALSE(result.notes.empty());
  CHECK_THAT(result.notes[0], Catch::StartsWith("schedule (fused, critical path, FIFO depth 2)"));
}
