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
  const bool twinned = twins_pay(topology, alltoall_channels(topology));
  offer_maybe_twinned(out, alltoall_sketch(topology, true, 1), twinned);
  // Where the node's GPUs share its NICs unevenly, the rails relay pieces through the GPUs
  // whose NICs have room (rail_gateways), and a gateway's one connection to its rail peer then
  // carries several sources' pieces one after another: on two channels its NIC is busy without
  // a gap (alltoall on two A100 nodes of five NICs: 98 % of the bound, against 85 % on one).
  if (nics_uneven(topology)) offer_maybe_twinned(out, alltoall_sketch(topology, true, 2), twinned);
}

}  // namespace

const Family kAlltoallRails{"alltoall-rails", offers, sketches};

}  // namespace weft::synthesis::families
