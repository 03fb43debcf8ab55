// Sketches fitted to a threadblock budget (docs/synthesis.md, "A threadblock budget"): every
// threadblock runs on an SM of its own, which the job's kernels lose while the call runs, so a
// sketch whose busiest rank needs more than the budget is not chosen. The families size their
// sketches for a GPU's links, not for SMs; a sketch over the budget is kept (its prediction says
// what more threadblocks would gain), and two kinds of sketch within it contend beside it: the
// families' own at fewer channels (fewer lanes, pieces on fewer channels: budget_channels), and
// the same routes on fewer channels (fit_variant).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/synthesis/families.h"
#include "weft/synthesis/sketch.h"

namespace weft::synthesis {

// The fewest threadblocks the sketch's busiest rank can run on, read off its hops without
// compiling it: a threadblock drives one send and one receive connection, and a rank has one per
// channel and peer it sends to (receives from). The compiler's threadblocks are at least these.
// With `folded` (≥ 1), of the sketch folded to that many channels (fold_channels).
int least_threadblocks(const Sketch& sketch, int folded = 0);

// The sketch with its hops on `channels` channels, channel c on c mod `channels`: the same routes,
// and pieces that had threadblocks of their own take turns on one where they share a peer.
// Allreduce's gather stays on channels after the scatter's.
Sketch fold_channels(const Sketch& sketch, int channels);

// A variant compiled: its algorithm, or why not.
struct CompiledVariant {
  std::optional<ir::Algorithm> algorithm;
  std::string why;
};
using CompileVariant = std::function<CompiledVariant(const Variant&)>;

// The variant's routes on the most channels whose fold (fold_channels) the compiler puts on at
// most `budget` threadblocks per rank, compiled; nothing where no fold fits. `threadblocks` is
// what the variant takes as offered; `hint`, where given, what a fold of the same sketch on
// another protocol found: the channels it fitted on (tried first), -1 where none fitted, 0 where
// none was tried; set to what this one finds. The fitted sketch is named
// after the original with "_t<budget>" added (a variant's parameter, as tuning::family reads
// names).
struct FittedVariant {
  Variant variant;
  ir::Algorithm algorithm;
};
std::optional<FittedVariant> fit_variant(const Variant& variant, int threadblocks, int budget,
                                         const CompileVariant& compile, int* hint = nullptr);

// The channel counts the families are asked for again under a budget (below the profile's
// `most_channels`): the budget, where lanes of a channel per local origin fill it, and half of
// it, where a node's rails take threadblocks besides. Empty without a budget.
std::vector<int> budget_channels(int budget, int most_channels);

}  // namespace weft::synthesis
