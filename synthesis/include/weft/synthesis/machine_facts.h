// What the sketch families (weft/synthesis/families.h) read off a machine before they choose
// their sketches: its node's rings and paths, its NIC against its links within a node, the
// channels and pieces a profile and the hop budgets leave. Each is a fact of the topology (and the
// node's plan), shared by several families, so that they agree on it (docs/synthesis.md, "How
// candidates are found").
#pragma once

#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/synthesis/sketches.h"

namespace weft::synthesis {

// Node 0's ranks, whose rings and paths every node copies.
std::vector<int> node0_ranks(const predict::Topology& topology);

// What the node's rings carry through each of its GPUs together, GB/s.
double rings_width(const NodePlan& plan);

// Whether the paths carry every origin's data at another rate than the rings do (by more than
// rounding): a ring of width w moves every origin's data at w / (G - 1), an origin's paths at
// the sum of their rates. Where the two agree, both fill the node (a switch).
bool paths_differ_from_rings(const NodePlan& plan);

// Whether sketches along the node's paths may win: on one node always; across nodes only where
// the paths differ from the rings (where they agree, on NVSwitch nodes, the rings' sketches were
// faster at every size, and the paths' only cost prediction time).
bool paths_pay(const predict::Topology& topology, const NodePlan& plan);

// The narrowest link on node 0's first GPU's route to its rail peer on the next node: its NIC.
// Infinite on one node.
double nic_gbs(const predict::Topology& topology);

// Across nodes, where a node's GPUs share its NICs unevenly (fewer NICs than GPUs, a NIC on a
// CPU's root port that only some GPUs' routes reach), the rail each of a root's routes crosses
// the network on: a GPU of the root's node (its gateway), which sends the route's pieces to its
// own rail peers, so that the NICs carry the network's bytes in proportion to what each can.
// `weights[g]`: the pieces each route of local origin g carries, in its order. `of[g][i]`: the
// local index of route i's gateway (g itself where the route keeps its own rail). Empty where
// every GPU's own rail already spreads the bytes as evenly (a NIC per GPU, or NICs each shared
// by as many GPUs), on one node, and where a rail has no route to its peer. `node_gbs`: what a
// GPU's links within its node carry (the rings' width), for `hand_on`.
struct RailGateways {
  std::vector<std::vector<int>> of;
  int nics = 0;  // the NICs the gateways' rails cross the network on
  // Whether a gateway hands a piece it took from the network on to its root's rail peer, which
  // spreads it over the node, rather than spreading it itself: where some gateway's links within
  // the node would otherwise take longer than its NIC (two A100 nodes of five NICs, each NIC
  // taking 1.6 GPUs' share: allgather 88 % of the bound at 1 GB spreading, 99 % handing on; on
  // three NICs, whose links have room, allreduce at 64 MB 95 % spreading, 88 % handing on).
  bool hand_on = false;
};
RailGateways rail_gateways(const predict::Topology& topology,
                           const std::vector<std::vector<int>>& weights, double node_gbs = 0);

// Whether the node's GPUs share its NICs unevenly: rail_gateways moves some of every GPU's
// eight pieces to other GPUs' rails.
bool nics_uneven(const predict::Topology& topology);

// Whether, reducing backwards along rails, a GPU's links within its node take longer than its
// NIC: every piece comes in G - 1 times over the node's links (`node_gbs`, the rings' width) for
// each of the N nodes' roots, and N - 1 of those N partials leave over the NIC. Where they do,
// the node's own chains can fill the last partials' network hop (TreeShape::partials_first).
bool node_links_bind(const predict::Topology& topology, double node_gbs);

// What a GPU's NIC asks of its links within the node (`node_gbs`, the rings' width): everything
// it takes from (or gives to) the network goes to (comes from) its G - 1 peers there, so
// (G - 1) × NIC over the node's links. Not finite where the node has no links.
double nic_share_of_links(const predict::Topology& topology, double node_gbs);

// Reducing backwards along rails where the node's links bind: the root's own chains on as many of
// the `direct` channels as leave the chains whose partial crosses the network the share of a
// GPU's links its NIC needs (nic_share_of_links), counting each channel's flow alike (the
// simulator splits a link evenly among its flows). `direct` where the share is not below one.
int home_channels(const predict::Topology& topology, double node_gbs, int direct);

// The most pieces, doubling from `pieces` while twice as many are at most `most`, whose hops
// (ranks² × pieces) stay within `budget`.
int pieces_within(int pieces, int most, long long ranks, long long budget);

// Whether a sketch of `pieces` per rank pair may have LL and LL128 twins (Variant::twin): each is
// compiled and predicted too, in seconds up to 128 ranks, in minutes on 1,024 GPUs.
bool twins_pay(const predict::Topology& topology, int pieces);

// What one threadblock moves at most with Simple, GB/s: a channel's worth of a connection.
double channel_gbs(const predict::Topology& topology);

// The channels a collective's sketches may take of the profile's `most_channels`: allreduce's
// gather runs on channels of its own, as many as its scatter's, so it has half (at least one).
int sketch_channels(ir::Collective collective, int most_channels);

// The most lanes a ring or path may run in: each takes a channel per local origin, G of them.
int most_lanes(const predict::Topology& topology, int channels);

// The most a ring's lane carries, GB/s: a quarter of what its G threadblocks per GPU (one per
// local origin) move, which leaves room for the hops' latency.
double ring_lane_gbs(const predict::Topology& topology);

// The lanes the paths run in, one piece each: the largest power of two within most_lanes, so
// that a power of two of pieces splits them evenly.
int path_lanes(const predict::Topology& topology, int channels);

// The pieces (and channels) a direct tree takes to fill a GPU's links: each of its G - 1
// connections gets the pieces its share of the rings' width calls for, a power of two within
// `channels`. One where one piece fills them (or the node has no links).
int direct_pieces(const predict::Topology& topology, const NodePlan& plan, int channels);

// The hops (ranks² × pieces) a pipelined direct tree may have: 2^18 (64 ranks in 64 pieces),
// allreduce a quarter of that since its pieces go both ways. More cost seconds per sketch to
// compile, predict and prove.
long long hop_budget(ir::Collective collective);

// The pieces a pipelined direct tree takes: as many as the hop budget leaves, at most 64.
int pipelined_pieces(const predict::Topology& topology, ir::Collective collective);

// The hops a direct tree whose pieces take turns on one channel may have (1,024 GPUs in four
// pieces): as many as the wide tree's.
inline constexpr long long kTurnsBudget = 1LL << 22;

// Backwards across nodes, split by node (TreeShape::split_by_node): the channels the pipelined
// trees' pieces take turns on within each node of roots, half the direct trees' and at most eight
// over all the nodes.
int split_channels(const predict::Topology& topology, int direct);

// Alltoall: the pieces per rank pair (a channel each) that fill a GPU's links, a power of two
// from 2 to 16: each connection's threadblocks move at most channel_gbs, and a GPU's G - 1 peers
// in its node share its links (what node 0's first GPU sends out over every link but memory).
int alltoall_channels(const predict::Topology& topology);

}  // namespace weft::synthesis
