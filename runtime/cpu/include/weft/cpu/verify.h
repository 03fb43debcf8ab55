// Verification sweep: runs the CPU reference executor over several tile sizes, FIFO depths,
// seeds and call modes, as `weftc verify` and the compiler's final pass do. Data races are
// checked in the first seed's run of each tile size, depth and mode: happens-before does not
// depend on the interleaving, so that run decides for the other seeds too. Cases are run deepest
// FIFO first (see derive_race_freedom) and reported in the order of the options.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "weft/cpu/cpu_executor.h"

namespace weft::cpu {

struct VerifyOptions {
  std::vector<std::size_t> chunk_elements{37};    // S values
  std::vector<std::size_t> tile_elements{8, 64};  // T values (T ≥ S gives a single tile)
  std::vector<int> fifo_depths{2, 8};
  int seeds = 3;
  DataType dtype = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  // Which call modes to run; by default those the algorithm declares (inplace/outofplace).
  std::optional<bool> in_place;
  // Run a case's seeds after the first only when the first seed's run did not pass. That run
  // checks races; passing it proves the case race-free, and a race-free run's result and
  // completion are the same under every interleaving (race_detector.h), so the other seeds could
  // only repeat it. Off by default (`weftc verify` runs every seed); `weftc compile` sets it.
  bool skip_proven_seeds = false;
  // Check races only where no deeper FIFO (or unbounded) run of the same call mode has shown
  // race freedom already: a smaller depth only adds order (the send of message k+D waits for the
  // receive of message k), so it cannot add a race; and race freedom is the same at every S and
  // T (race_detector.h), so of each call mode only the S and T of fewest tiles check races, at
  // the weakest depth, and the others inherit it. Off by default; `weftc compile` sets it.
  bool derive_race_freedom = false;
  // Where a deeper FIFO (or unbounded) run of the same S, T and call mode was race-free and
  // right, run the smaller depths for completion only (RunOptions::completion_only): a run that
  // completes there is one of the deeper depth's interleavings, and race freedom makes every one
  // of those give the same, right, result. Needs derive_race_freedom. Off by default; `weftc
  // compile` sets it.
  bool derive_results = false;
  // Threads that run the cases of different call modes, S and T side by side (0: one per
  // hardware thread): runs that check races and move data one at a time, completion-only runs
  // and the least-depth search beside them. Each thread keeps its own inputs, expected values
  // and result buffers. The report is the same, in the same order, for any count.
  int threads = 1;
};

struct CaseResult {
  RunOptions options;
  RunResult result;
};

struct VerifyReport {
  std::vector<CaseResult> cases;
  std::optional<int> min_fifo_depth;  // nothing: deadlocks at every depth
  bool passed() const;
  std::size_t failures() const;
};

VerifyReport verify(const Executor& executor, const VerifyOptions& options);

}  // namespace weft::cpu
