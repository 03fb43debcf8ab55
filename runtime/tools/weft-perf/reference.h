// The expected result of a call, from the CPU reference executor, and how a call's buffers sit
// in device memory (NCCL's in-place conventions). Shared by weft-perf (#wrong) and the GPU tests.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "weft/cpu/cpu_executor.h"
#include "weft/ir/ir.h"
#include "weft/ir/types.h"

namespace weft::perf {

// One rank's device buffers for a call. Out-of-place: a send buffer of `send_bytes` and a receive
// buffer of `recv_bytes`. In-place: one buffer of `recv_bytes` (the executor's surviving buffer)
// with the send and receive pointers at the given offsets inside it.
struct CallLayout {
  bool in_place = false;
  std::size_t send_bytes = 0;   // out-of-place only
  std::size_t recv_bytes = 0;   // the receive buffer, or the one buffer in place
  std::size_t send_offset = 0;  // in place: where sendbuf points inside the buffer
  std::size_t recv_offset = 0;  // in place: where recvbuf points inside the buffer
};
CallLayout call_layout(const ir::Algorithm& algo, int rank, std::size_t count,
                       std::size_t element_bytes, bool in_place);

struct Reference {
  std::vector<cpu::RankBuffers> initial;   // each rank's buffers before the call
  std::vector<cpu::RankBuffers> expected;  // after it
  std::string error;                       // set when the executor could not produce them
};

// Runs `executor` once on its deterministic inputs for chunks of `chunk_elements`.
Reference compute_reference(const cpu::Executor& executor, std::size_t chunk_elements,
                            DataType dtype, ReduceOp op, int root, bool in_place);

// The bytes of a rank's buffers the call's device buffer holds: the output (out-of-place), or
// the one surviving buffer (in place).
const std::vector<std::byte>& device_image(const cpu::RankBuffers& buffers, bool in_place);
// The bytes uploaded as the send buffer out of place.
const std::vector<std::byte>& send_image(const cpu::RankBuffers& buffers);

// Elements of `found` that differ from `expected`: integers exactly, floating types within a
// relative tolerance of the type (the runtime computes in the same order as the CPU, so results
// normally agree bit for bit); NaN matches NaN.
std::size_t count_wrong(DataType dtype, std::span<const std::byte> expected,
                        std::span<const std::byte> found);

}  // namespace weft::perf
