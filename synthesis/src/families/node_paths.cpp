// Broadcast paths packed per origin into the node's links, for machines whose links are uneven
// (docs/synthesis.md#family-node-paths); across nodes only where they carry the data at another
// rate than the rings do (paths_pay, docs/synthesis.md#sketch-paths-across-nodes).
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective != ir::Collective::AllToAll && !request.plan.paths.empty() &&
         paths_pay(request.topology, request.plan);
}

void sketches(const Request& request, FamilyVariants& out) {
  // Paths are uneven: they share the lanes by width, each lane one piece, so that every lane
  // moves as much per tile (the simulator shares a link evenly between its transfers).
  const TreeShape bandwidth = path_lanes_shape(request);
  offer(out, tree_sketch(request.topology, request.collective, request.plan, bandwidth));
  if (request.topology.nodes() > 2) {
    TreeShape chain = bandwidth;
    chain.across = Across::Chain;
    offer(out, tree_sketch(request.topology, request.collective, request.plan, chain));
  }
}

}  // namespace

const Family kNodePaths{"node-paths", offers, sketches};

}  // namespace weft::synthesis::families
