#include "weft/synthesis/sketches.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis {

namespace {

// Lanes over paths or rings of these widths, `lane_gbs` wide at most (0: one per path; below 0:
// `most` of them, nearly equal), no more than `most`: where more are wanted, the lanes go to the
// widest in proportion to their widths (each next lane to the one with the most width per lane),
// and those given none are left out.
std::vector<Lane> lanes_of(const std::vector<double>& widths, double lane_gbs, int most) {
  std::vector<int> copies(widths.size(), 1);
  int wanted = 0;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    // A power of two of lanes per ring, so that a power of two of pieces splits them evenly.
    while (lane_gbs > 0 && copies[i] * lane_gbs < widths[i] * (1 - 1e-9)) copies[i] *= 2;
    wanted += copies[i];
  }
  if (wanted > most || lane_gbs < 0) {
    std::fill(copies.begin(), copies.end(), 0);
    for (int slot = 0; slot < most; ++slot) {
      std::size_t pick = 0;
      double best = -1;
      for (std::size_t i = 0; i < widths.size(); ++i) {
        const double share = widths[i] / (copies[i] + 1);
        if (share > best) {
          best = share;
          pick = i;
        }
      }
      ++copies[pick];
    }
  }
  std::vector<Lane> lanes;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    for (int c = 0; c < copies[i]; ++c) {
      lanes.push_back({static_cast<int>(i), widths[i] / copies[i], 0});
    }
  }
  return lanes;
}

std::vector<double> widths_of(const std::vector<NodeRing>& rings) {
  std::vector<double> w;
  for (const NodeRing& r : rings) w.push_back(r.rate_gbs);
  return w;
}

std::vector<double> widths_of(const std::vector<BroadcastPath>& paths) {
  std::vector<double> w;
  for (const BroadcastPath& p : paths) w.push_back(p.rate_gbs);
  return w;
}

// Each next piece to the lane whose load per width would stay lowest: this keeps the most loaded
// lane per width as light as any allocation can.
void allocate(std::vector<Lane>& lanes, int pieces) {
  for (Lane& l : lanes) l.pieces = 0;
  for (int p = 0; p < pieces; ++p) {
    std::size_t pick = 0;
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const double load = (lanes[i].pieces + 1) / lanes[i].width_gbs;
      if (load < best) {
        best = load;
        pick = i;
      }
    }
    ++lanes[pick].pieces;
  }
}

// What the allocation achieves against splitting exactly by width (1: exact).
double efficiency(const std::vector<Lane>& lanes, int pieces) {
  double width = 0;
  double worst = 0;
  for (const Lane& l : lanes) {
    width += l.width_gbs;
    worst = std::max(worst, l.pieces / l.width_gbs);
  }
  return worst > 0 ? (pieces / width) / worst : 0;
}

// When the node has forwarded the last round of these shares (in NIC time of the whole block),
// in round_shares' fluid model.
double last_forward_ends(const std::vector<int>& shares, int pieces, double forward_ratio) {
  double sent = 0;
  double forwarded = 0;
  for (const int share : shares) {
    const double part = static_cast<double>(share) / pieces;
    sent += part;
    forwarded = std::max(forwarded, sent) + forward_ratio * part;
  }
  return forwarded;
}

// Every way of splitting `left` units into the rest of `shares` (none larger than `most`) after
// its first `filled`, keeping the best in `best` (its end in `best_end`).
void try_shares(std::vector<int>& shares, std::size_t filled, int left, int most, int pieces,
                double forward_ratio, std::vector<int>& best, double& best_end) {
  if (filled == shares.size()) {
    if (left != 0) return;
    const double end = last_forward_ends(shares, pieces, forward_ratio);
    // Shares are tried larger first, so only a strictly earlier end replaces the best.
    if (end < best_end - 1e-12) {
      best = shares;
      best_end = end;
    }
    return;
  }
  const int after = static_cast<int>(shares.size() - filled) - 1;  // each needs one unit
  for (int share = std::min(most, left - after); share >= 1; --share) {
    // The rest, none larger than this one, cannot hold more than `after` of it.
    if (left - share > after * share) break;
    shares[filled] = share;
    try_shares(shares, filled + 1, left - share, share, pieces, forward_ratio, best, best_end);
  }
}

}  // namespace

std::vector<Lane> ring_lanes(const std::vector<double>& widths, double lane_gbs, int most,
                             int pieces) {
  std::vector<Lane> lanes = lanes_of(widths, lane_gbs, std::max(1, most));
  allocate(lanes, pieces);
  std::erase_if(lanes, [](const Lane& l) { return l.pieces == 0; });
  return lanes;
}

int lane_pieces(const std::vector<double>& widths, double lane_gbs, int most_lanes, int most) {
  std::vector<Lane> lanes = lanes_of(widths, lane_gbs, std::max(1, most_lanes));
  int pieces = 1;
  while (pieces < most) {
    if (pieces >= static_cast<int>(lanes.size())) {
      allocate(lanes, pieces);
      if (efficiency(lanes, pieces) >= 0.96) break;
    }
    pieces *= 2;
  }
  return pieces;
}

int plan_pieces(const NodePlan& plan, Within within, double lane_gbs, int most_lanes, int most) {
  if (within == Within::Rings)
    return lane_pieces(widths_of(plan.rings), lane_gbs, most_lanes, most);
  int pieces = 1;
  for (const auto& paths : plan.paths) {
    pieces = std::max(pieces, lane_pieces(widths_of(paths), lane_gbs, most_lanes, most));
  }
  return pieces;
}

std::vector<int> round_shares(int rounds, int pieces, double forward_ratio) {
  if (rounds < 1 || rounds > pieces || !std::isfinite(forward_ratio) || forward_ratio < 0)
    return {};
  std::vector<int> shares(static_cast<std::size_t>(rounds), 0);
  std::vector<int> best;
  double best_end = std::numeric_limits<double>::infinity();
  try_shares(shares, 0, pieces, pieces, pieces, forward_ratio, best, best_end);
  return best;
}

namespace {

// The lanes every local origin runs in along the plan's rings or paths (none where the tree is
// direct within a node).
struct OriginLanes {
  // Per local origin: the orders its lanes follow (ranks of node 0) and the lanes.
  std::vector<std::vector<const std::vector<int>*>> orders;
  // And, where a lane follows a tree (pack_trees), its senders; null for rings and paths.
  std::vector<std::vector<const std::vector<int>*>> senders;
  std::vector<std::vector<Lane>> lanes;
  std::size_t count = 0;  // the most lanes any origin runs in
};

OriginLanes origin_lanes(const NodePlan& plan, Within within, const TreeShape& shape, int gpus) {
  const int most_lanes = std::max(1, shape.most_channels / gpus);
  OriginLanes out;
  out.orders.resize(static_cast<std::size_t>(gpus));
  out.senders.resize(static_cast<std::size_t>(gpus));
  out.lanes.resize(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus && within != Within::Direct; ++g) {
    const auto at = static_cast<std::size_t>(g);
    auto& mine = out.lanes[at];
    if (within == Within::Rings) {
      mine = ring_lanes(widths_of(plan.rings), shape.lane_gbs, most_lanes, shape.pieces);
      for (const Lane& l : mine) {
        out.orders[at].push_back(&plan.rings[static_cast<std::size_t>(l.ring)].order);
        out.senders[at].push_back(nullptr);
      }
    } else {
      const auto& paths = plan.paths[at];
      mine = ring_lanes(widths_of(paths), shape.lane_gbs, most_lanes, shape.pieces);
      for (const Lane& l : mine) {
        const BroadcastPath& path = paths[static_cast<std::size_t>(l.ring)];
        out.orders[at].push_back(&path.order);
        out.senders[at].push_back(path.from.empty() ? nullptr : &path.from);
      }
    }
  }
  for (const auto& mine : out.lanes) out.count = std::max(out.count, mine.size());
  return out;
}

// The channels a direct tree's hops take (TreeShape's fields, as this machine allows them).
struct DirectChannels {
  int direct = 1;   // the pieces take turns on these
  int partial = 1;  // split by node: each other node's roots' chains take these
  bool split_by_node = false;
  int forward = 1;  // the node's hops, by the root's node
  int home = 0;     // split: the root's own node's chains (0: as the pieces')
  int network = 0;  // split: the network hops each way (0: as the pieces')
};

DirectChannels direct_channels(const TreeShape& shape, Within within, int nodes) {
  DirectChannels c;
  // Run backwards, a direct tree's GPU reduces what its node's GPUs send it, for every root, and
  // one threadblock per channel and peer would take those pieces one after another: the piece
  // it then sends across the network held up the pieces of the other nodes' roots behind it.
  // Split, within a node each node's roots (counted from the root's own) get channels of their
  // own (TreeShape::split_by_node).
  c.direct =
      shape.direct_channels > 0 ? std::min(shape.direct_channels, shape.pieces) : shape.pieces;
  // Split, the chains of the other nodes' roots each take `partial`.
  c.partial = c.direct * std::max(1, shape.partial_chain_channels);
  c.split_by_node = shape.split_by_node && within == Within::Direct && nodes > 1 &&
                    c.direct + (nodes - 1) * c.partial <= shape.most_channels;
  c.forward = within == Within::Direct && !c.split_by_node && nodes > 1
                  ? std::max(1, shape.forward_channels)
                  : 1;
  c.home = c.split_by_node && shape.home_channels > 0 ? std::min(shape.home_channels, c.direct) : 0;
  c.network = c.split_by_node && shape.network_channels > 0
                  ? std::min(shape.network_channels, shape.most_channels / 2)
                  : 0;
  return c;
}

// Runs of three or more as COUNTxRUN: a file's name stays short (_g1x16_2x248).
std::string groups_label(const std::vector<int>& groups) {
  std::vector<std::string> runs;
  for (std::size_t k = 0; k < groups.size();) {
    std::size_t end = k;
    while (end < groups.size() && groups[end] == groups[k]) ++end;
    if (end - k >= 3) {
      runs.push_back(fmt::format("{}x{}", groups[k], end - k));
    } else {
      for (std::size_t j = k; j < end; ++j) runs.push_back(std::to_string(groups[j]));
    }
    k = end;
  }
  return fmt::format("_g{}", fmt::join(runs, "_"));
}

// The sketch's name: how it runs within a node and across nodes, then what sets it apart.
std::string tree_name(const NodePlan& plan, const TreeShape& shape, Within within,
                      std::size_t lane_count, const DirectChannels& c, int nodes) {
  const bool along_trees = !plan.paths.empty() && !plan.paths.front().empty() &&
                           !plan.paths.front().front().from.empty();
  const std::string how = within == Within::Direct ? std::string("direct")
                          : within == Within::Rings
                              ? fmt::format("rings_l{}", lane_count)
                              : fmt::format("{}{}_l{}", plan.equal_lanes ? "lanes" : "paths",
                                            along_trees      ? "_trees"
                                            : plan.both_ways ? "_both"
                                                             : "",
                                            lane_count);
  std::string name = nodes > 1 ? fmt::format("synth_{}_{}{}_p{}",
                                             shape.across == Across::Direct ? "rails" : "chain",
                                             how, c.split_by_node ? "_split" : "", shape.pieces)
                               : fmt::format("synth_{}_p{}", how, shape.pieces);
  if (c.split_by_node && c.partial > c.direct) name += "_lead";
  if (c.forward > 1) name += fmt::format("_f{}", c.forward);
  if (nodes > 1 && shape.partials_first > 0) name += "_pfirst";
  if (within == Within::Direct && !shape.groups.empty()) name += groups_label(shape.groups);
  if (c.home > 0) name += fmt::format("_h{}", c.home);
  if (c.network > 0) name += fmt::format("_n{}", c.network);
  if (within == Within::Direct && c.direct < shape.pieces) name += fmt::format("_c{}", c.direct);
  return name;
}

// Pieces of one root travelling together: the first, how many, on which channel, and within a
// node along which order (none: direct).
struct PieceGroup {
  int piece = 0;
  int count = 1;
  int channel = 0;
  const std::vector<int>* order = nullptr;
  const std::vector<int>* from = nullptr;  // a tree's senders (NodePlan::paths)
};

// Local origin `g`'s groups of pieces: the shape's groups or a piece each where direct, else a
// group per lane.
std::vector<PieceGroup> piece_groups(const TreeShape& shape, Within within, const OriginLanes& o,
                                     int direct_channels, int g, int gpus) {
  std::vector<PieceGroup> groups;
  if (within == Within::Direct && !shape.groups.empty()) {
    int first = 0;
    for (std::size_t k = 0; k < shape.groups.size(); ++k) {
      groups.push_back({first, shape.groups[k], static_cast<int>(k) % direct_channels, nullptr});
      first += shape.groups[k];
    }
  } else if (within == Within::Direct) {
    for (int j = 0; j < shape.pieces; ++j) {
      groups.push_back({j, 1, j % direct_channels, nullptr});
    }
  } else {
    const auto at = static_cast<std::size_t>(g);
    int first = 0;
    const auto& mine = o.lanes[at];
    for (std::size_t l = 0; l < mine.size(); ++l) {
      groups.push_back({first, mine[l].pieces, static_cast<int>(l) * gpus + g, o.orders[at][l],
                        o.senders[at][l]});
      first += mine[l].pieces;
    }
  }
  return groups;
}

// Where a tree's routes run: the machine's shape and the tree's channels.
struct TreeLayout {
  const TreeShape& shape;
  const DirectChannels& channels;
  int nodes = 1;
  int gpus = 1;
  int rank(int node, int gpu) const { return node * gpus + gpu; }
  // Where pieces cross on other GPUs' rails (rail_gateways): whether a gateway hands them on to
  // their root's rail peer in its node (RailGateways::hand_on), on which channel, and from which
  // channel on a relayed piece's hops across the network and in the other nodes take channels
  // of their own (0: they share the piece's).
  bool hand_on = false;
  int hand_on_channel = 0;
  int apart = 0;
};

// A group's hops across the network, between rail peers of the local index `gateway` (the
// root's own, or the GPU whose NIC it crosses on, rail_gateways): straight from the root's node
// or along the chain. `turn`: the group's turn on the network channels
// (TreeShape::network_channels).
void network_hops(const TreeLayout& t, const PieceGroup& group, int turn, int gateway,
                  Route& route) {
  const int home = route.root / t.gpus;
  const int g = gateway;
  const DirectChannels& c = t.channels;
  for (int d = 1; d < t.nodes; ++d) {
    const int from =
        t.shape.across == Across::Direct ? t.rank(home, g) : t.rank((home + d - 1) % t.nodes, g);
    const int to = t.rank((home + d) % t.nodes, g);
    // Split, the two ways between two nodes get channels of their own: one threadblock would
    // otherwise send this node's partial and take the other's in turn, and leave the NIC one
    // way idle while it works the other.
    const bool back = c.split_by_node && from / t.gpus > to / t.gpus;
    const int channel = c.network > 0 ? turn % c.network + (back ? c.network : 0)
                                      : group.channel + (back ? c.direct : 0);
    route.hops.push_back({from, to, channel});
  }
}

// A group's hops within `node`, from the GPU that holds it: the root in its own node, the
// rail peer of local index `gateway` in the others. `turn`: the group's turn on the home
// channels (TreeShape::home_channels).
void node_hops(const TreeLayout& t, const PieceGroup& group, int turn, int gateway, int node,
               Route& route) {
  const int home = route.root / t.gpus;
  const int g = node == home ? route.root % t.gpus : gateway;
  const int gpus = t.gpus;
  if (group.from) {
    // A tree: each GPU from the one that sends to it, parents first.
    const std::vector<int>& order = *group.order;
    const std::vector<int>& from = *group.from;
    for (std::size_t i = 1; i < order.size(); ++i) {
      route.hops.push_back({t.rank(node, from[i] % gpus), t.rank(node, order[i] % gpus),
                            group.channel, node == home});
    }
  } else if (group.order) {
    // A ring from the origin round to the GPU before it; a path as it is.
    const std::vector<int>& order = *group.order;
    const auto start = std::find(order.begin(), order.end(), g) - order.begin();
    for (std::size_t i = 0; i + 1 < order.size(); ++i) {
      const int at = order[(static_cast<std::size_t>(start) + i) % order.size()] % gpus;
      const int to = order[(static_cast<std::size_t>(start) + i + 1) % order.size()] % gpus;
      route.hops.push_back({t.rank(node, at), t.rank(node, to), group.channel, node == home});
    }
  } else {
    // Split, the root's node on the first channels (on the first `home` of them in turn, where
    // set), every other node's on channels of its own after them, its pieces taking turns on
    // them. With forward channels, the roots' nodes take turns on those.
    const DirectChannels& c = t.channels;
    const int away = (node - home + t.nodes) % t.nodes;
    const bool relayed = node != home && gateway != route.root % gpus;
    const int channel =
        (c.split_by_node && away > 0 ? c.direct + (away - 1) * c.partial + group.piece % c.partial
         : c.forward > 1             ? away % c.forward
         : c.home > 0                ? turn % c.home
                                     : group.channel) +
        (relayed ? t.apart : 0);
    // Where the gateway's links within the node would take longer than its NIC, a piece that
    // crossed on its rail goes on first to the rail peer of its root, which spreads it as it
    // spreads its own rail's pieces (RailGateways::hand_on).
    int holder = g;
    if (relayed && t.hand_on) {
      holder = route.root % gpus;
      route.hops.push_back({t.rank(node, gateway), t.rank(node, holder), t.hand_on_channel, false});
    }
    std::vector<int> to;
    for (int d = 1; d < gpus; ++d) {
      if ((holder + d) % gpus != gateway || node == home) to.push_back((holder + d) % gpus);
    }
    if (node == home && gateway != g) {
      // The gateway first, so that it sends on across the network as soon as it can; backwards
      // its partial, which holds the network's, then reaches the root last, as the network's
      // own would (with partials first: first, Route::partials_first).
      std::erase(to, gateway);
      to.insert(route.partials_first ? to.end() : to.begin(), gateway);
    }
    for (const int peer : to) {
      route.hops.push_back({t.rank(node, holder), t.rank(node, peer), channel, node == home});
    }
  }
}

// Where a node's NICs are shared unevenly, the rail each group of every local origin crosses
// the network on (rail_gateways). Only where a node's hops may start at any GPU: directly, or
// along a ring (a path or tree is laid out from its own origin).
RailGateways tree_gateways(const predict::Topology& topology, Within within,
                           const std::vector<std::vector<PieceGroup>>& groups, double node_gbs) {
  if (topology.nodes() < 2 || within == Within::Paths) return {};
  std::vector<std::vector<int>> weights(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const PieceGroup& group : groups[g]) weights[g].push_back(group.count);
  }
  return rail_gateways(topology, weights, node_gbs);
}

// The channels a tree's relayed pieces take (TreeLayout::hand_on, apart), and the sketch's
// channels with them; `node_channels`: the channels of its hops within a node.
void place_relays(const RailGateways& gateways, ir::Collective collective, Within within,
                  int node_channels, TreeLayout& layout, Sketch& s) {
  layout.hand_on = gateways.hand_on;
  // The hand-on takes a channel of its own within the node (one the network's hops may share:
  // they join other GPUs): on the channel of the piece's other hops there, a threadblock between
  // the two GPUs takes it only after every piece it carries before it (the chains of the roots
  // listed first), and the gateway's NIC waits (reduce-scatter on two A100 nodes of five NICs:
  // 150 us of 590 with the NIC idle).
  layout.hand_on_channel = node_channels;
  const int after = node_channels + (gateways.hand_on ? 1 : 0);
  s.channels = std::max(s.channels, after);
  // Direct, a relayed piece's hops across the network and in the other nodes take channels of
  // their own, so that a gateway's NIC and its root's rail peer take the relayed pieces as they
  // come, not behind their own: on two A100 nodes of five NICs at 64 MB, allgather 96 % of the
  // bound against 93 %, reduce-scatter 93 % against 87 %. Not allreduce's, whose gather doubles
  // its channels: 78 % against 87 %.
  if (within == Within::Direct && collective != ir::Collective::AllReduce) {
    layout.apart = after;
    s.channels = std::max(s.channels, after + node_channels);
  }
}

}  // namespace

Sketch tree_sketch(const predict::Topology& topology, ir::Collective collective,
                   const NodePlan& plan, const TreeShape& shape) {
  const int nodes = topology.nodes();
  const int gpus = topology.gpus_per_node();
  Sketch s;
  s.collective = collective;
  s.ranks = topology.ranks();
  s.pieces = shape.pieces;
  Within within = shape.within;
  if (within == Within::Rings && plan.rings.empty()) within = Within::Direct;
  if (within == Within::Paths && static_cast<int>(plan.paths.size()) != gpus)
    within = Within::Direct;
  const OriginLanes lanes = origin_lanes(plan, within, shape, gpus);
  const DirectChannels c = direct_channels(shape, within, nodes);
  // The channels of the hops within a node; those across the network may take more.
  const int node_channels =
      within == Within::Direct
          ? (c.split_by_node ? c.direct + (nodes - 1) * c.partial : std::max(c.direct, c.forward))
          : static_cast<int>(lanes.count) * gpus;
  s.channels = std::max(node_channels, c.split_by_node ? 2 * c.network : 0);
  s.name = tree_name(plan, shape, within, lanes.count, c, nodes);
  // Unfused, the threadblock that takes a piece from the network takes the next one at once,
  // and others forward it within the node: allgather on two A100 nodes at 64 MB reaches 99 % of
  // the bound, against 94 % fused (reduce-scatter is the same either way).
  if (within == Within::Direct && c.direct < shape.pieces) s.fusion = false;
  TreeLayout layout{shape, c, nodes, gpus};
  std::vector<std::vector<PieceGroup>> groups(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) {
    groups[static_cast<std::size_t>(g)] = piece_groups(shape, within, lanes, c.direct, g, gpus);
  }
  const RailGateways gateways = tree_gateways(topology, within, groups, rings_width(plan));
  if (!gateways.of.empty()) {
    s.name += fmt::format("_nic{}", gateways.nics);
    place_relays(gateways, collective, within, node_channels, layout, s);
  }
  for (int root = 0; root < s.ranks; ++root) {
    const int g = root % gpus;
    const std::vector<PieceGroup>& mine = groups[static_cast<std::size_t>(g)];
    for (std::size_t ordinal = 0; ordinal < mine.size(); ++ordinal) {
      const PieceGroup& group = mine[ordinal];
      const int turn = static_cast<int>(ordinal);
      const int gateway =
          gateways.of.empty() ? g : gateways.of[static_cast<std::size_t>(g)][ordinal];
      Route route;
      route.root = root;
      route.piece = group.piece;
      route.count = group.count;
      route.partials_first = nodes > 1 && group.piece >= shape.pieces - shape.partials_first;
      const int home = root / gpus;
      // Through another GPU's rail, the root's node has the piece there first.
      if (gateway != g) node_hops(layout, group, turn, gateway, home, route);
      const std::size_t first_network = route.hops.size();
      network_hops(layout, group, turn, gateway, route);
      for (std::size_t h = first_network; gateway != g && layout.apart > 0 && h < route.hops.size();
           ++h) {
        // On the network's channels (TreeShape::network_channels), the other way's half, which
        // this GPU sends nothing on to that peer.
        int& channel = route.hops[h].channel;
        channel = c.network > 0 ? (channel + c.network) % (2 * c.network) : channel + layout.apart;
      }
      for (int node = 0; node < nodes; ++node) {
        if (gateway == g || node != home) node_hops(layout, group, turn, gateway, node, route);
      }
      s.routes.push_back(std::move(route));
    }
  }
  return s;
}

Sketch alltoall_sketch(const predict::Topology& topology, bool rails, int channels) {
  const int gpus = topology.gpus_per_node();
  Sketch s;
  s.collective = ir::Collective::AllToAll;
  s.ranks = topology.ranks();
  s.pieces = channels;
  s.channels = channels;
  s.name = fmt::format("synth_{}_c{}", rails ? "rails" : "direct", channels);
  // Along rails a piece crosses on the rail of its destination's local index, unless the node's
  // NICs are shared unevenly: then on the rail rail_gateways gives it (the pieces counted by the
  // rail they would take, in the order they are listed below).
  std::vector<std::vector<int>> weights(static_cast<std::size_t>(gpus));
  for (int src = 0; rails && src < gpus; ++src) {
    for (int d = 1; d < s.ranks; ++d) {
      const int dst = (src + d) % s.ranks;
      if (dst / gpus == 0) continue;
      for (int c = 0; c < channels; ++c) weights[static_cast<std::size_t>(dst % gpus)].push_back(1);
    }
  }
  const RailGateways gateways = rails ? rail_gateways(topology, weights) : RailGateways{};
  if (!gateways.of.empty()) s.name += fmt::format("_nic{}", gateways.nics);
  // Per piece of node 0's ranks (source, destination, channel), its rail; another node's piece
  // takes the rail of node 0's piece to the node as far on.
  const auto ranks = static_cast<std::size_t>(s.ranks);
  const auto per_pair = static_cast<std::size_t>(channels);
  std::vector<int> rail_of;
  if (!gateways.of.empty()) {
    rail_of.assign(static_cast<std::size_t>(gpus) * ranks * per_pair, -1);
    std::vector<std::size_t> taken(static_cast<std::size_t>(gpus), 0);
    for (int src = 0; src < gpus; ++src) {
      for (int d = 1; d < s.ranks; ++d) {
        const int dst = (src + d) % s.ranks;
        if (dst / gpus == 0) continue;
        const auto at = static_cast<std::size_t>(dst % gpus);
        for (std::size_t c = 0; c < per_pair; ++c) {
          rail_of[(static_cast<std::size_t>(src) * ranks + static_cast<std::size_t>(dst)) *
                      per_pair +
                  c] = gateways.of[at][taken[at]++];
        }
      }
    }
  }
  for (int src = 0; src < s.ranks; ++src) {
    for (int d = 1; d < s.ranks; ++d) {
      const int dst = (src + d) % s.ranks;
      for (int c = 0; c < channels; ++c) {
        Route route;
        route.root = src;
        route.piece = dst * channels + c;
        if (!rails || dst / gpus == src / gpus) {
          route.hops.push_back({src, dst, c});
          s.routes.push_back(std::move(route));
          continue;
        }
        // Node 0's pieces name the rails; every node's take the same ones (the nodes are copies).
        int rail = dst % gpus;
        if (!rail_of.empty()) {
          const int nodes = topology.nodes();
          const int away = (dst / gpus - src / gpus + nodes) % nodes;
          const auto at = static_cast<std::size_t>(src % gpus) * ranks +
                          static_cast<std::size_t>(away * gpus + dst % gpus);
          rail = rail_of[at * per_pair + static_cast<std::size_t>(c)];
        }
        int at = src;
        for (const int next : {(src / gpus) * gpus + rail, (dst / gpus) * gpus + rail, dst}) {
          if (next == at) continue;
          route.hops.push_back({at, next, c});
          at = next;
        }
        s.routes.push_back(std::move(route));
      }
    }
  }
  return s;
}

double busiest_link_load(const predict::Topology& topology, const Sketch& sketch) {
  const auto& links = topology.links();
  std::vector<double> load(links.size(), 0);
  const double per_piece = 1.0 / std::max(1, sketch.pieces);
  for (const Route& route : sketch.routes) {
    for (const Hop& hop : route.hops) {
      for (const int l : topology.route(hop.from, hop.to)) {
        load[static_cast<std::size_t>(l)] +=
            route.count * per_piece / links[static_cast<std::size_t>(l)].bandwidth_gbs;
      }
    }
  }
  return load.empty() ? 0 : *std::max_element(load.begin(), load.end());
}

Sketch alltoall_routed(const predict::Topology& topology, int channels, double relay_margin) {
  Sketch s;
  s.collective = ir::Collective::AllToAll;
  s.ranks = topology.ranks();
  s.pieces = channels;
  s.channels = channels;
  s.name = relay_margin > 0
               ? fmt::format("synth_routed_m{}_c{}",
                             static_cast<int>(std::lround(relay_margin * 100)), channels)
               : fmt::format("synth_routed_c{}", channels);
  const auto& links = topology.links();
  // Time each link is busy so far, per byte of a piece: a piece's path is the one whose busiest
  // link ends least busy, direct or through one relaying GPU of the source's or the
  // destination's node; ties go to the fewer hops.
  std::vector<double> busy(links.size(), 0);
  const int gpus = topology.gpus_per_node();
  auto finish = [&](int from, int to, double worst) {
    for (int l : topology.route(from, to)) {
      worst = std::max(worst, busy[static_cast<std::size_t>(l)] +
                                  1 / links[static_cast<std::size_t>(l)].bandwidth_gbs);
    }
    return worst;
  };
  auto take = [&](int from, int to) {
    for (int l : topology.route(from, to)) {
      busy[static_cast<std::size_t>(l)] += 1 / links[static_cast<std::size_t>(l)].bandwidth_gbs;
    }
  };
  for (int c = 0; c < channels; ++c) {
    for (int d = 1; d < s.ranks; ++d) {
      for (int src = 0; src < s.ranks; ++src) {
        const int dst = (src + d) % s.ranks;
        int relay = -1;
        double best = finish(src, dst, 0);
        for (const int node : {src / gpus, dst / gpus}) {
          for (int g = 0; g < gpus; ++g) {
            const int r = node * gpus + g;
            if (r == src || r == dst) continue;
            const double via = finish(r, dst, finish(src, r, 0));
            if (via < best * (1 - std::max(relay_margin, 1e-9))) {
              best = via;
              relay = r;
            }
          }
          if (src / gpus == dst / gpus) break;
        }
        Route route;
        route.root = src;
        route.piece = dst * channels + c;
        if (relay < 0) {
          take(src, dst);
          route.hops.push_back({src, dst, c});
        } else {
          take(src, relay);
          take(relay, dst);
          route.hops.push_back({src, relay, c});
          route.hops.push_back({relay, dst, c});
        }
        s.routes.push_back(std::move(route));
      }
    }
  }
  return s;
}

}  // namespace weft::synthesis
