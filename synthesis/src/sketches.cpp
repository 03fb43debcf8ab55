#include "weft/synthesis/sketches.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  const int most_lanes = std::max(1, shape.most_channels / gpus);
  // Per local origin: the orders its lanes follow (ranks of node 0) and the lanes.
  std::vector<std::vector<const std::vector<int>*>> orders(static_cast<std::size_t>(gpus));
  // And, where a lane follows a tree (pack_trees), its senders; null for rings and paths.
  std::vector<std::vector<const std::vector<int>*>> senders(static_cast<std::size_t>(gpus));
  std::vector<std::vector<Lane>> lanes(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus && within != Within::Direct; ++g) {
    auto& mine = lanes[static_cast<std::size_t>(g)];
    if (within == Within::Rings) {
      mine = ring_lanes(widths_of(plan.rings), shape.lane_gbs, most_lanes, shape.pieces);
      for (const Lane& l : mine) {
        orders[static_cast<std::size_t>(g)].push_back(
            &plan.rings[static_cast<std::size_t>(l.ring)].order);
        senders[static_cast<std::size_t>(g)].push_back(nullptr);
      }
    } else {
      const auto& paths = plan.paths[static_cast<std::size_t>(g)];
      mine = ring_lanes(widths_of(paths), shape.lane_gbs, most_lanes, shape.pieces);
      for (const Lane& l : mine) {
        const BroadcastPath& path = paths[static_cast<std::size_t>(l.ring)];
        orders[static_cast<std::size_t>(g)].push_back(&path.order);
        senders[static_cast<std::size_t>(g)].push_back(path.from.empty() ? nullptr : &path.from);
      }
    }
  }
  std::size_t lane_count = 0;
  for (const auto& mine : lanes) lane_count = std::max(lane_count, mine.size());
  // Run backwards, a direct tree's GPU reduces what its node's GPUs send it, for every root, and
  // one threadblock per channel and peer would take those pieces one after another: the piece
  // it then sends across the network held up the pieces of the other nodes' roots behind it.
  // Split, within a node each node's roots (counted from the root's own) get channels of their
  // own (TreeShape::split_by_node).
  const int direct_channels =
      shape.direct_channels > 0 ? std::min(shape.direct_channels, shape.pieces) : shape.pieces;
  // Split, the chains of the other nodes' roots each take `partial_channels`.
  const int partial_channels = direct_channels * std::max(1, shape.partial_chain_channels);
  const bool split_by_node =
      shape.split_by_node && within == Within::Direct && nodes > 1 &&
      direct_channels + (nodes - 1) * partial_channels <= shape.most_channels;
  const int forward_channels = within == Within::Direct && !split_by_node && nodes > 1
                                   ? std::max(1, shape.forward_channels)
                                   : 1;
  const int home_channels =
      split_by_node && shape.home_channels > 0 ? std::min(shape.home_channels, direct_channels) : 0;
  const int network_channels = split_by_node && shape.network_channels > 0
                                   ? std::min(shape.network_channels, shape.most_channels / 2)
                                   : 0;
  s.channels = within == Within::Direct
                   ? (split_by_node ? std::max(direct_channels + (nodes - 1) * partial_channels,
                                               2 * network_channels)
                                    : std::max(direct_channels, forward_channels))
                   : static_cast<int>(lane_count) * gpus;
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
  s.name = nodes > 1 ? fmt::format("synth_{}_{}{}_p{}",
                                   shape.across == Across::Direct ? "rails" : "chain", how,
                                   split_by_node ? "_split" : "", shape.pieces)
                     : fmt::format("synth_{}_p{}", how, shape.pieces);
  if (split_by_node && partial_channels > direct_channels) s.name += "_lead";
  if (forward_channels > 1) s.name += fmt::format("_f{}", forward_channels);
  if (nodes > 1 && shape.partials_first > 0) s.name += "_pfirst";
  if (within == Within::Direct && !shape.groups.empty()) {
    // Runs of three or more as COUNTxRUN: a file's name stays short (_g1x16_2x248).
    std::vector<std::string> runs;
    for (std::size_t k = 0; k < shape.groups.size();) {
      std::size_t end = k;
      while (end < shape.groups.size() && shape.groups[end] == shape.groups[k]) ++end;
      if (end - k >= 3) {
        runs.push_back(fmt::format("{}x{}", shape.groups[k], end - k));
      } else {
        for (std::size_t j = k; j < end; ++j) runs.push_back(std::to_string(shape.groups[j]));
      }
      k = end;
    }
    s.name += fmt::format("_g{}", fmt::join(runs, "_"));
  }
  if (home_channels > 0) s.name += fmt::format("_h{}", home_channels);
  if (network_channels > 0) s.name += fmt::format("_n{}", network_channels);
  if (within == Within::Direct && direct_channels < shape.pieces) {
    s.name += fmt::format("_c{}", direct_channels);
    // Unfused, the threadblock that takes a piece from the network takes the next one at once,
    // and others forward it within the node: allgather on two A100 nodes at 64 MB reaches 99 %
    // of the bound, against 94 % fused (reduce-scatter is the same either way).
    s.fusion = false;
  }
  auto rank = [&](int node, int gpu) { return node * gpus + gpu; };
  for (int root = 0; root < s.ranks; ++root) {
    const int home = root / gpus;
    const int g = root % gpus;
    // (first piece, count, channel, order or none) of every group of pieces travelling together.
    struct Group {
      int piece = 0;
      int count = 1;
      int channel = 0;
      const std::vector<int>* order = nullptr;
      const std::vector<int>* from = nullptr;  // a tree's senders (NodePlan::paths)
    };
    std::vector<Group> groups;
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
      int first = 0;
      const auto& mine = lanes[static_cast<std::size_t>(g)];
      for (std::size_t l = 0; l < mine.size(); ++l) {
        groups.push_back({first, mine[l].pieces, static_cast<int>(l) * gpus + g,
                          orders[static_cast<std::size_t>(g)][l],
                          senders[static_cast<std::size_t>(g)][l]});
        first += mine[l].pieces;
      }
    }
    for (std::size_t ordinal = 0; ordinal < groups.size(); ++ordinal) {
      const Group& group = groups[ordinal];
      // The group's turn on the home and network channels (TreeShape::home_channels,
      // network_channels).
      const int turn = static_cast<int>(ordinal);
      Route route;
      route.root = root;
      route.piece = group.piece;
      route.count = group.count;
      route.partials_first = nodes > 1 && group.piece >= shape.pieces - shape.partials_first;
      // Across the network, between rail peers.
      for (int d = 1; d < nodes; ++d) {
        const int from = shape.across == Across::Direct ? root : rank((home + d - 1) % nodes, g);
        const int to = rank((home + d) % nodes, g);
        // Split, the two ways between two nodes get channels of their own: one threadblock
        // would otherwise send this node's partial and take the other's in turn, and leave the
        // NIC one way idle while it works the other.
        const bool back = split_by_node && from / gpus > to / gpus;
        const int channel = network_channels > 0
                                ? turn % network_channels + (back ? network_channels : 0)
                                : group.channel + (back ? direct_channels : 0);
        route.hops.push_back({from, to, channel});
      }
      // Within every node, from the rail peer that holds it.
      for (int node = 0; node < nodes; ++node) {
        if (group.from) {
          // A tree: each GPU from the one that sends to it, parents first.
          const std::vector<int>& order = *group.order;
          const std::vector<int>& from = *group.from;
          for (std::size_t i = 1; i < order.size(); ++i) {
            route.hops.push_back({rank(node, from[i] % gpus), rank(node, order[i] % gpus),
                                  group.channel, node == home});
          }
        } else if (group.order) {
          // A ring from the origin round to the GPU before it; a path as it is.
          const std::vector<int>& order = *group.order;
          const auto start = std::find(order.begin(), order.end(), g) - order.begin();
          for (std::size_t i = 0; i + 1 < order.size(); ++i) {
            const int at = order[(static_cast<std::size_t>(start) + i) % order.size()] % gpus;
            const int to = order[(static_cast<std::size_t>(start) + i + 1) % order.size()] % gpus;
            route.hops.push_back({rank(node, at), rank(node, to), group.channel, node == home});
          }
        } else {
          // Split, the root's node on the first channels (on the first `home_channels` of
          // them in turn, where set), every other node's on channels of its own after them, its
          // pieces taking turns on them. With forward channels, the roots' nodes take turns on
          // those.
          const int away = (node - home + nodes) % nodes;
          const int channel =
              split_by_node && away > 0
                  ? direct_channels + (away - 1) * partial_channels + group.piece % partial_channels
              : forward_channels > 1 ? away % forward_channels
              : home_channels > 0    ? turn % home_channels
                                     : group.channel;
          for (int d = 1; d < gpus; ++d) {
            route.hops.push_back(
                {rank(node, g), rank(node, (g + d) % gpus), channel, node == home});
          }
        }
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
  for (int src = 0; src < s.ranks; ++src) {
    for (int d = 1; d < s.ranks; ++d) {
      const int dst = (src + d) % s.ranks;
      for (int c = 0; c < channels; ++c) {
        Route route;
        route.root = src;
        route.piece = dst * channels + c;
        const int gateway = (src / gpus) * gpus + dst % gpus;
        if (rails && dst / gpus != src / gpus && gateway != src) {
          route.hops.push_back({src, gateway, c});
          route.hops.push_back({gateway, dst, c});
        } else {
          route.hops.push_back({src, dst, c});
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
