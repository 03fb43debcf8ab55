#include "weft/runtime/verify.h"

#include <algorithm>

namespace weft::cpu {

bool VerifyReport::passed() const {
  return !cases.empty() && failures() == 0;
}

std::size_t VerifyReport::failures() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(),
                    [](const CaseResult& c) { return c.result.outcome != Outcome::Pass; }));
}

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
  for (bool in_place : modes) {
    for (std::size_t chunk : options.chunk_elements) {
      for (std::size_t tile : options.tile_elements) {
        for (int depth : options.fifo_depths) {
          for (int seed = 1; seed <= options.seeds; ++seed) {
            if (seed > 1 && options.skip_proven_seeds && report.cases.back().options.check_races &&
                report.cases.back().result.outcome == Outcome::Pass) {
              break;
            }
            RunOptions run = base;
            run.in_place = in_place;
            run.chunk_elements = chunk;
            run.tile_elements = tile;
            run.fifo_depth = depth;
            run.seed = static_cast<std::uint64_t>(seed);
            // Happens-before does not depend on the interleaving (race_detector.h): the first
            // seed of each S, T, D and call mode decides race freedom for all of them.
            run.check_races = seed == 1;
            report.cases.push_back({run, executor.run(run)});
          }
        }
      }
    }
  }
  RunOptions probe = base;
  probe.in_place = modes.front();
  if (!options.chunk_elements.empty()) probe.chunk_elements = options.chunk_elements.front();
  if (!options.tile_elements.empty()) probe.tile_elements = options.tile_elements.front();
  report.min_fifo_depth = executor.min_fifo_depth(probe);
  return report;
}

}  // namespace weft::cpu
