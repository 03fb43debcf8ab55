#include "weft/cpu/verify.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace weft::cpu {

bool VerifyReport::passed() const {
  return !cases.empty() && failures() == 0;
}

std::size_t VerifyReport::failures() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(),
                    [](const CaseResult& c) { return c.result.outcome != Outcome::Pass; }));
}

namespace {

// Executor::min_fifo_depth, started from what the cases already showed for the probe's S, T and
// call mode: a depth at which one passed completes, one at which one deadlocked does not.
// Completion depends neither on the data nor on the interleaving, and is monotone in the depth
// (what the executor's own search assumes), so the smallest completing depth lies between the
// largest deadlocking one and the smallest passing one; only the depths between are run.
std::optional<int> min_fifo_depth(const Executor& executor, const RunOptions& probe,
                                  const std::vector<CaseResult>& cases) {
  Executor::KnownDepths known;
  for (const CaseResult& c : cases) {
    const RunOptions& o = c.options;
    if (o.in_place != probe.in_place || o.chunk_elements != probe.chunk_elements ||
        o.tile_elements != probe.tile_elements || o.fifo_depth <= 0) {
      continue;
    }
    if (c.result.outcome == Outcome::Pass &&
        (known.completes_at == 0 || o.fifo_depth < known.completes_at)) {
      known.completes_at = o.fifo_depth;
    }
    if (c.result.outcome == Outcome::Deadlock) {
      known.deadlocks_below = std::max(known.deadlocks_below, o.fifo_depth + 1);
    }
  }
  return executor.min_fifo_depth(probe, known);
}

}  // namespace

VerifyReport verify(const Executor& executor, const VerifyOptions& options) {
  std::vector<bool> modes;
  if (options.in_place) {
    modes.push_back(*options.in_place);
  } else {
    // The modes the algorithm declares; one that declares neither is checked out of place.
    if (executor.algorithm().outofplace) modes.push_back(false);
    if (executor.algorithm().inplace) modes.push_back(true);
    if (modes.empty()) modes.push_back(false);
  }
  VerifyReport report;
  RunOptions base;
  base.dtype = options.dtype;
  base.op = options.op;
  base.root = options.root;
  // Every case of a call mode and S starts from the same inputs (they depend on nothing else),
  // and checks against the same expected values: made once, for all.
  RunCache cache;
  // A group's depths, weakest order first: unbounded (0), then from the deepest down. A FIFO
  // depth D orders the send of message k+D after the receive of message k; a smaller depth
  // orders more (the send of k+D follows the send of k+D' < k+D on the same threadblock), so
  // what has no race at one depth has none at any smaller one (race_detector.h).
  std::vector<std::size_t> by_weakness(options.fifo_depths.size());
  for (std::size_t k = 0; k < by_weakness.size(); ++k) by_weakness[k] = k;
  std::stable_sort(by_weakness.begin(), by_weakness.end(), [&](std::size_t a, std::size_t b) {
    const int da = options.fifo_depths[a], db = options.fifo_depths[b];
    if ((da == 0) != (db == 0)) return da == 0;
    return da > db;
  });
  for (bool in_place : modes) {
    for (std::size_t chunk : options.chunk_elements) {
      for (std::size_t tile : options.tile_elements) {
        // Run in order of weakness, reported in the order of the options.
        std::vector<std::vector<CaseResult>> by_depth(options.fifo_depths.size());
        bool race_free_deeper = false;  // shown at a depth that orders no more than this one
        for (std::size_t k : by_weakness) {
          const int depth = options.fifo_depths[k];
          const bool inherit = options.derive_race_freedom && race_free_deeper;
          bool proven = false;  // this depth's first seed passed, race freedom shown or inherited
          for (int seed = 1; seed <= options.seeds; ++seed) {
            if (seed > 1 && options.skip_proven_seeds && proven) break;
            RunOptions run = base;
            run.in_place = in_place;
            run.chunk_elements = chunk;
            run.tile_elements = tile;
            run.fifo_depth = depth;
            run.seed = static_cast<std::uint64_t>(seed);
            // Happens-before does not depend on the interleaving (race_detector.h): the first
            // seed of each S, T, D and call mode decides race freedom for all of them.
            run.check_races = seed == 1 && !inherit;
            run.completion_only = inherit && options.derive_results;
            by_depth[k].push_back({run, executor.run(run, cache)});
            if (seed == 1) {
              proven = (run.check_races || inherit) &&
                       by_depth[k].back().result.outcome == Outcome::Pass;
            }
          }
          if (proven) race_free_deeper = true;
        }
        for (auto& cases : by_depth) {
          for (CaseResult& c : cases) report.cases.push_back(std::move(c));
        }
      }
    }
  }
  RunOptions probe = base;
  probe.in_place = modes.front();
  if (!options.chunk_elements.empty()) probe.chunk_elements = options.chunk_elements.front();
  if (!options.tile_elements.empty()) probe.tile_elements = options.tile_elements.front();
  report.min_fifo_depth = min_fifo_depth(executor, probe, report.cases);
  return report;
}

}  // namespace weft::cpu
