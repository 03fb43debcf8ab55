// Reduce-scatter and allreduce across nodes: the wide direct trees split by node, in the pieces
// that fill a GPU's links and in half as many (fewer, longer pipelines win on some machines and
// sizes and lose on others), each with its LL and LL128 twins
// (docs/synthesis.md#family-split-wide).
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  if (request.collective != ir::Collective::ReduceScatter &&
      request.collective != ir::Collective::AllReduce)
    return false;
  const int nodes = request.topology.nodes();
  const int direct = direct_pieces(request.topology, request.plan, request.channels);
  return nodes > 1 && direct > 1 && direct / 2 * nodes <= request.channels;
}

void sketches(const Request& request, FamilyVariants& out) {
  TreeShape wide = wide_direct_shape(request);
  const int direct = wide.pieces;
  wide.split_by_node = true;
  // Split by node, every channel here is one per node. Their LL twins beat one piece on LL at
  // 16 to 512 KB (docs/synthesis.md#sketch-ll-twins).
  for (const int pieces : {direct, direct / 2}) {
    if (pieces * request.topology.nodes() > request.channels) continue;
    wide.pieces = pieces;
    offer_with_twins(out, tree_sketch(request.topology, request.collective, request.plan, wide),
                     /*with_ll=*/true);
  }
}

}  // namespace

const Family kSplitWide{"split-wide", offers, sketches};

}  // namespace weft::synthesis::families
