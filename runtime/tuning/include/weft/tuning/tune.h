// The tuning loop as a library (docs/architecture.md §7): candidates that were compiled and
// proved → predicted at every size on a topology, beside NCCL's own algorithms → the fastest per
// size as contiguous bands → a folder that the NCCL shim (WEFT_ALGO_DIR) and the tuner plugin
// (WEFT_TUNER_CONFIG) load, with its report. `weftc tune` is its command-line face; anything
// else that finds candidates (a synthesizer, a user's program) calls the same steps.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/tuning/bands.h"
#include "weft/tuning/contenders.h"

namespace weft::tuning {

struct TuneRequest {
  ir::Collective collective = ir::Collective::AllReduce;
  std::vector<std::uint64_t> sizes;  // ascending
  bool in_place = false;
  bool with_nccl = true;              // NCCL's own algorithms contend too
  std::vector<std::string> rejected;  // candidates left out, with why (for the report)
  // Hears each prediction before it runs (candidate k of n, 1-based, and the size): for a
  // progress line on long tunings.
  std::function<void(std::size_t k, std::size_t n, const std::string& name, std::uint64_t bytes)>
      on_predict;
  // A lower bound on what a candidate can take at a size (synthesis: the bound for its
  // protocol). The `prunable` candidates from `prunable_first` on are not predicted at a size
  // where it, or the
  // simulator's own floor for the candidate (Simulator::floor_us), is no less than the best of
  // them predicted there before: they could not be chosen there, nor be the best of them. Their
  // time there is kNotApplicable, and a note counts them.
  std::function<double(const Candidate&, std::uint64_t bytes)> floor_us;
  std::size_t prunable = 0;  // they lie among the candidates (tune throws otherwise)
  // Where they begin: a contest keeps each source's candidates together in the order its
  // command lists the sources, and only one source brings a floor (weft/tuning/contest.h).
  std::size_t prunable_first = 0;
  // Predicts the prunable candidates from the last to the first (their contenders keep their
  // order). Pruning leaves out more where the candidates likeliest to win are predicted first:
  // synthesis lists its sketches from the fewest hops to the widest, and the widest win at the
  // large sizes, whose predictions cost the most.
  bool prunable_backwards = false;
  // A solver's optimality gap, as a fraction: the prunable candidates are also left out at a
  // size where their floor is within it of the best predicted there (no less than that best over
  // 1 + gap), since they could be at most that much faster. 0: only where they cannot be faster.
  // Synthesis stops there once a sketch is predicted near the bound: on 1,024 H100 GPUs the
  // alltoall sketch that reaches 99.4 % of the bound first left the direct sketch, whose 1M
  // flows of distinct routes were most of the command's 16 minutes, nothing to win.
  double gap = 0;
  // Per prunable candidate, the index of its twin (-1, or past the end: none): the same schedule
  // on a protocol with more payload per byte (Pruning::twin_us). Past the first size where a
  // candidate is predicted slower than its twin, it is not predicted; the twin must be predicted
  // before it (backwards: the twin after it in the list). Synthesis gives its LL sketches their
  // LL128 twins, and those their Simple ones. tune throws std::invalid_argument for an index out
  // of range or a candidate's own.
  std::vector<int> twins;
  // The most threadblocks a chosen Weft algorithm may run on its busiest rank (0: no budget):
  // each takes an SM from the job's kernels while the call runs. A candidate over it is still
  // predicted, for what it would gain (Contender::over_budget, over_budget_gain), but chosen for
  // no band. The candidates within it are predicted first, and only they prune one another; an
  // over-budget one is pruned against them and the others over it, so that it never leaves out
  // one that may be chosen.
  int max_threadblocks = 0;
};

struct Tuning {
  std::vector<Contender> contenders;  // the candidates in their order, then NCCL's
  std::vector<std::uint64_t> sizes;
  std::vector<Band> bands;
  ReportInfo info;
};

// Predicts every candidate and chooses the bands. Empty `contenders` when there was nothing to
// choose from (no candidate and no NCCL). Throws std::invalid_argument when the prunable
// candidates run past the last.
Tuning tune(const std::vector<Candidate>& candidates, const predict::Topology& topology,
            const TuneRequest& request);

// Makes `dir` ready to receive a tuning: creates it, or, with `force`, removes what an earlier
// tuning wrote there (XML files, tuner.csv, bands.csv, report.md, report.svg; other files stay,
// the shim reads only *.xml). Returns the problem, naming the folder, or nothing.
std::optional<std::string> prepare_folder(const std::string& dir, bool force);

// Writes the winners' XML files (each carrying its band in minBytes/maxBytes), tuner.csv,
// bands.csv, report.md and report.svg into `dir`, and records the files in tuning.info. Returns
// the problem, naming the file, or nothing.
std::optional<std::string> write_folder(const std::string& dir, Tuning& tuning,
                                        const std::vector<Candidate>& candidates,
                                        const predict::Topology& topology);

// The bands as a table for a terminal: bounds, winner, how much faster than NCCL by its model and
// by its algorithms on Weft's model ("vs NCCL/W", vs_nccl), margin over the runner-up.
std::string bands_table(const Tuning& tuning);

}  // namespace weft::tuning
