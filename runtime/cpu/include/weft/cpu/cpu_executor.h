// The CPU reference executor (docs/architecture.md §3): runs every rank of an IR in one process on
// host memory, one threadblock step at a time, with bounded FIFOs per connection and tiles of T
// elements. It is the oracle the compiler, the GPU runtime and the shim check against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/ir/collective_spec.h"
#include "weft/ir/ir.h"
#include "weft/ir/types.h"

namespace weft::cpu {

struct RunOptions {
  std::size_t chunk_elements = 37;  // S; the call's count follows from it
  std::size_t tile_elements = 8;    // T; S need not be a multiple
  int fifo_depth = 2;               // D, messages per connection; 0 = unbounded
  // Picks among runnable threadblocks, by random priorities that let some threadblocks run far
  // ahead of others (what exposes missing dependencies); the draw also depends on S, T and D.
  std::uint64_t seed = 1;
  DataType dtype = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;               // broadcast/reduce
  bool in_place = false;      // run as an in-place call (buffers aliased as NCCL does)
  bool record_trace = false;  // fill RunResult::trace with every step execution, in order
  // Check for data races by happens-before (program order, dependencies, messages, FIFO
  // back-pressure). That relation does not depend on the interleaving, so one run proves race
  // freedom for its S, T, D and call mode; the others may turn it off to save time.
  bool check_races = true;
  // Whether the run completes, and nothing else: no data moved, nothing checked (and no race
  // check). A verify sweep runs a smaller FIFO depth so where a deeper run of the same S, T and
  // call mode was race-free and right: any run that completes at the smaller depth is one of the
  // deeper depth's interleavings, so its result is that one (VerifyOptions::derive_results).
  bool completion_only = false;
};

enum class Outcome { Pass, WrongResult, Deadlock, Error, Race };
// "pass", "wrong result", "deadlock", "error", "data race"
std::string_view to_string(Outcome outcome);

// One step execution of the schedule: threadblock `threadblock` of `rank` ran its step `step`
// (index in its step list, nops included) for tile `tile`.
struct ExecutedStep {
  int rank = 0;
  int threadblock = 0;
  int tile = 0;
  int step = 0;
  auto operator<=>(const ExecutedStep&) const = default;
};

struct BlockedThreadblock {
  int rank = 0;
  int threadblock = 0;
  int tile = 0;
  int step = 0;
  std::string step_type;
  std::string waiting_for;  // "receive from rank 2 on channel 0: FIFO empty", ...
  std::string str() const;  // "rank 0 tb 1 tile 0 step 3 (r): receive from rank 1 on ..."
};

struct Mismatch {
  int rank = 0;
  ir::BufferKind buffer = ir::BufferKind::Output;
  int chunk = 0;
  std::size_t element = 0;  // within the chunk
  std::string expected;
  std::string found;
  std::string str() const;  // "rank 3 output chunk 5 element 2: expected 1.5 found nan"
};

// One side of a data race: a threadblock's step execution that read or wrote the location.
struct RaceAccess {
  int threadblock = 0;
  int step = 0;  // index in its step list, nops included
  std::string step_type;
  bool writes = false;
};

// Two accesses to one location of a rank (the buffer that really holds it after in-place
// aliasing, chunk, tile), at least one a write, by different threadblocks, that no chain of
// program order, dependencies, messages and FIFO back-pressure orders.
struct Race {
  int rank = 0;
  ir::BufferKind buffer = ir::BufferKind::Output;
  int chunk = 0;
  int tile = 0;
  RaceAccess earlier;  // the one this run's schedule ran first
  RaceAccess later;
  // "rank 2 output chunk 5 tile 0: tb 1 step 3 (r) writes, tb 2 step 4 (s) reads, with no
  // dependency ordering them"
  std::string str() const;
};

struct RunResult {
  Outcome outcome = Outcome::Error;
  std::string message;                      // one-line reason for anything but Pass
  std::vector<BlockedThreadblock> blocked;  // Deadlock: every threadblock not finished
  std::vector<Mismatch> mismatches;         // WrongResult: the first few
  std::size_t mismatch_count = 0;
  // Race (also Deadlock, or Error when the race check itself cannot run): the first few distinct
  // pairs of racing steps, and how many racing access pairs were found in all.
  std::vector<Race> races;
  std::size_t race_count = 0;
  std::uint64_t steps_executed = 0;  // step × tile executions
  std::uint64_t messages = 0;
  // A hash of the order of step executions: equal seeds give equal fingerprints, and different
  // fingerprints mean different interleavings.
  std::uint64_t schedule_fingerprint = 0;
  std::vector<ExecutedStep> trace;  // only with RunOptions::record_trace
  std::string report() const;       // multi-line, for humans
};

// Per-rank buffers of one call, as bytes of `dtype`. In an in-place call the aliased buffer is
// absent (empty) and the executor uses the other as NCCL would.
struct RankBuffers {
  std::vector<std::byte> input;
  std::vector<std::byte> output;
};

namespace detail {
struct Plan;  // the algorithm flattened for execution, built once per Executor
struct RunCacheState;
}  // namespace detail

// What runs of one executor may share: the expected values the check computed for one call shape
// (type, operator, S; the inputs depend on nothing else), and the buffers of the latest run, which
// the next fills again instead of mapping fresh memory. A sweep over tile sizes, depths and seeds,
// like verify(), computes the expected values once instead of per run. It keeps the latest call
// shape only, and belongs to the executor it was first used with.
class RunCache {
 public:
  RunCache();
  ~RunCache();
  RunCache(RunCache&&) noexcept;
  RunCache& operator=(RunCache&&) noexcept;

 private:
  friend class Executor;
  std::unique_ptr<detail::RunCacheState> state_;
};

// Reductions (docs/architecture.md §3): sum, prod, min and max for every type, integers wrapping;
// min and max of floating types propagate NaN so that reading never-written memory shows. Avg
// follows NCCL's PreMulSum for floating types: every input element is multiplied by 1/ngpus
// (rounded to the type) before the run, and the algorithm's reductions are sums; so execute()
// leaves the input buffer premultiplied. Avg on integer types is refused (Outcome::Error).
class Executor {
 public:
  // `algo` must have passed validation, and outlive the executor unchanged. `spec` defines the
  // expected result. Anything validation should have caught ends every run in Outcome::Error.
  Executor(const ir::Algorithm& algo, CollectiveSpec spec);

  // Generates deterministic inputs, runs, checks the outputs against the spec. A data race makes
  // the outcome Race even when the result happens to be right; when it is also wrong,
  // mismatches say where.
  RunResult run(const RunOptions& options) const;
  // The same, reusing what `cache` holds from earlier runs of this executor.
  RunResult run(const RunOptions& options, RunCache& cache) const;

  // Runs on caller-provided buffers (sized for chunk_elements) without checking results: used to
  // compute reference outputs for other runtimes. Outcome is Pass unless it deadlocked, erred or
  // (with check_races) raced.
  RunResult execute(const RunOptions& options, std::vector<RankBuffers>& buffers) const;

  // The buffers `run` starts from: every rank's input holds deterministic pseudo-random values (a
  // hash of rank and element index; the seed only picks interleavings), the rest of each buffer a
  // poison pattern (NaN for floating types). In-place calls have only the surviving buffer.
  // Empty when the algorithm or the call cannot run (execute() then says why).
  std::vector<RankBuffers> make_inputs(const RunOptions& options) const;
  // Compares `results` of a run that started from `inputs` with the spec: integers exactly,
  // floating types within a bound that allows any reduction order. Output elements the spec
  // leaves unspecified are not checked. Returns true when they match; otherwise sets `into`'s
  // outcome (WrongResult, or Error when inputs and spec do not fit), message and mismatches.
  bool check(const RunOptions& options, const std::vector<RankBuffers>& inputs,
             const std::vector<RankBuffers>& results, RunResult& into) const;

  // Smallest FIFO depth (1..limit) at which the algorithm completes, or nothing if it deadlocks
  // even with unbounded FIFOs. Deadlock freedom is monotone in depth, so this is a search.
  std::optional<int> min_fifo_depth(const RunOptions& options) const;
  // The same, started from what earlier runs of these S, T and call mode showed: every depth
  // below `deadlocks_below` deadlocks and depth `completes_at` completes (0: none did). Only the
  // depths between are run.
  struct KnownDepths {
    int deadlocks_below = 1;
    int completes_at = 0;
  };
  std::optional<int> min_fifo_depth(const RunOptions& options, KnownDepths known) const;

  const ir::Algorithm& algorithm() const { return algo_; }
  const CollectiveSpec& spec() const { return spec_; }

 private:
  // make_inputs into `buffers`, reusing the memory they hold; false when the algorithm or the
  // call cannot run (execute() then says why).
  bool fill_inputs(const RunOptions& options, std::vector<RankBuffers>& buffers) const;
  // A run for completion only: it moves no data, so it needs no buffers.
  RunResult complete(const RunOptions& options) const;
  std::optional<int> search_min_fifo_depth(const RunOptions& options, KnownDepths known) const;
  // move_data false: completion only (the scheduler's move_data), buffers left untouched.
  RunResult execute(const RunOptions& options, std::vector<RankBuffers>& buffers,
                    bool move_data) const;
  // Runs on `buffers`, filled by fill_inputs, and checks the result.
  RunResult run_checked(const RunOptions& options, std::vector<RankBuffers>& buffers,
                        detail::RunCacheState* cache) const;
  // `inputs` null: the run started from make_inputs' values, which the check makes again.
  bool check(const RunOptions& options, const std::vector<RankBuffers>* inputs,
             const std::vector<RankBuffers>& results, RunResult& into,
             detail::RunCacheState* cache) const;

  const ir::Algorithm& algo_;
  CollectiveSpec spec_;
  std::shared_ptr<const detail::Plan> plan_;
};

}  // namespace weft::cpu
