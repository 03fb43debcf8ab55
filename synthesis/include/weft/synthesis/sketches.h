// The shapes the synthesizer builds sketches in, from a topology's rings and nodes
// (docs/synthesis.md). Every tree is hierarchical where there are several nodes: a piece first
// crosses the network between GPUs of the same local index (their own NICs, "rails"), then
// spreads within every node; reduce-scatter runs the same trees backwards, allreduce backwards
// then forwards.
#pragma once

#include <vector>

#include "weft/predict/topology.h"
#include "weft/synthesis/paths.h"
#include "weft/synthesis/rings.h"
#include "weft/synthesis/sketch.h"

namespace weft::synthesis {

// Within a node: along the packed rings (bandwidth: each GPU sends each piece once), or from the
// piece's holder straight to every other GPU of the node (latency: one hop).
// Or along paths packed per origin (paths.h), which may end at a GPU with fewer links out.
enum class Within { Rings, Paths, Direct };
// Across nodes, between a GPU and its rail peers: straight to each, or along a chain of them.
enum class Across { Direct, Chain };

// A lane: a ring's share of its width, with a channel of its own per local origin, so that every
// threadblock forwards one origin's pieces per tile and runs on to the next tile at once (one
// channel for all origins would chain a tile's hops around the ring before the next tile). A
// ring wider than one lane's worth of threadblocks is split into several lanes on the same order.
struct Lane {
  int ring = 0;  // the ring (or the origin's path) it follows, by index
  double width_gbs = 0;
  int pieces = 0;  // of every block, allocated in proportion to the lanes' widths
};

// Lanes of at most `lane_gbs` each over `rings`, at most `most` of them (lanes are widened, and
// the narrowest rings left out, to fit), with `pieces` allocated so that the most loaded lane per
// width is as light as it can be; lanes given no piece are dropped.
std::vector<Lane> ring_lanes(const std::vector<double>& widths, double lane_gbs, int most,
                             int pieces);
// The fewest pieces per block (a power of two, as the sizes callers use are, at least one per
// lane, at most `most`) whose allocation over lanes of these widths loses at most 4 % against
// splitting the data exactly by width.
int lane_pieces(const std::vector<double>& widths, double lane_gbs, int most_lanes, int most);

// What a node offers the trees: its rings, and every local origin's paths (node 0's ranks).
struct NodePlan {
  std::vector<NodeRing> rings;
  std::vector<std::vector<BroadcastPath>> paths;  // per local index; empty: none packed
  // The paths are equal_lanes' (paths.h), one lane each: sketches along them are named "lanes".
  bool equal_lanes = false;
  // The paths were packed and placed for data sent both ways along them (allreduce): "lanes_both",
  // or "lanes_trees" where they are spanning trees (pack_trees: their BroadcastPath::from is set).
  bool both_ways = false;
};

// The pieces lane_pieces calls for over the plan's rings, or the most any origin's paths need.
int plan_pieces(const NodePlan& plan, Within within, double lane_gbs, int most_lanes, int most);

struct TreeShape {
  Within within = Within::Rings;
  Across across = Across::Direct;
  int pieces = 1;          // per block
  double lane_gbs = 0;     // rings: the most one lane carries (0: one lane per ring)
  int most_channels = 64;  // the limits profile's (allreduce: half, its gather has the rest)
  // Direct trees run backwards across nodes (reduce-scatter, allreduce): channels of their own
  // within a node per node of roots, and per way between two nodes, so that no threadblock
  // takes one node's pieces after another's or sends and receives across the network in turn.
  bool split_by_node = false;
  // Direct trees: the channels the pieces take turns on (0: a channel per piece). Pieces that
  // share a channel follow one another through its threadblocks, so that a node forwards the
  // first while the next still crosses the network (a pipeline within one tile).
  int direct_channels = 0;
  // Split by node, backwards: the chains whose partial then crosses the network take this many
  // times the root's node's channels, so that they run ahead of the root's own chains (which
  // the network does not wait for).
  int partial_chain_channels = 1;
  // Backwards across nodes: the last this-many pieces of every root take their partials from
  // the network before their own node's contributions (Route::partials_first).
  int partials_first = 0;
  // Direct trees not split by node: the hops within a node on this many channels, by the root's
  // node (counted from the root's own), not on the piece's channel (0 or 1: the piece's). Where
  // a root's pieces take turns on one channel, a GPU forwards (backwards: reduces) the pieces of
  // every other node's roots, and on one channel per peer it would take them one root after
  // another, each root's last piece holding up the next root's first.
  int forward_channels = 0;
  // Split by node, backwards: the root's own node's chains on this many of the direct channels,
  // the pieces in turn (0: as the pieces' direct channels). A GPU's NVLink is shared evenly by
  // the flows on it, so on fewer channels the chains whose partial crosses the network take a
  // larger share of it and run ahead of the root's own, which no network hop waits for.
  int home_channels = 0;
  // Split by node: the network hops on this many channels each way, the pieces in turn (0: as
  // the pieces' direct channels). A connection holds a FIFO's depth of messages, so small pieces
  // on few connections leave a NIC idle for the network's hop latency; more connections keep
  // more bytes in flight.
  int network_channels = 0;
  // Direct trees: the pieces travel in groups of these many (summing to `pieces`), each group
  // one route, group k on direct channel k; split by node, a group's partials reduce on the
  // channel of its first piece. Empty: a route per piece.
  std::vector<int> groups = {};
};

// The shares of a root's block, in `pieces` equal units, that `rounds` routes carry one after
// another on one channel (TreeShape::groups): each at least one unit, none larger than the one
// before. A rail peer's NIC serves every root's route at once, so a round arrives when the NIC
// has sent every share up to it, and the node then forwards it in `forward_ratio` times that
// round's NIC time (its G - 1 forwards over its links: (G - 1) × NIC / link rate), after the
// round before. The shares chosen end the last forward earliest in that fluid model (ties: the
// larger first shares): close to a geometric series of ratio `forward_ratio`, each round
// forwarded while the next crosses, the last one small. Every split is tried: meant for a few
// dozen units. Empty where rounds is not in [1, pieces] or the ratio is not a finite
// non-negative number.
std::vector<int> round_shares(int rounds, int pieces, double forward_ratio);

// Allgather, reducescatter or allreduce on trees of this shape, within nodes along the plan's
// rings or paths (node 0's; the other nodes are its copies), or direct where the plan has none.
Sketch tree_sketch(const predict::Topology& topology, ir::Collective collective,
                   const NodePlan& plan, const TreeShape& shape);

// Alltoall: every piece straight to its destination, or, with `rails`, first within its node to
// the GPU with the destination's local index and from there over that GPU's rail, so that every
// piece crosses the network between rail peers only.
Sketch alltoall_sketch(const predict::Topology& topology, bool rails, int channels);

// Alltoall routed over the links (a greedy multi-commodity flow): every piece goes straight to its
// destination or through one relaying GPU of either end's node, whichever leaves the busiest
// link on its way least busy, so that pairs a slow route joins (PCIe between GPUs without an
// NVLink, a shared NIC) relay through GPUs where that pays. With `relay_margin` (a fraction), a
// piece relays only where that leaves its busiest link that much less busy: a relayed piece also
// costs a second step and its threadblocks, which the links' load does not show.
Sketch alltoall_routed(const predict::Topology& topology, int channels, double relay_margin = 0);

// How long the busiest link is busy with the sketch's routes, every hop of every one, in units of
// the data `pieces` pieces make up (a rank's block; for alltoall, what a rank sends each peer)
// at 1 GB/s: what the sketch cannot beat at large sizes, and what a sketch moving the same data
// along other routes must lower to be worth proving and predicting.
double busiest_link_load(const predict::Topology& topology, const Sketch& sketch);

}  // namespace weft::synthesis
