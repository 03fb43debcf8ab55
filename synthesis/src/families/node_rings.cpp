// Rings packed into the node's links, each split into lanes with a channel per local origin;
// across nodes a piece first goes to its rail peers, straight or along a chain of them
// (docs/synthesis.md#family-node-rings).
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective != ir::Collective::AllToAll && !request.plan.rings.empty();
}

void sketches(const Request& request, FamilyVariants& out) {
  const TreeShape bandwidth = ring_lanes_shape(request);
  offer(out, tree_sketch(request.topology, request.collective, request.plan, bandwidth));
  // Reduce-scatter, every piece taking its partials from the network first where the node's
  // links bind: the node then ends on its own chains, not on a network hop
  // (docs/synthesis.md#sketch-partials-first).
  if (request.collective == ir::Collective::ReduceScatter &&
      node_links_bind(request.topology, rings_width(request.plan))) {
    TreeShape first = bandwidth;
    first.partials_first = first.pieces;
    offer(out, tree_sketch(request.topology, request.collective, request.plan, first));
  }
  if (request.topology.nodes() > 2) {
    TreeShape chain = bandwidth;
    chain.across = Across::Chain;
    offer(out, tree_sketch(request.topology, request.collective, request.plan, chain));
  }
}

}  // namespace

const Family kNodeRings{"node-rings", offers, sketches};

}  // namespace weft::synthesis::families
