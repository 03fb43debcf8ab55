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

#include <vector>

#include "weft/predict/topology.h"

namespace weft::synthesis {

inline constexpr int kMaxPathGpus = 12;

struct BroadcastPath {
  std::vector<int> order;  // ranks; order.front() is the root
  double rate_gbs = 0;     // what this path carries of its root's data
};

// Per rank of `ranks` (in that order): its paths, heaviest first, at most `most` each. Empty when
// there are more than kMaxPathGpus ranks or fewer than two.
std::vector<std::vector<BroadcastPath>> pack_paths(const predict::Topology& topology,
                                                   const std::vector<int>& ranks, int most);

}  // namespace weft::synthesis
