#include "weft/cpu/verify.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include "schedule.h"
#include "weft/cpu/run_tasks.h"

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

// What the cases of the probe's S, T and call mode showed: a depth at which one passed
// completes, one at which one deadlocked does not. Completion depends neither on the data nor on
// the interleaving, and is monotone in the depth (what the executor's own search assumes), so
// the smallest completing depth lies between the largest deadlocking one and the smallest
// passing one; Executor::min_fifo_depth runs only the depths between.
Executor::KnownDepths known_depths(const RunOptions& probe,
                                   const std::vector<std::vector<CaseResult>>& by_depth) {
  Executor::KnownDepths known;
  for (const std::vector<CaseResult>& cases : by_depth) {
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
  }
  return known;
}

// The cases of one call mode, S and T. Its depths are ordered from the weakest order down, so
// that a deeper depth's race freedom (and result) can be derived for the smaller ones.
struct Group {
  bool in_place = false;
  std::size_t chunk = 0;
  std::size_t tile = 0;
};

// A group's tiles per chunk; sizes the executor refuses count as the most.
std::size_t tiles(const Group& group) {
  if (group.chunk == 0 || group.tile == 0) return std::numeric_limits<std::size_t>::max();
  return detail::tile_count(group.chunk, group.tile);
}

// Whether a depth's cases show race freedom for the smaller depths (and, at the weakest depth of
// a checking group, for the call mode's other tile sizes): its first seed passed.
bool proven(const std::vector<CaseResult>& cases) {
  return !cases.empty() && cases.front().result.outcome == Outcome::Pass;
}

// One depth's seeds of one group. `check_races`: the first seed checks races (otherwise race
// freedom is inherited from a deeper depth, or from the call mode's fewest tiles);
// `completion_only`: a deeper depth of the group was race-free and right, so this one runs for
// completion only (derive_results).
std::vector<CaseResult> run_depth(const Executor& executor, const VerifyOptions& options,
                                  const RunOptions& base, const Group& group, int depth,
                                  bool check_races, bool completion_only, RunCache& cache) {
  std::vector<CaseResult> cases;
  for (int seed = 1; seed <= options.seeds; ++seed) {
    // The first seed passed, race freedom shown or inherited: the others would repeat it.
    if (seed > 1 && options.skip_proven_seeds && proven(cases)) break;
    RunOptions run = base;
    run.in_place = group.in_place;
    run.chunk_elements = group.chunk;
    run.tile_elements = group.tile;
    run.fifo_depth = depth;
    run.seed = static_cast<std::uint64_t>(seed);
    // Happens-before does not depend on the interleaving (race_detector.h): the first seed of
    // each S, T, D and call mode decides race freedom for all of them.
    run.check_races = seed == 1 && check_races;
    run.completion_only = completion_only;
    cases.push_back({run, executor.run(run, cache)});
  }
  return cases;
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
  std::vector<Group> groups;
  for (bool in_place : modes) {
    for (std::size_t chunk : options.chunk_elements) {
      for (std::size_t tile : options.tile_elements) groups.push_back({in_place, chunk, tile});
    }
  }
  const std::size_t depths = by_weakness.size();
  // Per group, the group of its call mode whose runs check races for it: the one of fewest tiles
  // (the cheapest to check). Race freedom holds alike at every S and T (race_detector.h), so a
  // depth shown race-free there is race-free in every group of the mode.
  std::vector<std::size_t> checker(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    checker[g] = g;
    if (!options.derive_race_freedom) continue;
    for (std::size_t h = 0; h < groups.size(); ++h) {
      if (groups[h].in_place != groups[g].in_place) continue;
      const std::size_t tiles_h = tiles(groups[h]);
      const std::size_t tiles_best = tiles(groups[checker[g]]);
      if (tiles_h < tiles_best || (tiles_h == tiles_best && h < checker[g])) checker[g] = h;
    }
  }
  // How a group's depth runs before anything is known: as though every run it could inherit
  // from passed. Only the weakest depth of a checking group checks races; a smaller depth runs
  // for completion only with derive_results.
  auto checks_races = [&](std::size_t g, std::size_t rank) {
    return !options.derive_race_freedom || (rank == 0 && checker[g] == g);
  };
  auto completion_only = [&](std::size_t rank) {
    return options.derive_race_freedom && options.derive_results && rank > 0;
  };
  // Per group, per depth in the order of the options: its cases.
  std::vector<std::vector<std::vector<CaseResult>>> results(
      groups.size(), std::vector<std::vector<CaseResult>>(depths));
  // The smallest FIFO depth that completes, searched at the first group's S, T and call mode.
  RunOptions probe = base;
  probe.in_place = modes.front();
  if (!options.chunk_elements.empty()) probe.chunk_elements = options.chunk_elements.front();
  if (!options.tile_elements.empty()) probe.tile_elements = options.tile_elements.front();

  // Every depth of every group, and the search, as tasks that run side by side. A run that
  // inherits race freedom or results runs as though the run it inherits from passes, as it does
  // in an algorithm that is right; the search starts from what the first group's cases would
  // then show. Where that did not hold, the depth, or the search, runs again below with what the
  // cases showed: the report is the one the runs in order give.
  Executor::KnownDepths assumed;
  for (const int d : options.fifo_depths) {
    if (d > 0 && (assumed.completes_at == 0 || d < assumed.completes_at)) assumed.completes_at = d;
  }
  if (groups.empty()) assumed = {};
  std::optional<int> searched;
  // The tasks: every group's depths, the weakest first, and the search after the first group's.
  // A run that moves data holds every rank's buffers, and one that checks races the detector's
  // state too, and the messages in flight (gigabytes at a thousand ranks); runs for completion
  // only hold little. So at most one heavy run at a time, beside light ones: the first group's
  // heavy run goes first, every later group's after its light ones, so that light runs fill the
  // time a heavy one takes.
  struct Task {
    std::size_t group = 0;
    std::size_t rank = 0;  // the depth's place in the order of weakness
    bool search = false;
    bool heavy = true;
  };
  std::vector<Task> tasks;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<Task> heavy;
    for (std::size_t rank = 0; rank < depths; ++rank) {
      const Task task{g, rank, false, !completion_only(rank)};
      (task.heavy && g > 0 ? heavy : tasks).push_back(task);
    }
    if (g == 0) tasks.push_back({0, 0, true, false});
    tasks.insert(tasks.end(), heavy.begin(), heavy.end());
  }
  if (groups.empty()) tasks.push_back({0, 0, true, false});
  std::mutex heavy_run;
  // The heavy runs' expected values and buffers, made once whichever thread runs them (a
  // thread's own would make them again: half a gigabyte and seconds at a thousand ranks); used
  // under heavy_run only.
  RunCache heavy_cache;
  // Each thread with its own cache for the light runs it takes.
  run_tasks<RunCache>(tasks.size(), options.threads, [&](std::size_t t, RunCache& light_cache) {
    const Task& task = tasks[t];
    std::unique_lock<std::mutex> one_heavy(heavy_run, std::defer_lock);
    if (task.heavy) one_heavy.lock();
    RunCache& cache = task.heavy ? heavy_cache : light_cache;
    if (task.search) {
      searched = executor.min_fifo_depth(probe, assumed);
      return;
    }
    const std::size_t k = by_weakness[task.rank];
    results[task.group][k] =
        run_depth(executor, options, base, groups[task.group], options.fifo_depths[k],
                  checks_races(task.group, task.rank), completion_only(task.rank), cache);
  });
  if (options.derive_race_freedom) {
    // What was assumed, checked in order: the checking groups first, since the others' weakest
    // depths inherit from theirs.
    std::vector<std::size_t> order;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (checker[g] == g) order.push_back(g);
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (checker[g] != g) order.push_back(g);
    }
    for (const std::size_t g : order) {
      bool race_free_deeper = false;  // shown at a depth that orders no more than this one
      for (std::size_t rank = 0; rank < depths; ++rank) {
        auto& cases_here = results[g][by_weakness[rank]];
        // The weakest depth inherits from its checking group's; a smaller one from a deeper
        // depth of its own group, race-free and right.
        const bool inherited = rank == 0
                                   ? checker[g] == g || proven(results[checker[g]][by_weakness[0]])
                                   : race_free_deeper;
        if (!inherited) {
          // Run as inheriting what was not shown: again, checking for itself.
          cases_here = run_depth(executor, options, base, groups[g],
                                 options.fifo_depths[by_weakness[rank]], true, false, heavy_cache);
        }
        if (proven(cases_here)) race_free_deeper = true;
      }
    }
  }
  if (groups.empty()) {
    report.min_fifo_depth = searched;
  } else {
    const Executor::KnownDepths known = known_depths(probe, results.front());
    report.min_fifo_depth = known.completes_at == assumed.completes_at &&
                                    known.deadlocks_below == assumed.deadlocks_below
                                ? searched
                                : executor.min_fifo_depth(probe, known);
  }
  // Reported in the order of the options, whichever thread ran them.
  for (auto& by_depth : results) {
    for (auto& depth_cases : by_depth) {
      for (CaseResult& c : depth_cases) report.cases.push_back(std::move(c));
    }
  }
  return report;
}

}  // namespace weft::cpu
