// Alltoall: every piece straight to its destination, in one piece per pair (on Simple and LL)
// and in enough to fill a GPU's links (with its LL and LL128 twins where they pay); and routed
// over the links, each piece direct or through one relaying GPU, where that relieves the
// busiest link (docs/synthesis.md#family-alltoall-routes).
#include <utility>

#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective == ir::Collective::AllToAll;
}

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  offer(out, alltoall_sketch(topology, false, 1));
  offer(out, alltoall_sketch(topology, false, 1), ir::Protocol::LL);
  const int wide = alltoall_channels(topology);
  Sketch direct = alltoall_sketch(topology, false, wide);
  Sketch routed = alltoall_routed(topology, wide);
  // In the same pieces, relaying pays only where it relieves the busiest link: where every
  // pair's own route already loads it no more (NVSwitch nodes, whose NICs carry every node's
  // share alike), relayed pieces add hops and steps and relieve nothing.
  const bool relieves =
      busiest_link_load(topology, routed) < busiest_link_load(topology, direct) * (1 - 1e-3);
  // Twinned where predicting the twins takes seconds (docs/synthesis.md#sketch-alltoall-twins).
  offer_maybe_twinned(out, std::move(direct), twins_pay(topology, wide));
  if (relieves) offer(out, std::move(routed));
}

}  // namespace

const Family kAlltoallRoutes{"alltoall-routes", offers, sketches};

}  // namespace weft::synthesis::families
