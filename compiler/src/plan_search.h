// The channel plan and placement search: after scheduling, the compiler still chooses how the
// unhinted traffic spreads over channels (assign.h's ChannelPlan) and whether the sends and
// receives with one peer share a threadblock (dsl::Placement). Neither changes what is computed,
// but a plan that is too narrow breaks the limits profile (too many steps per threadblock, too
// many connections per channel) and one that is too wide wastes threadblocks, while the placement
// trades threadblocks for a shorter path. No single rule picks well for every algorithm, so the
// search assigns, resolves dependencies and checks the limits for each candidate it tries:
//
//   - the narrowest plan first, widened as far as its violations ask (and no further);
//   - under Placement::Auto, separate directions as well;
//   - under ChannelPolicy::ShortestPath, wider plans of the same schedule and a schedule with one
//     channel per data chain (data_chains.h);
//   - each of these for every schedule given (the orders of schedule.h).
//
// The time judge (time_judge.h) predicts every candidate, and the one closest to the best at its
// worst size is kept; where a program pinned its threadblocks or channels, a candidate replaces
// what it pinned only when no slower at any size and faster at one. Where time cannot judge
// (judging off, a candidate too large to predict), the critical path in steps decides as it
// always did: a shorter path wins (the data-chain plan also on a tie with fewer steps).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fuse_and_schedule.h"
#include "time_judge.h"
#include "weft/compiler/assign.h"
#include "weft/compiler/forward.h"
#include "weft/compiler/fuse.h"
#include "weft/compiler/instruction_dag.h"
#include "weft/compiler/judge.h"
#include "weft/dsl/options.h"
#include "weft/ir/ir.h"
#include "weft/ir/validate.h"

namespace weft::compiler::detail {

// What the search settled on: the placed algorithm (one instance), or why none meets the limits.
struct ChosenPlan {
  std::optional<ir::Algorithm> algorithm;  // none: no plan tried meets the limits profile
  std::string violation;  // without an algorithm: the first limit the narrowest plan broke
  // Of the schedule the algorithm was placed from (`primary`, or the one per data chain).
  std::vector<std::string> notes;
  FuseStats fused;
  ForwardStats forwarded;
  std::vector<JudgedCandidate> candidates;  // where time judged: every one, the kept one marked
  // Where the search explains itself (for the assign pass's dump), and only there: every plan it
  // placed, in order, and what became of each ("critical path order, paired directions, unhinted
  // traffic on one channel: 15 steps, 3 threadblocks, 1 channel, critical path 9"); the kept
  // one's description, the schedule it was placed from, and the channel and threadblock of each
  // of that schedule's instructions.
  std::vector<std::string> tried;
  std::string description;
  std::optional<Scheduled> scheduled;
  std::optional<Assignment> assignment;
};

// `primaries` are schedules of `lowered` (and of its forwarded copies `forwarded`, null when
// nothing was forwarded, as `forward_stats` counts them), in the order the incumbent is chosen
// (the first that meets the limits) and then challenged; the search schedules the data-chain
// plan from the same two DAGs in each primary's order. `instances` copies of the result must fit
// the limits together. `judge` may be null (the critical path decides). `explain`: fill the
// account of the search (ChosenPlan::tried and what follows it), at some cost.
ChosenPlan search_plan(const std::vector<const Scheduled*>& primaries,
                       const InstructionDag& lowered, const InstructionDag* forwarded,
                       const ForwardStats& forward_stats, const dsl::Options& options,
                       const ir::LimitsProfile& limits, int instances, TimeJudge* judge,
                       Incumbent incumbent, const Lap& lap, bool explain = false);

}  // namespace weft::compiler::detail
