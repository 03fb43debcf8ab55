// Choosing the fastest contender per size (docs/architecture.md §7): Weft algorithms (XML files)
// and NCCL's own algorithms, each with a predicted time per size; the winners as contiguous,
// non-overlapping byte bands (MSCCL's minBytes/maxBytes, both inclusive, as the shim applies
// them), NCCL's bands as a WEFT_TUNER_CONFIG table, and the report that shows why.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "weft/ir/ir.h"

namespace weft::tuning {

inline constexpr double kNotApplicable = std::numeric_limits<double>::infinity();

struct Contender {
  std::string name;   // "allreduce_ring --channels 4 LL128", "NCCL ring LL"
  bool nccl = false;  // NCCL's own algorithm (a tuner rule), else a Weft algorithm (an XML)
  std::string nccl_algorithm;  // "ring", "tree" (NCCL's tuner names)
  ir::Protocol protocol = ir::Protocol::Simple;
  int channels = -1;  // NCCL: the channel count its model used; -1: NCCL's choice
  // A Weft algorithm's threadblocks on its busiest rank: the SMs it takes from the job's own
  // kernels while it runs (0 for NCCL's, whose channels NCCL chooses).
  int threadblocks = 0;
  // More threadblocks than the tuning's budget (TuneRequest::max_threadblocks): predicted, for
  // what it would gain, but never chosen.
  bool over_budget = false;
  std::vector<double> time_us;  // per size; kNotApplicable where it does not apply
};

// The threadblocks per rank a report shows for a contender: "-" for NCCL's own algorithms.
std::string threadblocks_text(const Contender& contender);

struct Band {
  int contender = -1;
  std::size_t first = 0;  // indices into the sizes
  std::size_t last = 0;
  std::uint64_t min_bytes = 0;  // inclusive; 0 for the first band
  std::uint64_t max_bytes = 0;  // inclusive; 0 for the last band (no upper bound)
  // The fastest contender of another family (family()) where the margin is smallest: the same
  // algorithm with another channel count or protocol says nothing of why this one won.
  int runner_up = -1;
  double margin = 0;  // min over the band of runner-up time / winner time (≥ 1)
};

// The algorithm a contender is a variant of: its name up to the first space, less trailing
// variant parts such as "_p8", "_l4" or "_c8" ("allreduce_ring LL i1 c4" -> "allreduce_ring",
// "synth_rings_l8_p8 Simple" -> "synth_rings"); NCCL's "NCCL ring LL" -> "NCCL ring".
std::string family(const Contender& contender);

// Sizes ascending. Each size goes to its fastest contender within the threadblock budget (ties to
// the earlier one; over-budget contenders neither win nor are runners-up); runs of
// one winner make a band; a band reaches up to the byte before the next band's first size, the
// first band down to 0 and the last one up without bound, so every call size falls in exactly one
// band. Sizes no contender applies to join the band below (or above, at the start).
std::vector<Band> choose_bands(const std::vector<std::uint64_t>& sizes,
                               const std::vector<Contender>& contenders);

// What more threadblocks would gain at one size: the fastest over-budget contender there, where it
// is predicted faster than the contender chosen there.
struct OverBudgetGain {
  int contender = -1;  // -1: none is faster
  double speedup = 1;  // the chosen contender's time over its time (> 1)
};
OverBudgetGain over_budget_gain(const std::vector<Contender>& contenders, std::size_t size,
                                int chosen);
// The most an over-budget contender gains over the band's winner at any of the band's sizes.
OverBudgetGain over_budget_gain(const std::vector<Contender>& contenders, const Band& band);
// The gain for a table: "1.04× at 64 tbs", or "-" where more threadblocks gain nothing.
std::string over_budget_text(const std::vector<Contender>& contenders, const OverBudgetGain& gain);

// NCCL tuner rules (plugin/include/weft/tuning/tuner_config.h's format) for the bands NCCL
// wins, one line each, with a header comment.
std::string tuner_csv(const std::vector<Band>& bands, const std::vector<Contender>& contenders,
                      ir::Collective collective, int nodes, int ranks);

struct ReportInfo {
  std::string title;     // "allreduce on 8 ranks of h100-nvswitch"
  std::string topology;  // its description, one line
  ir::Collective collective = ir::Collective::AllReduce;
  int ranks = 0;
  std::vector<std::string> files;     // per contender: the XML written, or "" (NCCL, losers)
  std::vector<std::string> rejected;  // candidates that did not compile or prove, with why
  std::vector<std::string> notes;     // assumptions of the topology, ...
  // Per size, the fastest of NCCL's own algorithms written as Weft algorithms, predicted on
  // Weft's model (weft/synthesis/nccl_algorithms.h; kNotApplicable where none applies; empty:
  // not predicted). The second "vs NCCL": the same model on both sides, where NCCL's contenders
  // are NCCL's model. They are for comparison only and contend for no band.
  std::vector<double> nccl_as_weft_us;
};

// Per size, NCCL's best by its model (its contenders' fastest) over the chosen contender's time,
// and the same for NCCL's algorithms on Weft's model (ReportInfo::nccl_as_weft_us): how much
// faster the chosen is predicted to be, by each comparison (kNotApplicable where there is none).
struct VsNccl {
  double model = kNotApplicable;
  double as_weft = kNotApplicable;
};
VsNccl vs_nccl(const std::vector<Contender>& contenders, const std::vector<Band>& bands,
               const ReportInfo& info, std::size_t size);

// report.md: the bands with winner, runner-up and margin, then every contender's predicted busbw
// per size.
std::string report_markdown(const std::vector<std::uint64_t>& sizes,
                            const std::vector<Contender>& contenders,
                            const std::vector<Band>& bands, const ReportInfo& info);
// report.svg: busbw against size (log scale) for every contender, the winners' bands shaded.
std::string report_svg(const std::vector<std::uint64_t>& sizes,
                       const std::vector<Contender>& contenders, const std::vector<Band>& bands,
                       const ReportInfo& info);

}  // namespace weft::tuning
