// Alltoall on one node: the routed sketch in two and four times the pieces, which balance the
// links finer (and are more threadblocks, which an NVSwitch node's links need to be full), each
// also relaying a piece only where that leaves its busiest link 3 % less busy
// (docs/synthesis.md#family-alltoall-finer-routes).
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective == ir::Collective::AllToAll && request.topology.nodes() == 1 &&
         alltoall_channels(request.topology) * 2 <= request.channels;
}

void sketches(const Request& request, FamilyVariants& out) {
  const int wide = alltoall_channels(request.topology);
  for (const int finer : {wide * 2, wide * 4}) {
    if (finer > request.channels) continue;
    for (const double margin : {0.0, 0.03}) {
      offer(out, alltoall_routed(request.topology, finer, margin));
    }
  }
}

}  // namespace

const Family kAlltoallFinerRoutes{"alltoall-finer-routes", offers, sketches};

}  // namespace weft::synthesis::families
