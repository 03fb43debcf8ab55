// Allreduce on one node: lanes of equal shares along spanning trees packed both ways, which
// cross between groups of GPUs no more often than the data must, where paths may cross more
// (docs/synthesis.md#family-lanes-along-trees).
#include <vector>

#include "registry.h"
#include "weft/synthesis/machine_facts.h"
#include "weft/synthesis/paths.h"

namespace weft::synthesis::families {

namespace {

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  const std::vector<int> node0 = node0_ranks(topology);
  offer_both_way_lanes(request, pack_trees(topology, node0, 8), out);
}

}  // namespace

const Family kLanesAlongTrees{"lanes-along-trees", offers_node_allreduce_lanes, sketches};

}  // namespace weft::synthesis::families
