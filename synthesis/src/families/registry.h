// The families of sketches, in the order their sketches are listed, predicted (backwards) and
// pruned in (weft/synthesis/families.h). The order is part of the output: a sketch pruned at a
// size is pruned against those predicted before it, and of two equally fast the first wins. A
// family added goes where its sketches should be predicted, not simply last.
#pragma once

#include <array>

#include "family.h"

namespace weft::synthesis::families {

extern const Family kNodeRings;
extern const Family kNodePaths;
extern const Family kEqualLanes;
extern const Family kLanesBothWays;
extern const Family kLanesAlongTrees;
extern const Family kRingsLL128;
extern const Family kOneHop;
extern const Family kDirectWide;
extern const Family kDirectTurns;
extern const Family kDirectPipelined;
extern const Family kSplitPipelined;
extern const Family kSplitFiner;
extern const Family kSplitWide;
extern const Family kAlltoallRoutes;
extern const Family kAlltoallFinerRoutes;
extern const Family kAlltoallRails;

inline constexpr std::array<const Family*, 16> kRegistry{
    // Within a node along rings and paths, and across nodes straight to the rail peers or
    // along a chain of them: the bandwidth sketches.
    &kNodeRings, &kNodePaths, &kEqualLanes, &kLanesBothWays, &kLanesAlongTrees,
    // Middle and small sizes.
    &kRingsLL128, &kOneHop,
    // Direct trees: within a node each holder straight to every GPU, across nodes over the rails.
    &kDirectWide, &kDirectTurns, &kDirectPipelined, &kSplitPipelined, &kSplitFiner, &kSplitWide,
    // Alltoall.
    &kAlltoallRoutes, &kAlltoallFinerRoutes, &kAlltoallRails};

}  // namespace weft::synthesis::families
