// Across nodes, where the hop budget leaves no more pieces than the wide direct trees have (from
// 256 ranks, allreduce from 128): the wide tree with its pieces taking turns on one channel, so
// that a root sends its pieces to each rail peer one after another and its node forwards the
// first while the rest cross the network. Allgather's also in finer pieces, or where none are
// left, in routes of unequal shares (docs/synthesis.md#family-direct-turns).
#include <algorithm>
#include <cmath>

#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  const predict::Topology& topology = request.topology;
  if (request.collective == ir::Collective::AllToAll || topology.nodes() < 2) return false;
  const int direct = direct_pieces(topology, request.plan, request.channels);
  const long long ranks = topology.ranks();
  return direct > 1 && pipelined_pieces(topology, request.collective) <= direct &&
         ranks * ranks * direct <= kTurnsBudget;
}

// The wide tree, its pieces taking turns on one channel, and the node's forwards on a channel
// per eight nodes of roots (TreeShape::forward_channels): backwards at most four, since more
// chains sharing a GPU's NVLink each reach the NIC later; allreduce, whose pieces go both ways,
// at most eight.
TreeShape turns_shape(const Request& request) {
  TreeShape turns = wide_direct_shape(request);
  turns.direct_channels = 1;
  turns.forward_channels = std::clamp(request.topology.nodes() / 8, 1, request.channels);
  if (request.collective == ir::Collective::ReduceScatter)
    turns.forward_channels = std::min(turns.forward_channels, 4);
  if (request.collective == ir::Collective::AllReduce)
    turns.forward_channels = std::min(turns.forward_channels, 8);
  return turns;
}

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  const ir::Collective collective = request.collective;
  TreeShape turns = turns_shape(request);
  const int finer = pieces_within(turns.pieces, 16, topology.ranks(), kTurnsBudget / 2);
  // Where the budget leaves no finer pieces (1,024 GPUs), the routes carry unequal shares, the
  // first the largest, so that the node has less of the last round to forward after the NICs
  // are done: allreduce only in 5, 4, 4 and 3 sixteenths (more would not fit the command's ten
  // minutes there).
  const bool unequal = turns.pieces == 4 && finer == turns.pieces;
  if (collective == ir::Collective::AllReduce && unequal) {
    turns.pieces = 16;
    turns.groups = {5, 4, 4, 3};
  }
  offer(out, tree_sketch(topology, collective, request.plan, turns));
  if (collective == ir::Collective::AllGather && finer > turns.pieces) {
    // Allgather's also in as many pieces as half the budget leaves, at most 16: the node then
    // forwards a smaller last round after the NICs are done.
    turns.pieces = finer;
    offer(out, tree_sketch(topology, collective, request.plan, turns));
  } else if (collective == ir::Collective::AllGather && unequal) {
    // Ten routes per root in 32nds (round_shares' fluid model), on twice the channels of
    // forwards: small pieces are forwarded at the pace of a connection's FIFO window, and twice
    // the channels are twice the windows.
    const double forward_ratio = nic_share_of_links(topology, rings_width(request.plan));
    turns.pieces = 32;
    turns.forward_channels = std::min(request.channels, turns.forward_channels * 2);
    turns.groups = round_shares(10, turns.pieces, std::isfinite(forward_ratio) ? forward_ratio : 1);
    offer(out, tree_sketch(topology, collective, request.plan, turns));
  }
}

}  // namespace

const Family kDirectTurns{"direct-turns", offers, sketches};

}  // namespace weft::synthesis::families
