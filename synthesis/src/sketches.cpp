#include "weft/synthesis/sketches.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace weft::synthesis {

namespace {

// Lanes over the rings, `lane_gbs` wide at most (0: one per ring), no more than `most`.
std::vector<Lane> lanes_of(const std::vector<NodeRing>& rings, double lane_gbs, int most) {
  std::vector<Lane> lanes;
  for (std::size_t i = 0; i < rings.size(); ++i) {
    const double w = rings[i].rate_gbs;
    const int copies = lane_gbs > 0 ? std::max(1, static_cast<int>(std::ceil(w / lane_gbs - 1e-9))) : 1;
    for (int c = 0; c < copies; ++c) lanes.push_back({static_cast<int>(i), w / copies, 0});
  }
  if (static_cast<int>(lanes.size()) <= most) return lanes;
  if (lane_gbs > 0 && static_cast<int>(rings.size()) <= most) {
    return lanes_of(rings, lane_gbs * 1.25, most);
  }
  // More rings than lanes allowed: the widest ones (pack_rings found them widest first).
  std::vector<Lane> kept;
  for (std::size_t i = 0; i < rings.size() && static_cast<int>(i) < most; ++i) {
    kept.push_back({static_cast<int>(i), rings[i].rate_gbs, 0});
  }
  return kept;
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

}  // namespace

std::vector<Lane> ring_lanes(const std::vector<NodeRing>& rings, double lane_gbs, int most,
                             int pieces) {
  std::vector<Lane> lanes = lanes_of(rings, lane_gbs, std::max(1, most));
  allocate(lanes, pieces);
  std::erase_if(lanes, [](const Lane& l) { return l.pieces == 0; });
  return lanes;
}

int lane_pieces(const std::vector<NodeRing>& rings, double lane_gbs, int most_lanes, int most) {
  std::vector<Lane> lanes = lanes_of(rings, lane_gbs, std::max(1, most_lanes));
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

Sketch tree_sketch(const predict::Topology& topology, ir::Collective collective,
                   const std::vector<NodeRing>& rings, const TreeShape& shape) {
  const int nodes = topology.nodes();
  const int gpus = topology.gpus_per_node();
  Sketch s;
  s.collective = collective;
  s.ranks = topology.ranks();
  s.pieces = shape.pieces;
  const bool use_rings = shape.within == Within::Rings && !rings.empty();
  const std::vector<Lane> lanes =
      use_rings ? ring_lanes(rings, shape.lane_gbs, shape.most_channels / gpus, shape.pieces)
                : std::vector<Lane>{};
  s.channels = use_rings ? static_cast<int>(lanes.size()) * gpus : shape.pieces;
  const std::string within =
      use_rings ? fmt::format("rings_l{}", lanes.size()) : std::string("direct");
  s.name = nodes > 1 ? fmt::format("synth_{}_{}_p{}",
                                   shape.across == Across::Direct ? "rails" : "chain", within,
                                   shape.pieces)
                     : fmt::format("synth_{}_p{}", within, shape.pieces);
  // Per lane: the local successor of every local index on its ring.
  std::vector<std::vector<int>> next;
  for (const Lane& lane : lanes) {
    const std::vector<int>& order = rings[static_cast<std::size_t>(lane.ring)].order;
    std::vector<int> succ(static_cast<std::size_t>(gpus), 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
      succ[static_cast<std::size_t>(order[i] % gpus)] = order[(i + 1) % order.size()] % gpus;
    }
    next.push_back(std::move(succ));
  }
  auto rank = [&](int node, int gpu) { return node * gpus + gpu; };
  // (first piece, count, channel, lane or -1) of every group of pieces that travels together.
  struct Group {
    int piece = 0;
    int count = 1;
    int lane = -1;
  };
  std::vector<Group> groups;
  if (use_rings) {
    int first = 0;
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      groups.push_back({first, lanes[l].pieces, static_cast<int>(l)});
      first += lanes[l].pieces;
    }
  } else {
    for (int j = 0; j < shape.pieces; ++j) groups.push_back({j, 1, -1});
  }
  for (int root = 0; root < s.ranks; ++root) {
    const int home = root / gpus;
    const int g = root % gpus;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const Group& group = groups[gi];
      const int channel = use_rings ? group.lane * gpus + g : static_cast<int>(gi);
      Route route;
      route.root = root;
      route.piece = group.piece;
      route.count = group.count;
      // Across the network, between rail peers.
      for (int d = 1; d < nodes; ++d) {
        const int from = shape.across == Across::Direct ? root : rank((home + d - 1) % nodes, g);
        route.hops.push_back({from, rank((home + d) % nodes, g), channel});
      }
      // Within every node, from the rail peer that holds it.
      for (int node = 0; node < nodes; ++node) {
        if (use_rings) {
          int at = g;
          for (int hop = 1; hop < gpus; ++hop) {
            const int to = next[static_cast<std::size_t>(group.lane)][static_cast<std::size_t>(at)];
            route.hops.push_back({rank(node, at), rank(node, to), channel});
            at = to;
          }
        } else {
          for (int d = 1; d < gpus; ++d) {
            route.hops.push_back({rank(node, g), rank(node, (g + d) % gpus), channel});
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

}  // namespace weft::synthesis
