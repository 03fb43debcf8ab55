// Allreduce on one node: lanes of equal shares along spanning trees packed both ways, which
// cross between groups of GPUs no more often than the data must, where paths may cross more
// (docs/synthesis.md#family-lanes-along-trees).
#include <vector>

#include "registry.h"
#include "weft/synthesis/machine_facts.h"
#include "weft/synthesis/paths.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective == ir::Collective::AllReduce && request.topology.nodes() == 1 &&
         !request.plan.paths.empty();
}

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  const std::vector<int> node0 = node0_ranks(topology);
  const TreeShape bandwidth = path_lanes_shape(request);
  NodePlan trees;
  trees.paths = equal_lanes(topology, node0, pack_trees(topology, node0, 8), bandwidth.pieces,
                            /*both_ways=*/true);
  trees.equal_lanes = true;
  trees.both_ways = true;
  if (!trees.paths.empty()) {
    offer(out, tree_sketch(topology, request.collective, trees, bandwidth));
  }
}

}  // namespace

const Family kLanesAlongTrees{"lanes-along-trees", offers, sketches};

}  // namespace weft::synthesis::families
