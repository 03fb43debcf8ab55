// The interpreter against the CPU reference executor: every built-in algorithm at 2, 4 and 8
// emulated ranks, every protocol, sizes from one element per chunk to 64 MB, in place and out of
// place, float and int32; then every data type and operator on a smaller set.
#include "gpu_test_support.h"

namespace weft::gpu::testing {
namespace {

using perf::allpairs_allreduce;
using perf::allpairs_chain_allreduce;
using perf::ring_allgather;
using perf::ring_allreduce;

constexpr ir::Protocol kProtocols[] = {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128};

void sweep(const ir::Algorithm& algo) {
  auto small = emulate(algo, small_tiles());
  auto large = emulate(algo, test_options());  // the protocol's own tile size
  for (DataType dtype : {DataType::Float, DataType::Int32}) {
    for (bool in_place : {false, true}) {
      if ((in_place && !algo.inplace) || (!in_place && !algo.outofplace)) continue;
      for (std::size_t chunk : {std::size_t{1}, std::size_t{37}, std::size_t{1000}}) {
        CHECK(run_checked(*small, {chunk, dtype, ReduceOp::Sum, in_place}) == 0);
      }
      // Many full tiles of the protocol's size, and a ragged last one.
      CHECK(run_checked(*large, {(std::size_t{1} << 18) + 3, dtype, ReduceOp::Sum, in_place}) == 0);
      // 64 MB in all, at 8 ranks (the CPU reference takes seconds per call at this size).
      if (algo.ngpus == 8) {
        const std::size_t total = (std::size_t{64} << 20) / size_of(dtype);
        CHECK(run_checked(*large, {total / static_cast<std::size_t>(algo.nchunksperloop), dtype,
                                   ReduceOp::Sum, in_place}) == 0);
      }
    }
  }
}

TEST_CASE("ring allreduce matches the CPU reference", "[gpu][correctness]") {
  for (int n : {2, 4, 8}) {
    for (ir::Protocol proto : kProtocols) sweep(ring_allreduce(n, proto, n == 4 ? 2 : 1));
  }
}

TEST_CASE("all-pairs allreduce (merged n-ary re, nops) matches the CPU reference",
          "[gpu][correctness]") {
  for (int n : {2, 4, 8}) {
    for (ir::Protocol proto : kProtocols) sweep(allpairs_allreduce(n, proto));
  }
}

TEST_CASE("all-pairs chain allreduce (dependency chains) matches the CPU reference",
          "[gpu][correctness]") {
  for (int n : {2, 4, 8}) {
    for (ir::Protocol proto : kProtocols) sweep(allpairs_chain_allreduce(n, proto, n != 4));
  }
}

TEST_CASE("ring allgather matches the CPU reference", "[gpu][correctness]") {
  for (int n : {2, 4, 8}) {
    for (ir::Protocol proto : kProtocols) sweep(ring_allgather(n, proto));
  }
}

TEST_CASE("every data type and operator", "[gpu][correctness]") {
  for (ir::Protocol proto : kProtocols) {
    auto e = emulate(ring_allreduce(4, proto), small_tiles());
    for (DataType dtype : kAllDataTypes) {
      for (ReduceOp op : kAllReduceOps) {
        if (op == ReduceOp::Avg && !is_floating(dtype)) continue;
        for (std::size_t chunk : {std::size_t{5}, std::size_t{300}}) {
          CHECK(run_checked(*e, {chunk, dtype, op, false}) == 0);
          CHECK(run_checked(*e, {chunk, dtype, op, true}) == 0);
        }
      }
    }
  }
}

TEST_CASE("steps with more pieces than a slot holds go as several messages", "[gpu][correctness]") {
  // 1 KB slots: a cnt-72 step needs 72 pieces of at least 16 bytes, more than any protocol's
  // payload holds (Simple 1024, LL 512, LL128 960 bytes), so each step is split.
  RuntimeOptions options = small_tiles();
  options.max_tile_bytes = 16;  // LL128: one line per piece, 8 pieces per message
  options.ll.slot_bytes = 1024;
  options.simple.slot_bytes = 1024;
  options.ll128.slot_bytes = 1024;
  options.simple.fifo_depth = options.ll.fifo_depth = options.ll128.fifo_depth = 32;
  options.simple_slices = 1;  // the smallest slot cannot be cut into slices
  // Two ranks exchange all 72 chunks in one step each (MSCCL's limit is cnt < 72; Weft's is
  // higher).
  ir::Algorithm wide = perf::wide_exchange(72, ir::Protocol::LL);
  for (ir::Protocol proto : kProtocols) {
    wide.protocol = proto;
    auto w = emulate(wide, options);
    CHECK(run_checked(*w, {33, DataType::Float, ReduceOp::Sum, false}) == 0);
  }
}

}  // namespace
}  // namespace weft::gpu::testing
