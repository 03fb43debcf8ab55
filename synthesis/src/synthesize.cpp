#include "weft/synthesis/synthesize.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "weft/compiler/compiler.h"
#include "weft/compiler/verify.h"
#include "weft/dsl/error.h"
#include "weft/ir/validate.h"
#include "weft/synthesis/sketches.h"

namespace weft::synthesis {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Variant {
  Sketch sketch;
  ir::Protocol protocol = ir::Protocol::Simple;
  // A twin of the same sketch on the protocol with more payload per byte (LL's is the LL128
  // one, LL128's the Simple one): not predicted past a size where it was slower than that one
  // (tuning::TuneRequest::twins).
  bool twin = false;
};

// Node 0's ranks, whose rings and paths every node copies.
std::vector<int> node0_ranks(const predict::Topology& topology) {
  std::vector<int> ranks(static_cast<std::size_t>(topology.gpus_per_node()));
  for (std::size_t g = 0; g < ranks.size(); ++g) ranks[g] = static_cast<int>(g);
  return ranks;
}

// What the node's rings carry through each of its GPUs together, GB/s.
double rings_width(const NodePlan& plan) {
  double width = 0;
  for (const NodeRing& r : plan.rings) width += r.rate_gbs;
  return width;
}

// Whether the paths carry every origin's data at another rate than the rings do (by more than
// rounding): a ring of width w moves every origin's data at w / (G - 1), an origin's paths at
// the sum of their rates. Where the two agree, both fill the node (a switch).
bool paths_differ_from_rings(const NodePlan& plan) {
  if (plan.paths.empty()) return false;
  if (plan.rings.empty()) return true;
  const double width = rings_width(plan);
  const double rings_rate =
      width / static_cast<double>(std::max<std::size_t>(1, plan.paths.size() - 1));
  return std::abs(broadcast_rate(plan.paths) - rings_rate) > rings_rate * 1e-3;
}

// The narrowest link on node 0's first GPU's route to its rail peer on the next node: its NIC.
double nic_gbs(const predict::Topology& topology) {
  double gbs = std::numeric_limits<double>::infinity();
  for (const int l : topology.route(0, topology.gpus_per_node())) {
    gbs = std::min(gbs, topology.links()[static_cast<std::size_t>(l)].bandwidth_gbs);
  }
  return gbs;
}

// Whether, reducing backwards along rails, a GPU's links within its node take longer than its
// NIC: every piece comes in G - 1 times over the node's links (`node_gbs`, the rings' width) for
// each of the N nodes' roots, and (N - 1) of those N partials leave over the NIC (the narrowest
// link of the route to its rail peer on the next node). Where the node's links bind, the node's
// own chains can fill the last partials' network hop (TreeShape::partials_first): on two A100
// nodes they do, on four the NICs bind.
bool node_links_bind(const predict::Topology& topology, double node_gbs) {
  const int gpus = topology.gpus_per_node();
  const int nodes = topology.nodes();
  if (nodes < 2 || gpus < 2 || !(node_gbs > 0)) return false;
  return (gpus - 1) / node_gbs > (nodes - 1) / (nodes * nic_gbs(topology));
}

// What a GPU's NIC asks of its links within the node (`node_gbs`, the rings' width): everything
// it takes from (or gives to) the network goes to (comes from) its G - 1 peers there, so
// (G - 1) × NIC over the node's links. Not finite where the node has no links.
double nic_share_of_links(const predict::Topology& topology, double node_gbs) {
  return (topology.gpus_per_node() - 1) * nic_gbs(topology) / node_gbs;
}

// Reducing backwards along rails where the node's links bind: the root's own chains on as many of
// the `direct` channels as leave the chains whose partial crosses the network the share of a
// GPU's links its NIC needs, (G - 1) × NIC over the node's links (each partial comes in G - 1
// times), counting each channel's flow alike (the simulator splits a link evenly among its
// flows). On four H100 nodes: 7 × 50 of 450 GB/s, so 6 of 8 channels against 24 for the other
// three nodes' chains (80 %); split evenly (75 %) the NIC waits for partials in every round.
int home_channels(const predict::Topology& topology, double node_gbs, int direct) {
  const double need = nic_share_of_links(topology, node_gbs);
  if (!(need > 0) || need >= 1) return direct;
  const double others = static_cast<double>(topology.nodes() - 1) * direct;
  return std::clamp(static_cast<int>(std::floor(others * (1 - need) / need)), 1, direct);
}

// The most pieces, doubling from `pieces` while twice as many are at most `most`, whose hops
// (ranks² × pieces) stay within `budget`.
int pieces_within(int pieces, int most, long long ranks, long long budget) {
  while (pieces * 2 <= most && ranks * ranks * pieces * 2 <= budget) pieces *= 2;
  return pieces;
}

// Whether a sketch of `pieces` per rank pair may have LL and LL128 twins: each is compiled and
// predicted too, in seconds up to 128 ranks, in minutes on 1,024 GPUs.
bool twins_pay(const predict::Topology& topology, int pieces) {
  const long long ranks = topology.ranks();
  return ranks * ranks * 2 * pieces <= (1 << 18);
}

// The sketches worth proving for this collective on this machine: each wins some sizes on some
// machines, and there are few enough that synthesis stays within seconds.
std::vector<Variant> variants(const predict::Topology& topology, ir::Collective collective,
                              const NodePlan& plan, int most_channels) {
  std::vector<Variant> out;
  // Direct trees across nodes, wide or pipelined, also on LL128 (Variant::twin): its hop across
  // the network costs 4 us where Simple's costs 14 (NCCL's hwLat), so from 128 KB to 32 MB,
  // where a call is a few hops and no bandwidth-bound stretch, the same schedule is up to 1.7
  // times faster on it (allreduce on four A100 nodes at 8 MB: 93.3 us against 157.9;
  // reduce-scatter on four H100 nodes at 16 MB: 58.7 against 91.8). Larger, Simple's full
  // payload wins. The wide trees also on LL (`with_ll`), whose hop costs 2.7 us: from 8 to
  // 256 KB up to 1.55 times faster than on LL128 or a single piece on LL (allreduce on four A100
  // nodes at 64 KB: 16.8 us against 26.1).
  std::vector<Variant> twins;
  const auto with_twin = [&](Sketch sketch, bool with_ll = false) {
    // Each before the one it is the twin of: predicted after it (backwards).
    if (with_ll) twins.push_back({sketch, ir::Protocol::LL, true});
    twins.push_back({sketch, ir::Protocol::LL128, true});
    out.push_back({std::move(sketch), ir::Protocol::Simple});
  };
  // On Simple, with its LL and LL128 twins where `twinned`.
  const auto maybe_twinned = [&](Sketch sketch, bool twinned) {
    if (twinned) {
      with_twin(std::move(sketch), /*with_ll=*/true);
    } else {
      out.push_back({std::move(sketch), ir::Protocol::Simple});
    }
  };
  // The twins go first: predicted backwards (tune's prunable_backwards), after their Simple ones.
  const auto twins_first = [&] {
    out.insert(out.begin(), std::make_move_iterator(twins.begin()),
               std::make_move_iterator(twins.end()));
    return std::move(out);
  };
  const double channel_gbs =
      topology.costs().protocol(ir::Protocol::Simple).threadblock_bandwidth_gbs;
  if (collective == ir::Collective::AllToAll) {
    out.push_back({alltoall_sketch(topology, false, 1), ir::Protocol::Simple});
    out.push_back({alltoall_sketch(topology, false, 1), ir::Protocol::LL});
    // Wider: each connection's threadblocks move at most channel_gbs; a GPU's G - 1 peers in its
    // node share its links.
    const int gpus = topology.gpus_per_node();
    double egress = 0;
    for (const predict::Link& l : topology.links()) {
      if (l.type != predict::LinkType::Memory &&
          topology.vertices()[static_cast<std::size_t>(l.from)].rank == 0) {
        egress += l.bandwidth_gbs;
      }
    }
    int wide = 2;
    while (wide < 16 && wide * channel_gbs * std::max(1, gpus - 1) / 2 < egress) wide *= 2;
    Sketch direct = alltoall_sketch(topology, false, wide);
    Sketch routed = alltoall_routed(topology, wide);
    // In the same pieces, relaying pays only where it relieves the busiest link. Where every
    // pair's own route already loads it no more (NVSwitch nodes, whose NICs carry every node's
    // share alike), relayed pieces add hops and steps and relieve nothing: on eight A100 nodes
    // the routed sketch moved 70 % of the direct one's bandwidth, and predicting it was more
    // than half of the synthesis's time. It sits out there.
    const bool relieves =
        busiest_link_load(topology, routed) < busiest_link_load(topology, direct) * (1 - 1e-3);
    // The wide and the rails' sketches with their LL and LL128 twins, where they have few enough
    // pieces to predict in seconds (not on 1,024 GPUs): on one H100 node at 256 KB, 8.2 us on LL
    // against 12.2 for one piece per pair; on two A100 nodes at 512 KB 29.2 on LL128 against 32.9.
    const bool with_twins = twins_pay(topology, wide);
    maybe_twinned(std::move(direct), with_twins);
    if (relieves) out.push_back({std::move(routed), ir::Protocol::Simple});
    // Routes that relay balance the links better in finer pieces (a DGX-1's two quads of GPUs,
    // joined by four NVLinks of two widths): on one node, where predicting them is cheap, two
    // and four times as many, each also relaying only where that relieves the busiest link by
    // 3 % (a DGX-1 with an NVLink down: 93 % of the bound at 64 MB, against 88 %). Their finer
    // pieces also mean more threadblocks, which an NVSwitch node's links need to be full.
    for (const int finer : {wide * 2, wide * 4}) {
      if (topology.nodes() > 1 || finer > most_channels) continue;
      for (const double margin : {0.0, 0.03}) {
        out.push_back({alltoall_routed(topology, finer, margin), ir::Protocol::Simple});
      }
    }
    if (topology.nodes() > 1 && topology.gpus_per_node() > 1) {
      maybe_twinned(alltoall_sketch(topology, true, 1), with_twins);
    }
    return twins_first();
  }
  // Allreduce's gather runs on channels of its own, as many as its scatter's (to_program).
  if (collective == ir::Collective::AllReduce) most_channels = std::max(1, most_channels / 2);
  // A ring's lanes carry at most a quarter of what their G threadblocks per GPU (one per local
  // origin) do, which leaves room for the hops' latency.
  const int gpus = topology.gpus_per_node();
  const int most_lanes = std::max(1, most_channels / gpus);
  // Across nodes, where the rings carry every origin's data as fast as the paths do (NVSwitch
  // nodes), sketches along the paths only cost prediction time: on eight A100 nodes they were
  // slower than the rings' at every size. Where the two differ, either may win (two DGX-1s'
  // allreduce at 64 MB runs on the paths, though the rings are wider).
  const bool paths_pay = topology.nodes() == 1 || paths_differ_from_rings(plan);
  for (const Within within : {Within::Rings, Within::Paths}) {
    if (within == Within::Rings ? plan.rings.empty() : plan.paths.empty()) continue;
    if (within == Within::Paths && !paths_pay) continue;
    // Paths are uneven: they share the lanes by width, each lane one piece, so that every lane
    // moves as much per tile (the simulator shares a link evenly between its transfers).
    int lanes_pow2 = 1;
    while (lanes_pow2 * 2 <= most_lanes) lanes_pow2 *= 2;
    const double lane_gbs = within == Within::Rings ? channel_gbs * gpus / 4 : -1;
    const int pieces =
        within == Within::Rings ? plan_pieces(plan, within, lane_gbs, most_lanes, 64) : lanes_pow2;
    TreeShape bandwidth{within, Across::Direct, pieces, lane_gbs, most_channels};
    out.push_back({tree_sketch(topology, collective, plan, bandwidth), ir::Protocol::Simple});
    // Reduce-scatter on the rings, every piece taking its partials from the network first, where
    // the node's links bind: on two H100 nodes 87 % of the bound at 64 MB, against 81 % for the
    // best sketch without.
    if (collective == ir::Collective::ReduceScatter && within == Within::Rings &&
        node_links_bind(topology, rings_width(plan))) {
      TreeShape first = bandwidth;
      first.partials_first = first.pieces;
      out.push_back({tree_sketch(topology, collective, plan, first), ir::Protocol::Simple});
    }
    if (topology.nodes() > 2) {
      TreeShape chain = bandwidth;
      chain.across = Across::Chain;
      out.push_back({tree_sketch(topology, collective, plan, chain), ir::Protocol::Simple});
    }
    // On one node, where predicting one more is cheap, the paths also run as lanes of equal
    // shares placed so that no link carries much more than the packing asks of it (paths.h).
    // The simulator decides: on a DGX-1 with an NVLink down they win (allgather at 1 GB: 96 %
    // of the bound, against 92 %). Where the profile's channels leave room for more lanes than
    // the paths (6 GPUs: 10 lanes for 8 paths), the pieces are doubled until they fill it, and
    // the widest paths run in two lanes each (6 of a DGX-1's GPUs: allgather 98 % at 64 MB,
    // against 93 % on the packing's own lanes, and 88 % on one lane per path).
    if (within == Within::Paths && topology.nodes() == 1) {
      const std::vector<int> node0 = node0_ranks(topology);
      TreeShape filled = bandwidth;
      // Eight pieces per lane: finer pieces fill the paths sooner (a DGX-1 with an NVLink down,
      // allgather at 64 MB: 96.3 % of the bound, against 94.9 % on one piece per lane; more than
      // eight changed nothing).
      while (filled.pieces < 8 * most_lanes) filled.pieces *= 2;
      NodePlan lanes;
      lanes.paths = equal_lanes(topology, node0, plan.paths, pieces);
      lanes.equal_lanes = true;
      if (!lanes.paths.empty()) {
        out.push_back({tree_sketch(topology, collective, lanes, filled), ir::Protocol::Simple});
      }
      // Twice as many lanes apportion the paths' rates more finely (D'Hondt over more seats):
      // a DGX-1 with an NVLink down moves its allgather at 97 % of the bound at 1 GB, against 96 %
      // on the packing's own lane count (four times as many were slower than either there).
      NodePlan finer;
      finer.paths = equal_lanes(topology, node0, plan.paths, pieces * 2);
      finer.equal_lanes = true;
      if (!finer.paths.empty()) {
        TreeShape fine = filled;
        fine.pieces = std::max(filled.pieces, pieces * 2);
        Sketch sketch = tree_sketch(topology, collective, finer, fine);
        sketch.name += "_x2";
        out.push_back({std::move(sketch), ir::Protocol::Simple});
      }
      // Allreduce sends every piece both ways along its path (reduced towards its origin, then
      // back out): lanes placed for the load both ways, from paths packed for it, balance the
      // links the gather's lanes alone leave uneven (a DGX-1 with an NVLink down: 97 % of the
      // bound at 1 GB, against 88 %; 6 of its GPUs: 87 % of the grouping bound, against 74 %).
      if (collective == ir::Collective::AllReduce) {
        NodePlan both;
        both.paths = equal_lanes(topology, node0, pack_paths(topology, node0, 8, true), pieces,
                                 /*both_ways=*/true);
        both.equal_lanes = true;
        both.both_ways = true;
        if (!both.paths.empty()) {
          out.push_back({tree_sketch(topology, collective, both, bandwidth), ir::Protocol::Simple});
        }
        // Spanning trees both ways cross between groups of GPUs no more than they must, where
        // paths may cross more (6 of a DGX-1's GPUs: the paths carry 56 GB/s, the trees the
        // bound's 62.5).
        NodePlan trees;
        trees.paths = equal_lanes(topology, node0, pack_trees(topology, node0, 8), pieces,
                                  /*both_ways=*/true);
        trees.equal_lanes = true;
        trees.both_ways = true;
        if (!trees.paths.empty()) {
          out.push_back(
              {tree_sketch(topology, collective, trees, bandwidth), ir::Protocol::Simple});
        }
      }
    }
  }
  // One lane per ring for middle sizes, where LL128's lower latency pays more than width.
  if (!plan.rings.empty()) {
    TreeShape mid{Within::Rings, Across::Direct,
                  plan_pieces(plan, Within::Rings, 0, most_lanes, 64), 0, most_channels};
    out.push_back({tree_sketch(topology, collective, plan, mid), ir::Protocol::LL128});
  }
  TreeShape latency{Within::Direct, Across::Direct, 1, 0, most_channels};
  for (ir::Protocol p : {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
    out.push_back({tree_sketch(topology, collective, plan, latency), p});
  }
  // Direct trees wide enough to fill a GPU's links: each of its G - 1 connections gets the
  // pieces its share of the links calls for.
  const double width = rings_width(plan);
  int direct = 1;
  while (direct * channel_gbs * (gpus - 1) / 2 < width && direct * 2 <= most_channels) direct *= 2;
  if (direct > 1) {
    TreeShape wide_direct{Within::Direct, Across::Direct, direct, 0, most_channels};
    // With its LL and LL128 twins on one node, and across nodes for allgather (reduce-scatter
    // and allreduce have theirs split by node, below), where the pipelined ones come too (up to
    // 128 ranks), not where predicting a twin costs minutes (1,024 GPUs). On one H100 node,
    // allreduce at 128 KB in 10.1 us on LL against 16.6 for one piece on LL; on a DGX-1 17.2
    // against 23.0.
    maybe_twinned(tree_sketch(topology, collective, plan, wide_direct),
                  (topology.nodes() == 1 || collective == ir::Collective::AllGather) &&
                      twins_pay(topology, direct));
    // Pipelined: many pieces taking turns on the channels, so that a GPU forwards one piece
    // within its node while the next still crosses the network. One tile of 64 MB holds only
    // a few pieces per threadblock otherwise, and the node's last tile then goes through
    // NVSwitch after the NICs are done: on four A100 nodes, allgather at 64 MB reaches 96 % of
    // the bound this way (compiled unfused, Sketch::fusion), against 79 % for a piece per
    // channel. Backwards (reduce-scatter, allreduce) split by node, on half the channels (at most
    // eight in all, below): 93 % and 95 %, against 73 % and 75 %.
    // Every piece reaches every rank: ranks² × pieces hops, at most 2^18 (64 ranks, 64 pieces),
    // allreduce a quarter as many (its pieces go both ways). Compiling, predicting and proving
    // more costs seconds per sketch (on 32 H100 nodes 16 pieces took allgather's synthesis from
    // 20 to 66 s; on eight A100 nodes 32 pieces took allreduce's to 14 s, against 9 s for 16),
    // and at 1 GB the tiles pipeline on their own.
    const long long ranks = topology.ranks();
    const long long budget = collective == ir::Collective::AllReduce ? 1 << 16 : 1 << 18;
    const int pipelined = static_cast<int>(std::min<long long>(64, budget / (ranks * ranks)));
    // Where the budget leaves no room for more pieces than the wide trees have (from 256
    // ranks, allreduce from 128), the wide tree also with its pieces taking turns on one
    // channel: the same steps, but a root sends its pieces to each rail peer one after another,
    // so the first arrive a piece's time after the start and the node forwards them while the
    // rest cross the network (backwards, the first partials leave early). On channels of their
    // own, every piece shares the NIC with all the others and all arrive at the end. The node's
    // forwards go on a channel per eight nodes of roots (TreeShape::forward_channels). On 32
    // H100 nodes, 64 MB and 1 GB: allgather 84 % and 96 % of the bound against 59 % and 96 %
    // (the 1 GB band stays with the chain of rings), reduce-scatter 90 % and 97 % against 76 %
    // and 86 %, allreduce 87 % and 97 % against 63 % and 89 %. On one channel for the forwards
    // too: 78 %, 88 % and 80 % at 64 MB.
    // Its hops, ranks² × pieces, as many as the wide tree's: at most 2^22 (1,024 GPUs in four
    // pieces), allreduce too since the race check holds one component's clocks at a time (its
    // proof on 1,024 GPUs outgrew 21 GB before; now 112 s within compiling's 8.8 GB). Allreduce
    // on 1,024 H100 GPUs then reaches 89 % of the bound at 64 MB and 1 GB in equal pieces, 90 %
    // and 95 % in unequal shares on eight channels of forwards (below; 2.0× and 1.4× NCCL's
    // model), in 454 s and 13 GB, where its sketches without turns did not finish.
    const long long turns_budget = 1 << 22;
    if (topology.nodes() > 1 && pipelined <= direct && ranks * ranks * direct <= turns_budget) {
      TreeShape turns = wide_direct;
      turns.direct_channels = 1;
      turns.forward_channels = std::clamp(topology.nodes() / 8, 1, most_channels);
      // Backwards, at most four: a GPU reduces the pieces of every other node's roots, and on
      // more channels more of those chains share its NVLink at once, each slower, so their
      // partials reach the NIC later. Reduce-scatter at 64 MB and 1 GB on 64 H100 nodes: 93 % and
      // 96 % of the bound on two or four, 92 % and 95 % on eight, 87 % and 93 % on 16; on 128
      // nodes 95 % and 96 % on four, against 92 % and 93 % on 16. Allgather keeps a channel per
      // eight nodes; allreduce, whose pieces go both ways, at most eight (on 64 nodes the same on
      // four and eight; on 128, in the unequal shares below, 64 MB in 392.9 us on eight against
      // 394.2 on 12, 395.8 on 16, 403.7 on four and 518.3 on 32; 1 GB 5,630 us on eight against
      // 5,657 on 16).
      if (collective == ir::Collective::ReduceScatter)
        turns.forward_channels = std::min(turns.forward_channels, 4);
      if (collective == ir::Collective::AllReduce)
        turns.forward_channels = std::min(turns.forward_channels, 8);
      // Where the budget leaves no finer pieces (1,024 GPUs), the routes carry unequal shares
      // (allgather's below): allreduce then only in four, 5, 4, 4 and 3 sixteenths. On 128 H100
      // nodes its gather half, as allgather alone, ends on the node forwarding the last round
      // after the NICs are done, and a smaller last round leaves less of it: on 16 channels of
      // forwards 64 MB in 395.8 us against 401.2, 1 GB in 5,657 against 5,981 (95 % of the bound
      // against 89 %). Both would not fit the command's ten minutes there (each takes two to
      // three to predict, two to prove).
      const int finer = pieces_within(turns.pieces, 16, ranks, turns_budget / 2);
      const bool unequal = turns.pieces == 4 && finer == turns.pieces;
      if (collective == ir::Collective::AllReduce && unequal) {
        turns.pieces = 16;
        turns.groups = {5, 4, 4, 3};
      }
      out.push_back({tree_sketch(topology, collective, plan, turns), ir::Protocol::Simple});
      // Allgather's turns also in as many pieces as half the budget leaves, at most 16 (16 on
      // 256 GPUs, eight on 512: 94 s and 2.4 GB, 91 % at 64 MB; none more on 1,024). A rail peer's
      // NIC serves every root's piece at once, so each round of pieces arrives at the end of its
      // share of the NIC's time, and the node forwards the last round after the NICs are done:
      // a quarter of its NVLink work in four pieces. On 32 H100 nodes at 64 MB, 94 % of the
      // bound in 16 pieces against 84 % in four (91 % in eight); 32 were slower (67 %).
      // Backwards the partials leave the node's chains as they end, and more pieces gained
      // nothing there (reduce-scatter 91 % in eight against 90 %, allreduce 87 %).
      if (collective == ir::Collective::AllGather && finer > turns.pieces) {
        turns.pieces = finer;
        out.push_back({tree_sketch(topology, collective, plan, turns), ir::Protocol::Simple});
      } else if (collective == ir::Collective::AllGather && unequal) {
        // Where the budget leaves no more pieces (1,024 GPUs), ten routes per root carry
        // unequal shares of its block in 32nds, one after another, the first the largest
        // (round_shares: 8, 6, 4, 4, 3, 2, 2, 1, 1 and 1 on H100 nodes, where a GPU forwards a
        // round over its links in 7 × 50 / 450 of the round's NIC time). Each round is forwarded
        // while the next crosses, and the last, a 32nd, leaves the node little to forward after
        // the NICs are done. Its pieces are small (2 KB of a root's 64 KB at 64 MB), and a
        // connection forwards them at the pace of its FIFO window (four messages per hop
        // latency), not of its links: on twice the channels of forwards (a channel per four
        // nodes of roots), twice the windows. On 128 H100 nodes at 64 MB, 95 % of the bound
        // (198.0 us; the fluid model 196.9), against 90 % on a channel per eight nodes, 92 % in
        // seven routes in sixteenths (4, 3, 3, 2, 2, 1, 1), 91 % in five (5, 4, 3, 2, 2) and 87 %
        // in four (5, 4, 4, 3).
        const double forward_ratio = nic_share_of_links(topology, rings_width(plan));
        turns.pieces = 32;
        turns.forward_channels = std::min(most_channels, turns.forward_channels * 2);
        turns.groups =
            round_shares(10, turns.pieces, std::isfinite(forward_ratio) ? forward_ratio : 1);
        out.push_back({tree_sketch(topology, collective, plan, turns), ir::Protocol::Simple});
      }
    }
    if (topology.nodes() > 1 && pipelined > direct) {
      TreeShape piped = wide_direct;
      piped.pieces = pipelined;
      if (collective == ir::Collective::AllGather) {
        // Where the budget has room for four times as many, half the pieces too: larger ones
        // suit fewer ranks and mid sizes (on two A100 nodes the 32-piece sketches win allgather
        // from 2 to 16 MB, the 64-piece ones from 16 MB up).
        for (const int pieces : {pipelined, pipelined / 2}) {
          if (pieces < pipelined && ranks * ranks * pipelined * 4 > budget) continue;
          piped.pieces = pieces;
          for (const int channels : {direct, direct * 2}) {
            if (channels >= pieces || channels > most_channels) continue;
            piped.direct_channels = channels;
            with_twin(tree_sketch(topology, collective, plan, piped));
            // On three nodes or more, the widest also as a chain of rail peers: every NIC then
            // takes one origin's pieces at a time, and a node's last arrivals are one origin's
            // last pieces, which its channels forward side by side. Straight to every rail
            // peer, each NIC takes all origins' last pieces at once, and a channel forwards
            // three of them one after another: on four H100 nodes at 64 MB, 95 % of the bound
            // against 94 %; on eight A100 nodes 98 % against 96 % (and 99 % at 1 GB, against
            // 97 %).
            if (topology.nodes() > 2 && channels == direct * 2 && pieces == pipelined) {
              TreeShape chain = piped;
              chain.across = Across::Chain;
              with_twin(tree_sketch(topology, collective, plan, chain));
            }
          }
        }
      } else {
        // Split by node, every channel here is one per node: at most eight in all. On eight
        // A100 nodes one per node reaches 96 % of the bound at 64 MB both for reduce-scatter
        // and for allreduce, against 95 % and 94 % on two (and 93 % against 89 % for
        // allreduce's 16 pieces); on two and four nodes two per node are the faster (two A100
        // nodes' reduce-scatter: 85 %, against 83 % on four, and on one slower than the rings'
        // 74 %).
        piped.direct_channels = std::max(1, direct / 2);
        while (piped.direct_channels > 1 && piped.direct_channels * topology.nodes() > 8)
          piped.direct_channels /= 2;
        piped.split_by_node = true;
        with_twin(tree_sketch(topology, collective, plan, piped));
        // Where the node's links bind reduce-scatter, the chains whose partials cross the
        // network on twice the channels, and the last quarter of every root's pieces taking
        // their partials first: the partials run ahead, and the node ends on its own chains,
        // not on a network hop. On two A100 nodes at 64 MB, 92 % of the bound against 85 %.
        // Either alone is slower: more channels for the partials alone starve the root's own
        // chains, which every final reduction waits for (79 %); the partials first alone leave
        // both kinds of chain ending together (85 %).
        if (collective == ir::Collective::ReduceScatter && node_links_bind(topology, width)) {
          TreeShape lead = piped;
          lead.partial_chain_channels = 2;
          lead.partials_first = lead.pieces / 4;
          out.push_back({tree_sketch(topology, collective, plan, lead), ir::Protocol::Simple});
        }
        // Reduce-scatter where the budget has room: four times the pieces (at most 256) on
        // four times the channels, each channel's pieces as many as before. A partial crosses
        // the network only after its chain of G - 1 reductions within the node, and that chain
        // is as long as a piece takes: the network idles until the first partial is reduced,
        // and the root's last reduction waits for the last. On two A100 nodes at 64 MB, 98 % of
        // the bound against 92 % (the first partial leaves at 19 us, against 29 us); on four,
        // where the NICs bind, 95 % against 93 % (14 us against 18 us). Twice the pieces were
        // between the two. On four H100 nodes no faster (90 %). Allreduce's budget leaves no
        // room; MSCCL's XML reader does not take these (over 4,096 elements per rank).
        if (collective == ir::Collective::ReduceScatter) {
          const int finer =
              pieces_within(piped.pieces, std::min(4 * piped.pieces, 256), ranks, budget);
          if (finer > piped.pieces) {
            const int scale = finer / piped.pieces;
            TreeShape fine = piped;
            fine.pieces = finer;
            fine.direct_channels = piped.direct_channels * scale;
            out.push_back({tree_sketch(topology, collective, plan, fine), ir::Protocol::Simple});
            // The same trees with each channel's first two pieces at half the size (in twice
            // the pieces, the rest in pairs): the network still idles until the first partials
            // are reduced, and halving them halves that wait. On four A100 nodes at 64 MB, 97 %
            // of the bound against 95 % (94.9); on two DGX-1s 99 % against 99 % (1 % faster);
            // on four H100 nodes slower, and on two A100 nodes slower than partials first.
            // The pairs' partials reduce on the channel of their first piece, every other one
            // (TreeShape::groups): on all eight, 287.0 us against 283.4. Halving only each
            // channel's first piece reached 284.0 us; halving again (1,024 pieces, in fours
            // after) was slower. Where the node's links bind, the sketch below starts the
            // network sooner still, and this one won no size on the suite's machines.
            const bool links_bind = node_links_bind(topology, width);
            if (!links_bind) {
              TreeShape halved = fine;
              halved.pieces = 2 * fine.pieces;
              const int first = 2 * fine.direct_channels;
              halved.groups.assign(static_cast<std::size_t>(first), 1);
              halved.groups.resize(static_cast<std::size_t>(first + (halved.pieces - first) / 2),
                                   2);
              out.push_back(
                  {tree_sketch(topology, collective, plan, halved), ir::Protocol::Simple});
            } else {
              // Where the node's links bind, twice the pieces again on the same channels (4 KB
              // each at 64 MB on 32 ranks; at most 512, and within twice the budget), the
              // root's own chains on fewer of them (home_channels above), and the network hops
              // on as many channels as the profile leaves. Smaller pieces reach the network
              // sooner (on four H100 nodes the first partial leaves at 6.5 us, against 10.1),
              // but on 24 connections a NIC then keeps too few bytes in flight: a connection
              // holds four messages, and a message's slot comes back only 14 us (the network
              // hop) after its send ends. There at 64 MB: 154.9 us (96 % of the bound) against
              // 164.9 (90 %) for the fine sketch, 158.2 with the fine sketch's pieces on these
              // channels, and 163.3 on them with the root's chains on all eight; at 1 GB 99 %
              // against 96 %. The NIC sends without a gap from its first partial to its last.
              // On two A100 nodes it wins at 32 MB (7 % faster) and from 128 MB (1 %), on two
              // DGX-1s from 2 to 256 MB (under 1 %).
              TreeShape window = fine;
              window.pieces = 2 * fine.pieces;
              window.home_channels = home_channels(topology, width, fine.direct_channels);
              window.network_channels = most_channels / 2;
              out.push_back(
                  {tree_sketch(topology, collective, plan, window), ir::Protocol::Simple});
              fine.partial_chain_channels = 2;
              fine.partials_first = fine.pieces / 4;
              out.push_back({tree_sketch(topology, collective, plan, fine), ir::Protocol::Simple});
            }
          }
        }
      }
    }
    // Split by node, a GPU runs a node's worth of threadblocks per piece: half the pieces may
    // fill the links as well with fewer, longer pipelines (allreduce at 64 MB on four A100 nodes:
    // 75 % of the bound against 69 %; reduce-scatter at 1 GB on eight: 96 % against 93 %), or
    // not (reduce-scatter at 1 GB on four: 77 % against 96 %). Both contend.
    if (collective != ir::Collective::AllGather && topology.nodes() > 1) {
      wide_direct.split_by_node = true;
      for (const int pieces : {direct, direct / 2}) {
        if (pieces * topology.nodes() > most_channels) continue;
        wide_direct.pieces = pieces;
        with_twin(tree_sketch(topology, collective, plan, wide_direct), /*with_ll=*/true);
      }
    }
  }
  return twins_first();
}

// Sizes every sketch divides: a whole number of 16-byte elements in each of up to 64 pieces of
// every rank's block. Powers of two already are on a power of two of ranks; with 6 ranks,
// 64 MB becomes 67,107,840 bytes. Smaller sizes stay (sketches that do not divide them sit out).
std::vector<std::uint64_t> sizes_for(const std::vector<std::uint64_t>& sizes, int ranks) {
  const std::uint64_t granule = static_cast<std::uint64_t>(ranks) * 64 * 16;
  std::vector<std::uint64_t> out;
  for (const std::uint64_t bytes : sizes) {
    const std::uint64_t size = bytes >= granule ? bytes / granule * granule : bytes;
    if (out.empty() || size > out.back()) out.push_back(size);
  }
  return out;
}

std::string size_label(std::uint64_t bytes) {
  static const char* const units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{}{}", bytes, units[u]);
}

struct Row {
  std::uint64_t bytes = 0;
  double bound_us = 0;
  std::string chosen;
  double chosen_us = 0;
  double synthesized_us = std::numeric_limits<double>::infinity();
  double nccl_us = std::numeric_limits<double>::infinity();
  double others_us = std::numeric_limits<double>::infinity();
};

std::vector<Row> rows(const Synthesis& s) {
  const tuning::Tuning& t = s.tuning;
  std::vector<Row> out;
  for (std::size_t i = 0; i < t.sizes.size(); ++i) {
    Row row;
    row.bytes = t.sizes[i];
    row.bound_us = s.bound.time_us(row.bytes);
    for (const tuning::Band& band : t.bands) {
      if (i < band.first || i > band.last) continue;
      const tuning::Contender& c = t.contenders[static_cast<std::size_t>(band.contender)];
      row.chosen = c.name;
      row.chosen_us = c.time_us[i];
    }
    for (std::size_t k = 0; k < t.contenders.size(); ++k) {
      const tuning::Contender& c = t.contenders[k];
      double& slot = c.nccl ? row.nccl_us : k < s.synthesized ? row.synthesized_us : row.others_us;
      slot = std::min(slot, c.time_us[i]);
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string time_or_dash(double us) {
  return us < std::numeric_limits<double>::infinity() ? fmt::format("{:.1f}", us) : "-";
}

}  // namespace

namespace {

ir::LimitsProfile profile_or_throw(const std::string& name) {
  const std::optional<ir::LimitsProfile> profile = ir::limits_by_name(name);
  if (!profile) {
    throw std::invalid_argument(fmt::format("'{}' is not a limits profile (msccl, weft)", name));
  }
  return *profile;
}

// The node's rings and paths (none for alltoall, which needs no trees).
NodePlan plan_node(const predict::Topology& topology, ir::Collective collective) {
  NodePlan plan;
  if (collective == ir::Collective::AllToAll) return plan;
  const std::vector<int> node0 = node0_ranks(topology);
  plan.rings = pack_rings(topology, node0);
  plan.paths = pack_paths(topology, node0, 8);
  return plan;
}

dsl::Options program_options(const SynthesisRequest& request, const Variant& variant,
                             const predict::Topology& topology) {
  dsl::Options options;
  options.protocol = variant.protocol;
  options.limits = request.profile;
  options.fusion = variant.sketch.fusion;
  // The files say the machine's node count, so that the NCCL shim runs them only on
  // communicators whose ranks lie on hosts the same way.
  options.nodes = topology.nodes() > 1 ? topology.nodes() : 0;
  return options;
}

// The first line of why a sketch did not compile or prove, after its name.
std::string rejection(const std::string& name, std::string why) {
  if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
  return fmt::format("{}: {}", name, why);
}

// Proves `algorithm`, compiled from `program`, as `weftc compile` proves (one seed, as tune's).
// Empty when it proves, else why not, after the candidate's name.
std::optional<std::string> proof_failure(const std::string& name, const dsl::Program& program,
                                         const ir::Algorithm& algorithm) {
  const cpu::VerifyOptions options = compiler::compile_proof(1);
  const compiler::VerificationResult proof =
      compiler::verify_with_executor(program, algorithm, options);
  if (proof.passed) return std::nullopt;
  // The executor reports a run it had no memory for as an error case (cpu_executor.cpp).
  if (proof.report.find("out of memory") != std::string::npos) {
    return rejection(name, std::string(kLeftOutForMemory));
  }
  return rejection(name, "verification failed: " + proof.report);
}

// Every variant compiled into a candidate (proved too with `prove`, its seconds added to
// `prove_seconds`), and beside each the variant it came from, so that its program can be traced
// again for a later proof.
std::vector<tuning::Candidate> compile_variants(const predict::Topology& topology,
                                                const SynthesisRequest& request,
                                                const NodePlan& plan, bool prove,
                                                std::vector<Variant>& sources,
                                                std::vector<std::string>& rejected,
                                                double& prove_seconds) {
  const int most_channels = profile_or_throw(request.profile).max_channels;
  std::vector<tuning::Candidate> out;
  for (Variant& v : variants(topology, request.collective, plan, most_channels)) {
    const std::string name = fmt::format("{} {}", v.sketch.name, ir::to_string(v.protocol));
    try {
      const dsl::Program program =
          to_program(v.sketch, program_options(request, v, topology), request.in_place);
      compiler::CompileOptions compile;
      // A sketch pins its channels and threadblock chains, and the synthesis predicts every
      // variant on this machine itself: the critical path places it, at no prediction's cost.
      compile.judge.enabled = false;
      compiler::CompileResult result = compiler::compile_unverified(program, compile);
      if (!result.algorithm || !result.errors.empty()) {
        rejected.push_back(rejection(name, result.error_text()));
        continue;
      }
      if (prove) {
        const auto started = Clock::now();
        auto why = proof_failure(name, program, *result.algorithm);
        prove_seconds += seconds_since(started);
        if (why) {
          rejected.push_back(std::move(*why));
          continue;
        }
      }
      out.push_back({name, std::move(*result.algorithm)});
      sources.push_back(std::move(v));
    } catch (const std::bad_alloc&) {
      rejected.push_back(rejection(name, std::string(kLeftOutForMemory)));
    } catch (const std::exception& e) {
      rejected.push_back(rejection(name, e.what()));
    }
  }
  return out;
}

// Each twin's variant of the same sketch on the next protocol up (LL → LL128 → Simple) among the
// compiled ones, by index (TuneRequest::twins).
std::vector<int> twins_of(const std::vector<Variant>& sources) {
  std::vector<int> twins(sources.size(), -1);
  for (std::size_t k = 0; k < sources.size(); ++k) {
    if (!sources[k].twin) continue;
    // An LL twin's is the LL128 twin; an LL128 twin's the Simple variant, never a twin. (Other
    // LL128 variants, not twins, may share a sketch's name with an LL twin's: not its twin.)
    const bool to_simple = sources[k].protocol != ir::Protocol::LL;
    const ir::Protocol up = to_simple ? ir::Protocol::Simple : ir::Protocol::LL128;
    for (std::size_t j = 0; j < sources.size(); ++j) {
      if (sources[j].protocol == up && sources[j].twin != to_simple &&
          sources[j].sketch.name == sources[k].sketch.name) {
        twins[k] = static_cast<int>(j);
      }
    }
  }
  return twins;
}

// Proves a candidate compiled from `source`, on its program traced again.
std::optional<std::string> prove(const tuning::Candidate& candidate, const Variant& source,
                                 const SynthesisRequest& request,
                                 const predict::Topology& topology) {
  try {
    const dsl::Program program =
        to_program(source.sketch, program_options(request, source, topology), request.in_place);
    return proof_failure(candidate.name, program, candidate.algorithm);
  } catch (const std::bad_alloc&) {
    return rejection(candidate.name, std::string(kLeftOutForMemory));
  } catch (const std::exception& e) {
    return rejection(candidate.name, e.what());
  }
}

}  // namespace

std::vector<tuning::Candidate> synthesized_candidates(const predict::Topology& topology,
                                                      const SynthesisRequest& request,
                                                      std::vector<std::string>& rejected) {
  (void)bandwidth_bound(topology, request.collective);  // refuses what cannot be synthesized
  std::vector<Variant> sources;
  double prove_seconds = 0;
  return compile_variants(topology, request, plan_node(topology, request.collective),
                          /*prove=*/true, sources, rejected, prove_seconds);
}

Synthesis synthesize(const predict::Topology& topology, const SynthesisRequest& request,
                     std::vector<tuning::Candidate> others) {
  if (request.sizes.empty()) throw std::invalid_argument("no sizes to synthesize for");
  (void)profile_or_throw(request.profile);
  Synthesis s;
  auto started = Clock::now();
  s.bound = request.bound ? *request.bound : bandwidth_bound(topology, request.collective);
  s.plan = plan_node(topology, request.collective);
  s.bound_seconds = seconds_since(started);

  // Compiled, not yet proved: only what is written needs its proof, and proving every sketch
  // was most of synthesis itself on many nodes (eight A100 nodes' allreduce: about four of its
  // five seconds, for nine sketches of which one wins).
  started = Clock::now();
  std::vector<Variant> sources;
  s.candidates = compile_variants(topology, request, s.plan, request.prove_all, sources, s.rejected,
                                  s.prove_seconds);
  s.synthesized = s.candidates.size();
  for (tuning::Candidate& c : others) s.candidates.push_back(std::move(c));
  s.compile_seconds = seconds_since(started) - s.prove_seconds;

  tuning::TuneRequest tune;
  tune.collective = request.collective;
  tune.sizes = sizes_for(request.sizes, topology.ranks());
  tune.in_place = request.in_place;
  tune.with_nccl = request.with_nccl;
  // No sketch is faster than the bound for its protocol: one whose bound is no less than a
  // sketch predicted before it at a size is not predicted there. On 32 H100 nodes the LL sketch
  // at both sizes and the LL128 ones at 1 GB (each a simulation of 96 tiles, far from the best)
  // were two thirds of the predictions' 19 s. Only sketches are left out, so the best sketch at
  // every size is still predicted, and the library's and NCCL's times are all there. (Set on
  // every round below: a sketch that does not prove leaves one fewer.)
  // The widest sketches first (they come last): at 1 GB on eight A100 nodes they leave the
  // LL128 sketches out of allreduce, whose predictions from the first were a fifth of its time.
  tune.prunable_backwards = true;
  tune.gap = request.gap;
  tune.floor_us = [&s](const tuning::Candidate& c, std::uint64_t bytes) {
    return s.bound.time_us(bytes, c.algorithm.protocol);
  };
  std::vector<bool> proved(s.synthesized, request.prove_all);
  while (true) {
    started = Clock::now();
    tune.prunable = s.synthesized;
    tune.twins = twins_of(sources);
    tune.rejected = s.rejected;
    s.tuning = tuning::tune(s.candidates, topology, tune);
    s.predict_seconds += seconds_since(started);
    // The synthesized winners, proved; one that does not prove is left out, and the rest are
    // chosen among again (each proof holds for the others: nothing else changes).
    started = Clock::now();
    std::optional<std::size_t> failed;
    for (const tuning::Band& band : s.tuning.bands) {
      const auto k = static_cast<std::size_t>(band.contender);
      if (k >= s.synthesized || proved[k]) continue;
      if (auto why = prove(s.candidates[k], sources[k], request, topology)) {
        s.rejected.push_back(std::move(*why));
        failed = k;
        break;
      }
      proved[k] = true;
    }
    s.prove_seconds += seconds_since(started);
    if (!failed) break;
    const auto at = static_cast<std::ptrdiff_t>(*failed);
    s.candidates.erase(s.candidates.begin() + at);
    sources.erase(sources.begin() + at);
    proved.erase(proved.begin() + at);
    --s.synthesized;
  }
  s.proved = static_cast<std::size_t>(std::count(proved.begin(), proved.end(), true));
  s.tuning.info.notes.insert(
      s.tuning.info.notes.begin(),
      fmt::format("bound: {:.1f} GB/s algbw ({})", s.bound.algbw_gbs, s.bound.cut));
  return s;
}

namespace {

// The latency Simple pays: what large calls, which Simple carries, approach the bound's time by.
double simple_latency(const Bound& bound) {
  for (const ProtocolFloor& f : bound.floors) {
    if (f.protocol == ir::Protocol::Simple) return f.latency_us;
  }
  return 0;
}

}  // namespace

std::string bound_report(const Synthesis& s) {
  std::string out = fmt::format(
      "\n## Against the bound\n\nNo schedule moves a call faster than its bytes over {:.1f} GB/s "
      "(algorithm bandwidth): {}. Besides, every call pays the launch, its protocol's call "
      "latency and one hop across that cut: {:.1f} us at least (LL), {:.1f} us with Simple's "
      "full payload per line. The bound's time is the best protocol's latency plus its transfer; "
      "% of bound is the bound's time over the predicted time.\n\n",
      s.bound.algbw_gbs, s.bound.cut, s.bound.min_latency_us(), simple_latency(s.bound));
  if (const Cut* node = s.bound.slower_hop_cut()) {
    out += fmt::format(
        "Across nodes, {} carry at most {:.1f} GB/s, and their last bytes cross the network "
        "({:.1f} us at least with its hop): where that takes longer, mostly at mid sizes, it is "
        "the bound's time.\n\n",
        node->cut, node->algbw_gbs, node->min_latency_us());
  }
  if (!s.plan.rings.empty()) {
    out += "Rings within a node (ranks in order, width per direction):\n\n";
    for (const NodeRing& r : s.plan.rings) {
      std::string order;
      for (int rank : r.order) order += fmt::format("{} ", rank);
      out += fmt::format("- {}→ ({:.1f} GB/s)\n", order, r.rate_gbs);
    }
    out += "\n";
  }
  if (!s.plan.paths.empty()) {
    out += "Paths within a node, per origin (the widest, and all of them together):\n\n";
    for (const auto& paths : s.plan.paths) {
      if (paths.empty()) continue;
      double total = 0;
      for (const BroadcastPath& p : paths) total += p.rate_gbs;
      std::string order;
      for (int rank : paths.front().order) order += fmt::format("{} ", rank);
      out += fmt::format("- {}({:.1f} GB/s); {} paths, {:.1f} GB/s\n", order,
                         paths.front().rate_gbs, paths.size(), total);
    }
    out += "\n";
  }
  out +=
      "| size | bound (us) | chosen | time (us) | % of bound | synthesized (us) | NCCL's model "
      "(us) | others (us) |\n|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows(s)) {
    out += fmt::format("| {} | {:.1f} | {} | {} | {:.0f} % | {} | {} | {} |\n", size_label(r.bytes),
                       r.bound_us, r.chosen, time_or_dash(r.chosen_us),
                       100 * r.bound_us / r.chosen_us, time_or_dash(r.synthesized_us),
                       time_or_dash(r.nccl_us), time_or_dash(r.others_us));
  }
  out += fmt::format(
      "\nSynthesis: bound and rings {:.2f} s, {} sketches compiled in {:.2f} s ({} left out), "
      "predicted in {:.2f} s, the {} written proved in {:.2f} s.\n",
      s.bound_seconds, s.synthesized, s.compile_seconds, s.rejected.size(), s.predict_seconds,
      s.proved, s.prove_seconds);
  return out;
}

std::string bound_table(const Synthesis& s) {
  std::string out = fmt::format("{:>8} {:>12} {:>12} {:>7} {:>12}  {}\n", "size", "bound(us)",
                                "time(us)", "%bound", "NCCL(us)", "chosen");
  for (const Row& r : rows(s)) {
    out += fmt::format("{:>8} {:>12.1f} {:>12} {:>6.0f}% {:>12}  {}\n", size_label(r.bytes),
                       r.bound_us, time_or_dash(r.chosen_us), 100 * r.bound_us / r.chosen_us,
                       time_or_dash(r.nccl_us), r.chosen);
  }
  return out;
}

}  // namespace weft::synthesis
