// Reduce-scatter and allreduce across nodes: the pipelined direct trees backwards, split by node
// (channels of their own for every node of roots and each way between two nodes) on half the
// channels, at most eight in all (docs/synthesis.md#family-split-pipelined). Reduce-scatter's
// also with the partials first where the node's links bind.
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  if (request.collective != ir::Collective::ReduceScatter &&
      request.collective != ir::Collective::AllReduce)
    return false;
  if (request.topology.nodes() < 2) return false;
  const int direct = direct_pieces(request.topology, request.plan, request.channels);
  return direct > 1 && pipelined_pieces(request.topology, request.collective) > direct;
}

void sketches(const Request& request, FamilyVariants& out) {
  const TreeShape piped = split_pipelined_shape(request);
  // With its LL128 twin: a network hop costs less on it (docs/synthesis.md#sketch-ll128-twins).
  offer_with_twins(out, tree_sketch(request.topology, request.collective, request.plan, piped));
  // The chains whose partials cross the network on twice the channels, and the last quarter of
  // every root's pieces taking their partials first: the partials run ahead, and the node ends
  // on its own chains, not on a network hop. Either alone is slower
  // (docs/synthesis.md#sketch-partials-first).
  if (request.collective == ir::Collective::ReduceScatter &&
      node_links_bind(request.topology, rings_width(request.plan))) {
    TreeShape lead = piped;
    lead.partial_chain_channels = 2;
    lead.partials_first = lead.pieces / 4;
    offer(out, tree_sketch(request.topology, request.collective, request.plan, lead));
  }
}

}  // namespace

const Family kSplitPipelined{"split-pipelined", offers, sketches};

}  // namespace weft::synthesis::families
