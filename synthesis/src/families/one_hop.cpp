// Latency: one piece, each holder straight to every GPU of its node (one hop within a node), on
// Simple, LL and LL128 (docs/synthesis.md#family-one-hop).
#include "registry.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective != ir::Collective::AllToAll;
}

void sketches(const Request& request, FamilyVariants& out) {
  const TreeShape latency{Within::Direct, Across::Direct, 1, 0, request.channels};
  for (const ir::Protocol p : {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
    offer(out, tree_sketch(request.topology, request.collective, request.plan, latency), p);
  }
}

}  // namespace

const Family kOneHop{"one-hop", offers, sketches};

}  // namespace weft::synthesis::families
