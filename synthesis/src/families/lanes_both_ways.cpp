// Allreduce on one node: lanes of equal shares placed for the load both ways, along paths packed
// for it (each piece is reduced towards its origin, then sent back out along the same path)
// (docs/synthesis.md#family-lanes-both-ways).
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
  NodePlan both;
  both.paths = equal_lanes(topology, node0, pack_paths(topology, node0, 8, /*both_ways=*/true),
                           bandwidth.pieces, /*both_ways=*/true);
  both.equal_lanes = true;
  both.both_ways = true;
  if (!both.paths.empty()) {
    offer(out, tree_sketch(topology, request.collective, both, bandwidth));
  }
}

}  // namespace

const Family kLanesBothWays{"lanes-both-ways", offers, sketches};

}  // namespace weft::synthesis::families
