// Helpers of the host-mode tests: a communicator on make_host_transport, so that loading, call
// planning, FIFO sizing, step splitting, the residency check, the kernel and error reporting all
// run as on the GPU path, with the kernel's source on CPU threads.
#pragma once

#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "builtin_algorithms.h"
#include "emulation.h"
#include "weft/communicator/transport.h"

namespace weft::gpu::testing {

// Chunks of 37 elements in tiles of at most 32 bytes: every type runs several tiles with a
// partial last one, and chunks that start off a 16-byte boundary take the kernel's scalar paths
// (only the first words of an LL128 line carry data at this size: see kLongChunk).
inline constexpr std::size_t kChunk = 37;

inline RuntimeOptions host_options() {
  RuntimeOptions o = test_options();
  o.timeout_s = 60;  // generous: hundreds of threads share two cores
  o.max_tile_bytes = 32;
  return o;
}

// Chunks of 601 elements in tiles of at most 1 KB: a few tiles with a partial last one (one
// tile for 1-byte types), and messages of up to 1 KB, which fill LL128 lines (120 bytes of
// payload each) lane by lane, take a warp several rounds of 4 lines, and give each thread of an
// LL step several lines.
inline constexpr std::size_t kLongChunk = 601;

inline RuntimeOptions line_options() {
  RuntimeOptions o = host_options();
  o.max_tile_bytes = 1024;
  return o;
}

inline std::unique_ptr<Emulation> emulate_on_host(const ir::Algorithm& algorithm,
                                                  const RuntimeOptions& options = host_options()) {
  return emulate_over(make_host_transport(algorithm.ngpus), perf::make_host_perf_device(),
                      algorithm, options);
}

// Every (type, operator) pair of the types the host-mode matrix covers that the runtime
// supports (avg for floating types only), for tests that rotate through them.
inline std::vector<std::pair<DataType, ReduceOp>> type_op_pairs(std::span<const DataType> types) {
  std::vector<std::pair<DataType, ReduceOp>> pairs;
  for (const ReduceOp op :
       {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg}) {
    for (const DataType dtype : types) {
      if (op == ReduceOp::Avg && !is_floating(dtype)) continue;
      pairs.emplace_back(dtype, op);
    }
  }
  return pairs;
}

inline constexpr DataType kMatrixTypes[] = {DataType::Float, DataType::Half,  DataType::Bfloat16,
                                            DataType::Int8,  DataType::Int64, DataType::Double};
inline constexpr ir::Protocol kProtocols[] = {ir::Protocol::Simple, ir::Protocol::LL,
                                              ir::Protocol::LL128};

// Printed once per test case, so that the log says how much each one checked.
inline void report_calls(const char* what, int calls) {
  std::printf("kernel-host: %s: %d calls checked against the CPU reference\n", what, calls);
}

}  // namespace weft::gpu::testing
