// Direct trees wide enough to fill a GPU's links: each of its G - 1 connections within the node
// gets the pieces its share of the links calls for; across nodes each root sends straight to its
// rail peers (docs/synthesis.md#family-direct-wide).
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective != ir::Collective::AllToAll &&
         direct_pieces(request.topology, request.plan, request.channels) > 1;
}

void sketches(const Request& request, FamilyVariants& out) {
  const TreeShape wide = wide_direct_shape(request);
  // With its LL and LL128 twins on one node, and across nodes for allgather (reduce-scatter's
  // and allreduce's come split by node: split-wide), where predicting them takes seconds
  // (docs/synthesis.md#sketch-one-node-twins, #sketch-ll-twins).
  const bool twinned =
      (request.topology.nodes() == 1 || request.collective == ir::Collective::AllGather) &&
      twins_pay(request.topology, wide.pieces);
  offer_maybe_twinned(out, tree_sketch(request.topology, request.collective, request.plan, wide),
                      twinned);
}

}  // namespace

const Family kDirectWide{"direct-wide", offers, sketches};

}  // namespace weft::synthesis::families
