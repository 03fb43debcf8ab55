// The CPU reference executor (DESIGN.md §3): runs every rank of an IR in one process on host
// memory, one threadblock step at a time, with bounded FIFOs per connection and tiles of T
// elements. It is the oracle the compiler, the GPU runtime and the shim check against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/runtime/collective_spec.h"
#include "weft/runtime/ir.h"
#include "weft/runtime/types.h"

namespace weft::cpu {

struct RunOptions {
  std::size_t chunk_elements = 37;  // S; the call's count follows from it
  std::size_t tile_elements = 8;    // T; S need not be a multiple
  int fifo_depth = 2;               // D, messages per connection; 0 = unbounded
  std::uint64_t seed = 1;           // picks among runnable threadblocks
  DataType dtype = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;           // broadcast/reduce
  bool in_place = false;  // run as an in-place call (buffers aliased as NCCL does)
};

enum class Outcome { Pass, WrongResult, Deadlock, Error };

struct BlockedThreadblock {
  int rank = 0;
  int threadblock = 0;
  int tile = 0;
  int step = 0;
  std::string step_type;
  std::string waiting_for;  // "receive from rank 2 on channel 0: FIFO empty", ...
};

struct Mismatch {
  int rank = 0;
  ir::BufferKind buffer = ir::BufferKind::Output;
  int chunk = 0;
  std::size_t element = 0;  // within the chunk
  std::string expected;
  std::string found;
};

struct RunResult {
  Outcome outcome = Outcome::Error;
  std::string message;                      // one-line reason for anything but Pass
  std::vector<BlockedThreadblock> blocked;  // Deadlock: every threadblock not finished
  std::vector<Mismatch> mismatches;         // WrongResult: the first few
  std::size_t mismatch_count = 0;
  std::uint64_t steps_executed = 0;  // step × tile executions
  std::uint64_t messages = 0;
  std::string report() const;  // multi-line, for humans
};

// Per-rank buffers of one call, as bytes of `dtype`. In an in-place call the aliased buffer is
// absent (empty) and the executor uses the other as NCCL would.
struct RankBuffers {
  std::vector<std::byte> input;
  std::vector<std::byte> output;
};

class Executor {
 public:
  // `algo` must have passed validation. `spec` defines the expected result.
  Executor(const ir::Algorithm& algo, CollectiveSpec spec);

  // Generates deterministic inputs, runs, checks the outputs against the spec.
  RunResult run(const RunOptions& options) const;

  // Runs on caller-provided buffers (sized for chunk_elements) without checking: used to compute
  // reference outputs for other runtimes. Outcome is Pass unless it deadlocked or erred.
  RunResult execute(const RunOptions& options, std::vector<RankBuffers>& buffers) const;

  // The deterministic input `run` uses for rank `rank`, and the expected outputs for those inputs
  // (elements the spec leaves unspecified keep the value of `outputs` passed in).
  std::vector<RankBuffers> make_inputs(const RunOptions& options) const;
  bool check(const RunOptions& options, const std::vector<RankBuffers>& inputs,
             const std::vector<RankBuffers>& results, RunResult& into) const;

  // Smallest FIFO depth (1..limit) at which the algorithm completes, or nothing if it deadlocks
  // even with unbounded FIFOs. Deadlock freedom is monotone in depth, so this is a search.
  std::optional<int> min_fifo_depth(const RunOptions& options) const;

  const ir::Algorithm& algorithm() const { return algo_; }
  const CollectiveSpec& spec() const { return spec_; }

 private:
  const ir::Algorithm& algo_;
  CollectiveSpec spec_;
};

}  // namespace weft::cpu
