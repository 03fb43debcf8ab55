// Synthesis as a library (docs/synthesis.md): for a collective on a topology, the bound; the
// node's rings; sketches in every shape that may win some size (rings for bandwidth, direct
// trees for latency, rails across nodes, relayed alltoall), each compiled; then the tuning loop
// (weft/tuning/tune.h) predicts them beside NCCL's own algorithms and any other candidates, and
// chooses a winner per size band; every synthesized winner is proved as `weftc compile` proves
// (one that does not prove is left out and the bands chosen again). `weftc synthesize` is its
// command-line face.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/synthesis/bound.h"
#include "weft/synthesis/sketches.h"
#include "weft/tuning/contest.h"
#include "weft/tuning/tune.h"

namespace weft::synthesis {

struct SynthesisRequest {
  ir::Collective collective = ir::Collective::AllGather;
  // Ascending, as nccl-tests counts them. Each is taken down to a multiple of ranks × 1 KB, which
  // every sketch divides (unchanged for powers of two on a power of two of ranks).
  std::vector<std::uint64_t> sizes;
  bool in_place = false;
  std::string profile = "weft";  // the limits profile every written file fits ("msccl", "weft")
  bool with_nccl = true;         // NCCL's own algorithms contend (and win where they are best)
  // The bound where the caller has it already (weftc prints it before the long work); else
  // synthesize computes it.
  std::optional<Bound> bound;
  // Prove every sketch, chosen or not (`weftc synthesize --all` writes them all); else only
  // the sketches that win a band, which are the ones written.
  bool prove_all = false;
  // The optimality gap, a fraction (tuning::TuneRequest::gap): at a size, sketches whose bound
  // is within it of a sketch predicted there are not predicted; the chosen sketch is then at
  // most that much slower than the best of them.
  double gap = 0.01;
  // The most threadblocks a written file may run on its busiest rank (0: no budget). A sketch
  // over it is predicted, for what it would gain, but not chosen, proved or written; the same
  // routes on fewer threadblocks contend beside it (docs/synthesis.md, "A threadblock budget").
  int max_threadblocks = 0;
};

// Why a sketch is left out where compiling or proving it ran out of memory (past the process's
// limit: weftc's --max-memory), after its name in Synthesis::rejected: not that it is wrong.
inline constexpr std::string_view kLeftOutForMemory =
    "left out: it needs more memory than weftc may take (--max-memory)";

struct Synthesis {
  Bound bound;
  NodePlan plan;  // node 0's rings and paths
  // Synthesized (compiled; proved where they win a band, or all with prove_all), then the
  // others' (proved by the contest where they win).
  std::vector<tuning::Candidate> candidates;
  std::size_t synthesized = 0;  // the first this many of them are synthesized
  // The others' (library, files) end here; after them come NCCL's algorithms written as Weft's
  // (nccl_algorithms.h), which contend but are reported in their own column.
  std::size_t others_end = 0;
  std::size_t proved = 0;             // of those, proved: every band winner among them
  std::vector<std::string> rejected;  // sketches that did not compile or prove, with why
  // (the others' are in tuning.info.rejected, after these)
  tuning::Tuning tuning;
  double bound_seconds = 0;
  double compile_seconds = 0;  // sketches → programs → compiled
  double predict_seconds = 0;  // the tuning loop
  double prove_seconds = 0;    // the winners' proofs (every sketch's, with prove_all)
};

// The sketches as the contest's source (weft/tuning/contest.h): the bound, the node's plan, and
// every sketch compiled, each with its proof (its program traced again), its twin, and the
// bound for its protocol as the floor that prunes it. Throws std::invalid_argument where there
// is nothing to synthesize (bandwidth_bound's reasons, an unknown profile).
struct Sketches {
  Bound bound;
  NodePlan plan;
  tuning::Field field;
  double bound_seconds = 0;
};
Sketches sketches(const predict::Topology& topology, const SynthesisRequest& request);

// The contest of the sketches, first, with the `others` fields (the library's candidates, the
// user's files) after them. Throws as sketches does, and for no sizes.
Synthesis synthesize(const predict::Topology& topology, const SynthesisRequest& request,
                     std::vector<tuning::Field> others = {});

// Only the synthesized candidates, compiled and each proved, for tests and other tunings; what
// did not compile or prove is added to `rejected`. Throws as sketches does.
std::vector<tuning::Candidate> synthesized_candidates(const predict::Topology& topology,
                                                      const SynthesisRequest& request,
                                                      std::vector<std::string>& rejected);

// Per size: the bound, the chosen algorithm's predicted time and its % of the bound, the best
// synthesized, NCCL's model and the best of the others. Markdown, for report.md.
std::string bound_report(const Synthesis& synthesis);
// The same, shorter, for a terminal.
std::string bound_table(const Synthesis& synthesis);

}  // namespace weft::synthesis
