#include <catch2/catch.hpp>

#include "ir_test_support.h"
#include "weft/ir/analysis.h"
#include "weft/ir/validate.h"

using namespace weft;
using namespace weft::ir;

namespace {

Algorithm load_data(const std::string& name) {
  LoadResult result = load_xml_file(testing::data_path(name), msccl_limits());
  INFO(result.diagnostics.str());
  REQUIRE(result.ok());
  return std::move(*result.algorithm);
}

}  // namespace

TEST_CASE("analysis: 4-rank ring allreduce", "[analysis]") {
  const Summary s = summarize(load_data("ring_allreduce_4r.xml"));
  CHECK(s.ranks == 4);
  CHECK(s.channels == 1);
  CHECK(s.threadblocks == 4);
  CHECK(s.steps == 28);
  CHECK(s.connections == 4);
  CHECK(s.max_threadblocks_per_rank == 1);
  CHECK(s.max_steps_per_threadblock == 7);
  // Step k of every rank waits for step k-1 of its left neighbour: 7 steps in a chain.
  CHECK(s.critical_path_steps == 7);
  REQUIRE(s.per_rank.size() == 4);
  for (const RankSummary& rank : s.per_rank) {
    CHECK(rank.threadblocks == 1);
    CHECK(rank.steps == 7);
    CHECK(rank.channels == 1);
    CHECK(rank.send_connections == 1);
    CHECK(rank.recv_connections == 1);
    // A ring allreduce sends 2(N-1)/N elements per element of count.
    CHECK(rank.sent_per_count == Approx(1.5));
    CHECK(rank.received_per_count == Approx(1.5));
  }
}

TEST_CASE("analysis: critical path follows messages and dependencies, not nops", "[analysis]") {
  // 0 sends -> 1 forwards -> 2 forwards -> 3 receives (hasdep) -> nop waits -> 3 copies.
  const Summary s = summarize(load_data("chain_broadcast_4r.xml"));
  CHECK(s.critical_path_steps == 5);
  CHECK(s.steps == 7);
  CHECK(s.connections == 3);
  CHECK(s.max_threadblocks_per_rank == 2);
  REQUIRE(s.per_rank.size() == 4);
  CHECK(s.per_rank[0].sent_per_count == Approx(1.0));
  CHECK(s.per_rank[0].received_per_count == Approx(0.0));
  CHECK(s.per_rank[0].send_connections == 1);
  CHECK(s.per_rank[0].recv_connections == 0);
  CHECK(s.per_rank[3].sent_per_count == Approx(0.0));
  CHECK(s.per_rank[3].received_per_count == Approx(1.0));
}

TEST_CASE("analysis: traffic is scaled by the collective's count multiplier", "[analysis]") {
  // Reducescatter of 3 ranks: count·3 elements cut into 3 chunks, each rank sends 2 chunks.
  const Summary s = summarize(load_data("ring_reducescatter_3r_tools.xml"));
  REQUIRE(s.per_rank.size() == 3);
  CHECK(s.per_rank[1].sent_per_count == Approx(2.0));
  CHECK(s.per_rank[1].received_per_count == Approx(2.0));
  CHECK(s.critical_path_steps == 3);
}

TEST_CASE("analysis: an algorithm whose messages form a cycle still gives numbers", "[analysis]") {
  // Both ranks receive before they send: a deadlock the step graph must not loop on.
  Algorithm algo;
  algo.ngpus = 2;
  algo.gpus.resize(2);
  for (int r = 0; r < 2; ++r) {
    Threadblock tb;
    tb.send = tb.recv = 1 - r;
    Step recv;
    recv.type = StepType::Recv;
    recv.count = 1;
    recv.dstbuf = BufferKind::Output;
    recv.dstoff = 0;
    Step send = recv;
    send.type = StepType::Send;
    tb.steps = {recv, send};
    algo.gpus[static_cast<std::size_t>(r)].id = r;
    algo.gpus[static_cast<std::size_t>(r)].threadblocks.push_back(tb);
  }
  const Summary s = summarize(algo);
  CHECK(s.steps == 4);
  CHECK(s.critical_path_steps == 0);
}

TEST_CASE("analysis: an invalid algorithm does not crash the summary", "[analysis]") {
  Algorithm algo;
  algo.ngpus = 2;
  algo.nchunksperloop = 0;
  algo.gpus.resize(1);
  Threadblock tb;
  tb.send = 5;  // out of range
  tb.recv = 0;  // itself
  tb.channel = -3;
  Step step;
  step.type = StepType::RecvCopySend;
  step.count = 1;
  step.depid = 9;  // no such threadblock
  step.deps = 2;
  tb.steps = {step, step};
  algo.gpus[0].threadblocks = {tb, tb};
  const Summary s = summarize(algo);
  CHECK(s.steps == 4);
  CHECK(s.connections == 0);
  CHECK(s.critical_path_steps == 2);           // program order only
  CHECK(s.per_rank[0].sent_per_count == 0.0);  // no chunk size without nchunksperloop
}
