// Rings packed into one node's links (docs/synthesis.md): Hamiltonian cycles through the node's
// GPUs, each as wide as the links its hops' routes cross still allow after the rings before it.
// On a switch every order is as wide as a GPU's link, so one ring carries it all; on a DGX-1's
// NVLink cube-mesh the widest rings are the cycles of its doubled and single links, which
// together fill every GPU's links in both directions; on a PCIe tree the widest ring visits the
// GPUs switch by switch, crossing each uplink once per direction. A ring is the tree that reaches
// the bound where a GPU's own links are the cut, with the fewest hops per GPU.
#pragma once

#include <vector>

#include "weft/predict/topology.h"

namespace weft::synthesis {

struct NodeRing {
  std::vector<int> order;  // ranks in ring order; each sends to the next, the last to the first
  double rate_gbs = 0;     // per direction, what the links left the ring (its bottleneck)
};

// Rings through `ranks` (two at least), widest first, until the next would carry less than a
// tenth of the first or `max_rings` are found. Every order is searched up to 9 GPUs; above, the
// widest next hop is taken greedily from every start.
std::vector<NodeRing> pack_rings(const predict::Topology& topology, const std::vector<int>& ranks,
                                 int max_rings = 8);

}  // namespace weft::synthesis
