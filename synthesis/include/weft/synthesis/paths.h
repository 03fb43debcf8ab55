// Broadcast paths packed into one node's links (docs/synthesis.md): for every GPU, Hamiltonian
// paths that start at it, each with the rate it carries, such that all GPUs' paths together fit
// every link and the rate each GPU's data reaches the others at is as high as the links allow.
// A path is a tree whose every GPU forwards to one other and whose last GPU only receives; unlike
// a ring it may end at a GPU that has fewer links out than in (a DGX-1 with an NVLink down), so
// that GPU's remaining links still carry data in. Found by the multiplicative-weights method for
// concurrent flows (Garg and Könemann; Fleischer): repeatedly route each GPU's data on its
// cheapest path, links growing dearer as they fill; the cheapest Hamiltonian path is found
// exactly by dynamic programming over subsets (Held and Karp), up to kMaxPathGpus GPUs.
#pragma once

#include <utility>
#include <vector>

#include "weft/predict/topology.h"

namespace weft::synthesis {

inline constexpr int kMaxPathGpus = 12;

struct BroadcastPath {
  std::vector<int> order;  // ranks; order.front() is the root
  double rate_gbs = 0;     // what this path carries of its root's data
  // Empty for a path (each GPU sends to the next in order). For a spanning tree (pack_trees),
  // the rank that sends to order[i] (i ≥ 1; from[0] is -1): parents come before their children.
  std::vector<int> from;
};

// The hops of a path or tree, in order: (sender, receiver), every sender holding the piece by its
// hop (the root first).
std::vector<std::pair<int, int>> hops_along(const BroadcastPath& path);

// The rate every root's data reaches the others at: the least, over the roots, of their paths'
// rates together (infinite where there are no roots).
double broadcast_rate(const std::vector<std::vector<BroadcastPath>>& paths);

// Per rank of `ranks` (in that order): its paths, heaviest first, at most `most` each. Empty when
// there are more than kMaxPathGpus ranks or fewer than two. With `both_ways`, every hop loads
// the links both ways, as an allreduce's does (its scatter runs a path backwards, its gather
// forwards): the rates are then what each root's data moves at both ways at once.
std::vector<std::vector<BroadcastPath>> pack_paths(const predict::Topology& topology,
                                                   const std::vector<int>& ranks, int most,
                                                   bool both_ways = false);

// Spanning trees packed both ways, as allreduce runs them (its scatter reduces a piece up a tree
// to the root, its gather sends the sum back down the same tree): per rank of `ranks`, its trees,
// heaviest first, at most `most` each. A tree crosses between any k groups of GPUs at least k - 1
// times each way, a path may cross more: on 6 of a DGX-1's GPUs the paths carry 56 GB/s of
// allreduce, the trees all 62.5 the bound allows. The same method as pack_paths, with the
// cheapest spanning tree (Prim's, on the hops' costs both ways) for the cheapest path. Empty
// where pack_paths gives nothing.
std::vector<std::vector<BroadcastPath>> pack_trees(const predict::Topology& topology,
                                                   const std::vector<int>& ranks, int most);

// The same roots' data in `lanes` lanes each, every lane along one Hamiltonian path (a path may
// carry several) and all carrying equal shares, as a sketch runs them: the simulator shares a
// link evenly between transfers, so every lane moves one piece per step. Apportioned by the
// packing's rates alone, lanes of equal shares overload some links (a DGX-1 with an NVLink down:
// 93 % of the packing's rate in eight lanes); so each lane in turn then moves to the cheapest
// path under a potential that grows steeply with every link's load (Σ exp(30 × load)), while
// that lowers it (there: 98 %). Every path's rate_gbs is the share the busiest link allows.
// `both_ways` as pack_paths' (give it the paths packed so). Trees (pack_trees' output) are
// placed the same way, each lane moving to the cheapest spanning tree instead of path. Empty
// where pack_paths gave nothing.
std::vector<std::vector<BroadcastPath>> equal_lanes(
    const predict::Topology& topology, const std::vector<int>& ranks,
    const std::vector<std::vector<BroadcastPath>>& packed, int lanes, bool both_ways = false);

}  // namespace weft::synthesis
