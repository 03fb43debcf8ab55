// The assign pass: channels and threadblocks, automatic and manual.
#include <catch2/catch.hpp>

#include "compiler_test_support.h"
#include "weft/compiler/assign.h"
#include "weft/compiler/error.h"
#include "weft/compiler/fuse.h"
#include "weft/compiler/lower.h"
#include "weft/compiler/schedule.h"

using namespace weft;

namespace {

compiler::Assignment assign_program(const dsl::Program& p, compiler::ChannelPlan plan = {}) {
  const compiler::InstructionDag dag = compiler::fuse(compiler::lower(p, {}));
  const auto s = compiler::schedule(dag, {});
  REQUIRE(s.has_value());
  return compiler::assign(dag, *s, p.options().threadblocks, plan);
}

std::string assign_error(const dsl::Program& p) {
  try {
    assign_program(p);
  } catch (const compiler::CompileError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("assign: a ring needs one threadblock per rank", "[compiler][assign]") {
  const compiler::Assignment a = assign_program(test::ring_allreduce(4));
  CHECK(a.channels == 1);
  for (int r = 0; r < 4; ++r) {
    const auto& tbs = a.threadblocks[static_cast<std::size_t>(r)];
    REQUIRE(tbs.size() == 1);
    CHECK(tbs[0].send == (r + 1) % 4);
    CHECK(tbs[0].recv == (r + 3) % 4);
  }
}

TEST_CASE("assign: sends and receives with the same peer share a threadblock",
          "[compiler][assign]") {
  dsl::Program p("a2a", dsl::Collective::alltoall(4, 1, false));
  for (int r = 0; r < 4; ++r) {
    p.chunk(r, dsl::input, r).copy(r, dsl::output, r);
    for (int q = 0; q < 4; ++q) {
      if (q != r) p.chunk(r, dsl::input, q).copy(q, dsl::output, r);
    }
  }
  const compiler::Assignment a = assign_program(p);
  for (const auto& tbs : a.threadblocks) {
    REQUIRE(tbs.size() == 3);
    for (const compiler::ThreadblockInfo& tb : tbs) CHECK(tb.send == tb.recv);
  }
}

TEST_CASE("assign: channel plans spread unhinted chains", "[compiler][assign]") {
  const dsl::Program p = test::ring_allreduce(6);
  const compiler::Assignment by_volume = assign_program(p, {3, true});
  CHECK(by_volume.channels == 3);
  for (const auto& tbs : by_volume.threadblocks) CHECK(tbs.size() == 3);
  // By peer only: every chain of a ring has the same peer distance, so one channel is used.
  const compiler::Assignment by_peer = assign_program(p, {3, false});
  for (const auto& tbs : by_peer.threadblocks) CHECK(tbs.size() == 1);
}

TEST_CASE("assign: channel hints are kept, unhinted traffic goes above them",
          "[compiler][assign]") {
  dsl::Program p("b", dsl::Collective::broadcast(3, 0, 2));
  p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.channel = 2});
  p.chunk(0, dsl::input, 1).copy(1, dsl::output, 1);
  p.chunk(0, dsl::input, 0, 2).copy(2, dsl::output, 0);
  const compiler::Assignment a = assign_program(p);
  CHECK(a.channels == 4);
  CHECK(a.threadblocks[1].size() == 2);
}

TEST_CASE("assign: manual threadblocks are honoured", "[compiler][assign]") {
  dsl::Options options;
  options.threadblocks = dsl::ThreadblockPolicy::Manual;
  dsl::Program p("m", dsl::Collective::broadcast(3, 0, 1), options);
  p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.sendtb = 1, .recvtb = 0});
  p.chunk(0, dsl::input, 0).copy(2, dsl::output, 0, {.sendtb = 0, .recvtb = 0});
  const compiler::Assignment a = assign_program(p);
  REQUIRE(a.threadblocks[0].size() == 2);
  CHECK(a.threadblocks[0][0].send == 2);
  CHECK(a.threadblocks[0][1].send == 1);
}

TEST_CASE("assign: under the manual policy, operations without hints get one more threadblock",
          "[compiler][assign]") {
  // As msccl-tools does: the hinted threadblocks keep their ids, the rest share the next one.
  dsl::Options options;
  options.threadblocks = dsl::ThreadblockPolicy::Manual;
  dsl::Program p("m", dsl::Collective::broadcast(3, 0, 1, false), options);
  p.chunk(0, dsl::input, 0).copy(0, dsl::output, 0);
  p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.sendtb = 0, .recvtb = 0});
  p.chunk(0, dsl::input, 0).copy(2, dsl::output, 0);
  const compiler::Assignment a = assign_program(p);
  REQUIRE(a.threadblocks[0].size() == 2);
  CHECK(a.threadblocks[0][0].send == 1);
  CHECK(a.threadblocks[0][1].send == 2);
  REQUIRE(a.threadblocks[2].size() == 1);
  CHECK(a.threadblocks[2][0].recv == 0);
}

TEST_CASE("assign: impossible manual assignments name the operation", "[compiler][assign]") {
  dsl::Options options;
  options.threadblocks = dsl::ThreadblockPolicy::Manual;
  SECTION("operations without hints share one more threadblock, which must be possible") {
    dsl::Program p("m", dsl::Collective::broadcast(3, 0, 1), options);
    p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.recvtb = 0});
    const int line = __LINE__ + 1;
    p.chunk(0, dsl::input, 0).copy(2, dsl::output, 0, {.recvtb = 0});
    CHECK(assign_error(p) == "copy at assign_test.cpp:" + std::to_string(line) +
                                 ": the threadblock of rank 0 for operations without threadblock "
                                 "hints already sends to rank 1; it cannot also send to rank 2 "
                                 "(a threadblock has one send peer)");
  }
  SECTION("two send peers on one threadblock") {
    dsl::Program p("m", dsl::Collective::broadcast(3, 0, 1), options);
    p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.sendtb = 0, .recvtb = 0});
    const int line = __LINE__ + 1;
    p.chunk(0, dsl::input, 0).copy(2, dsl::output, 0, {.sendtb = 0, .recvtb = 0});
    const std::string error = assign_error(p);
    CHECK_THAT(error, Catch::StartsWith("copy at assign_test.cpp:" + std::to_string(line)));
    CHECK_THAT(error, Catch::Contains("threadblock 0 of rank 0 already sends to rank 1"));
  }
  SECTION("one connection on two threadblocks") {
    dsl::Program p("m", dsl::Collective::broadcast(2, 0, 2), options);
    p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.sendtb = 0, .recvtb = 0});
    p.chunk(0, dsl::input, 1).copy(1, dsl::output, 1, {.sendtb = 1, .recvtb = 0});
    CHECK_THAT(assign_error(p), Catch::Contains("already made by threadblock 0 of rank 0; one "
                                                "threadblock per connection"));
  }
  SECTION("a local step without a hint and one with a threadblock of two send peers") {
    dsl::Program p("m", dsl::Collective::broadcast(3, 0, 1, false), options);
    p.chunk(0, dsl::input, 0).copy(0, dsl::output, 0);
    p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.sendtb = 0, .recvtb = 0});
    p.chunk(0, dsl::input, 0).copy(2, dsl::output, 0, {.sendtb = 0, .recvtb = 0});
    CHECK_THAT(assign_error(p), Catch::Contains("threadblock 0 of rank 0 already sends to rank 1"));
  }
  SECTION("a threadblock on two channels") {
    dsl::Program p("m", dsl::Collective::broadcast(3, 0, 1), options);
    p.chunk(0, dsl::input, 0).copy(1, dsl::output, 0, {.channel = 0, .sendtb = 0, .recvtb = 0});
    p.chunk(1, dsl::output, 0).copy(2, dsl::output, 0, {.channel = 1, .sendtb = 0, .recvtb = 0});
    CHECK_THAT(assign_error(p),
               Catch::Contains("works on channel 0, but this operation is on channel 1"));
  }
}

TEST_CASE("assign: msccl-tools' placement puts a local step on the least advanced threadblock",
          "[compiler][assign][placement]") {
  // Rank 0 receives a chunk straight from rank 1, and one that rank 2 relays from rank 1 (a
  // higher level), then copies the relayed chunk locally. Separate joins the copy to what it
  // depends on, the receive from rank 2; msccl-tools' automatic policy (auto_assign_tbs) gives
  // it to the threadblock of its channel whose latest step has the lowest level: the one that
  // received from rank 1.
  dsl::Program p("local", dsl::Collective::alltoall(3, 1, false));
  p.chunk(1, dsl::input, 0).copy(0, dsl::output, 1);
  p.chunk(1, dsl::input, 2).copy(2, "relay", 0).copy(0, dsl::output, 2);
  p.chunk(0, dsl::output, 2).copy(0, "held", 0);
  const compiler::InstructionDag dag = compiler::fuse(compiler::lower(p, {}));
  const auto s = compiler::schedule(dag, {});
  REQUIRE(s.has_value());
  auto local_copy_peer = [&](dsl::Placement placement) {
    const compiler::Assignment a =
        compiler::assign(dag, *s, dsl::ThreadblockPolicy::Auto, {}, placement);
    for (std::size_t k = 0; k < dag.size(); ++k) {
      const compiler::Instruction& i = dag.instructions[k];
      if (i.rank != 0 || i.send_to >= 0 || i.recv_from >= 0) continue;
      return a.threadblocks[0][static_cast<std::size_t>(a.threadblock[k])].recv;
    }
    return -2;  // no local step on rank 0
  };
  CHECK(local_copy_peer(dsl::Placement::Separate) == 2);
  CHECK(local_copy_peer(dsl::Placement::Msccl) == 1);
}
