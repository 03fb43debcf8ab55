// Allgather across nodes: direct trees in many pieces (as many as the hop budget leaves, at most
// 64) taking turns on the channels, so that a GPU forwards one piece within its node while the
// next still crosses the network; on the direct trees' channels and twice as many, in half the
// pieces where the budget has room, and on three nodes or more the widest also as a chain of
// rail peers (docs/synthesis.md#family-direct-pipelined).
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  if (request.collective != ir::Collective::AllGather || request.topology.nodes() < 2) return false;
  const int direct = direct_pieces(request.topology, request.plan, request.channels);
  return direct > 1 && pipelined_pieces(request.topology, request.collective) > direct;
}

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  const int direct = direct_pieces(topology, request.plan, request.channels);
  const int pipelined = pipelined_pieces(topology, request.collective);
  const long long ranks = topology.ranks();
  TreeShape piped = wide_direct_shape(request);
  // Half the pieces only where the budget has room for four times as many: larger pieces suit
  // fewer ranks and middle sizes.
  for (const int pieces : {pipelined, pipelined / 2}) {
    if (pieces < pipelined && ranks * ranks * pipelined * 4 > hop_budget(request.collective))
      continue;
    piped.pieces = pieces;
    for (const int channels : {direct, direct * 2}) {
      if (channels >= pieces || channels > request.channels) continue;
      piped.direct_channels = channels;
      // With its LL128 twin (docs/synthesis.md#sketch-ll128-twins).
      offer_with_twins(out, tree_sketch(topology, request.collective, request.plan, piped));
      // The widest also along a chain of rail peers: every NIC then takes one origin's pieces
      // at a time, and a node's last arrivals are one origin's, forwarded side by side
      // (docs/synthesis.md#sketch-chain-of-rail-peers).
      if (topology.nodes() > 2 && channels == direct * 2 && pieces == pipelined) {
        TreeShape chain = piped;
        chain.across = Across::Chain;
        offer_with_twins(out, tree_sketch(topology, request.collective, request.plan, chain));
      }
    }
  }
}

}  // namespace

const Family kDirectPipelined{"direct-pipelined", offers, sketches};

}  // namespace weft::synthesis::families
