// Reduce-scatter across nodes where the hop budget has room: the pipelined trees split by node in
// four times the pieces (at most 256) on four times the channels, since a partial crosses the
// network only after its chain of reductions within the node, each as long as a piece takes
// (docs/synthesis.md#family-split-finer). Then, where the node's links do not bind, with each
// channel's first two pieces halved; where they do, twice the pieces again with the root's own
// chains on fewer channels and the network's on more (the NIC's window), and the finer pieces
// with the partials first.
#include <algorithm>

#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

// The pieces the split trees take here: four times the pipelined ones within the budget.
int finer_pieces(const Request& request, const TreeShape& piped) {
  return pieces_within(piped.pieces, std::min(4 * piped.pieces, 256), request.topology.ranks(),
                       hop_budget(request.collective));
}

bool offers(const Request& request) {
  if (request.collective != ir::Collective::ReduceScatter || request.topology.nodes() < 2)
    return false;
  const int direct = direct_pieces(request.topology, request.plan, request.channels);
  if (direct <= 1 || pipelined_pieces(request.topology, request.collective) <= direct) return false;
  const TreeShape piped = split_pipelined_shape(request);
  return finer_pieces(request, piped) > piped.pieces;
}

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  const TreeShape piped = split_pipelined_shape(request);
  const int finer = finer_pieces(request, piped);
  const int scale = finer / piped.pieces;
  TreeShape fine = piped;
  fine.pieces = finer;
  fine.direct_channels = piped.direct_channels * scale;
  offer(out, tree_sketch(topology, request.collective, request.plan, fine));
  const double width = rings_width(request.plan);
  if (!node_links_bind(topology, width)) {
    // Each channel's first two pieces at half the size, the rest in pairs (TreeShape::groups):
    // the network idles until the first partials are reduced, and halving them halves that wait.
    TreeShape halved = fine;
    halved.pieces = 2 * fine.pieces;
    const int first = 2 * fine.direct_channels;
    halved.groups.assign(static_cast<std::size_t>(first), 1);
    halved.groups.resize(static_cast<std::size_t>(first + (halved.pieces - first) / 2), 2);
    offer(out, tree_sketch(topology, request.collective, request.plan, halved));
  } else {
    // Twice the pieces again on the same channels, the root's own chains on fewer of them
    // (home_channels), and the network hops on as many channels as the profile leaves, so that
    // the NIC keeps enough bytes in flight (docs/synthesis.md#sketch-nic-window).
    TreeShape window = fine;
    window.pieces = 2 * fine.pieces;
    window.home_channels = home_channels(topology, width, fine.direct_channels);
    window.network_channels = request.channels / 2;
    offer(out, tree_sketch(topology, request.collective, request.plan, window));
    fine.partial_chain_channels = 2;
    fine.partials_first = fine.pieces / 4;
    offer(out, tree_sketch(topology, request.collective, request.plan, fine));
  }
}

}  // namespace

const Family kSplitFiner{"split-finer", offers, sketches};

}  // namespace weft::synthesis::families
