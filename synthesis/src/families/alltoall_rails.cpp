// Alltoall across nodes: every piece first within its node to the GPU with the destination's
// local index, then over that GPU's rail, so that every piece crosses the network between rail
// peers only; with its LL and LL128 twins where they pay
// (docs/synthesis.md#family-alltoall-rails).
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective == ir::Collective::AllToAll && request.topology.nodes() > 1 &&
         request.topology.gpus_per_node() > 1;
}

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  offer_maybe_twinned(out, alltoall_sketch(topology, true, 1),
                      twins_pay(topology, alltoall_channels(topology)));
}

}  // namespace

const Family kAlltoallRails{"alltoall-rails", offers, sketches};

}  // namespace weft::synthesis::families
