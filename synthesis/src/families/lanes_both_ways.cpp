// Allreduce on one node: lanes of equal shares placed for the load both ways, along paths packed
// for it (each piece is reduced towards its origin, then sent back out along the same path)
// (docs/synthesis.md#family-lanes-both-ways).
#include <vector>

#include "registry.h"
#include "weft/synthesis/machine_facts.h"
#include "weft/synthesis/paths.h"

namespace weft::synthesis::families {

namespace {

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  const std::vector<int> node0 = node0_ranks(topology);
  offer_both_way_lanes(request, pack_paths(topology, node0, 8, /*both_ways=*/true), out);
}

}  // namespace

const Family kLanesBothWays{"lanes-both-ways", offers_node_allreduce_lanes, sketches};

}  // namespace weft::synthesis::families
