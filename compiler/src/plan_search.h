// The channel plan and placement search: after scheduling, the compiler still chooses how the
// unhinted traffic spreads over channels (assign.h's ChannelPlan) and whether the sends and
// receives with one peer share a threadblock (dsl::Placement). Neither changes what is computed,
// but a plan that is too narrow breaks the limits profile (too many steps per threadblock, too
// many connections per channel) and one that is too wide wastes threadblocks, while the placement
// trades threadblocks for a shorter critical path. No single rule picks well for every algorithm,
// so the search assigns, resolves dependencies and checks the limits for each candidate it tries:
//
//   - the narrowest plan first, widened as far as its violations ask (and no further);
//   - under Placement::Auto, separate directions as well, kept only for a shorter critical path;
//   - under ChannelPolicy::ShortestPath, wider plans of the same schedule and a schedule with one
//     channel per data chain (data_chains.h), kept where they shorten the critical path (the
//     data-chain plan also on a tie with fewer steps).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fuse_and_schedule.h"
#include "weft/compiler/forward.h"
#include "weft/compiler/fuse.h"
#include "weft/compiler/instruction_dag.h"
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
};

// `primary` is the schedule of `lowered` (and of its forwarded copies `forwarded`, null when
// nothing was forwarded, as `forward_stats` counts them); the search schedules the data-chain plan
// from the same two DAGs. `instances` copies of the result must fit the limits together.
ChosenPlan search_plan(const Scheduled& primary, const InstructionDag& lowered,
                       const InstructionDag* forwarded, const ForwardStats& forward_stats,
                       const dsl::Options& options, const ir::LimitsProfile& limits, int instances,
                       const Lap& lap);

}  // namespace weft::compiler::detail
