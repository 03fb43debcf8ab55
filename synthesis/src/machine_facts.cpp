#include "weft/synthesis/machine_facts.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <set>
#include <span>

#include "weft/synthesis/paths.h"

namespace weft::synthesis {

std::vector<int> node0_ranks(const predict::Topology& topology) {
  std::vector<int> ranks(static_cast<std::size_t>(topology.gpus_per_node()));
  for (std::size_t g = 0; g < ranks.size(); ++g) ranks[g] = static_cast<int>(g);
  return ranks;
}

double rings_width(const NodePlan& plan) {
  double width = 0;
  for (const NodeRing& r : plan.rings) width += r.rate_gbs;
  return width;
}

bool paths_differ_from_rings(const NodePlan& plan) {
  if (plan.paths.empty()) return false;
  if (plan.rings.empty()) return true;
  const double width = rings_width(plan);
  const double rings_rate =
      width / static_cast<double>(std::max<std::size_t>(1, plan.paths.size() - 1));
  return std::abs(broadcast_rate(plan.paths) - rings_rate) > rings_rate * 1e-3;
}

bool paths_pay(const predict::Topology& topology, const NodePlan& plan) {
  return topology.nodes() == 1 || paths_differ_from_rings(plan);
}

double nic_gbs(const predict::Topology& topology) {
  double gbs = std::numeric_limits<double>::infinity();
  for (const int l : topology.route(0, topology.gpus_per_node())) {
    gbs = std::min(gbs, topology.links()[static_cast<std::size_t>(l)].bandwidth_gbs);
  }
  return gbs;
}

namespace {

// How long the rails' busiest link is busy when rail e carries `carried[e]` pieces (at 1 GB/s a
// piece).
double busiest_rail_link(const predict::Topology& topology,
                         const std::vector<std::span<const int>>& rails,
                         const std::vector<double>& carried) {
  const auto& links = topology.links();
  std::vector<double> busy(links.size(), 0);
  double most = 0;
  for (std::size_t e = 0; e < rails.size(); ++e) {
    for (const int l : rails[e]) {
      const auto at = static_cast<std::size_t>(l);
      busy[at] += carried[e] / links[at].bandwidth_gbs;
      most = std::max(most, busy[at]);
    }
  }
  return most;
}

// How many pieces each rail should carry: each next piece to the rail whose busiest link stays
// least busy, ties to the rail that carries least so far (GPUs that share a NIC share it alike;
// on an even machine every rail carries its own GPU's share).
std::vector<double> balanced_rail_pieces(const predict::Topology& topology,
                                         const std::vector<std::span<const int>>& rails,
                                         long long pieces) {
  const auto& links = topology.links();
  std::vector<double> busy(links.size(), 0);
  std::vector<double> carried(rails.size(), 0);
  for (long long p = 0; p < pieces; ++p) {
    std::size_t pick = 0;
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t e = 0; e < rails.size(); ++e) {
      double worst = 0;
      for (const int l : rails[e]) {
        const auto at = static_cast<std::size_t>(l);
        worst = std::max(worst, busy[at] + 1 / links[at].bandwidth_gbs);
      }
      const bool tie = std::isfinite(best) && std::abs(worst - best) <= 1e-9 * best;
      if (tie ? carried[e] < carried[pick] : worst < best) {
        best = std::min(best, worst);
        pick = e;
      }
    }
    carried[pick] += 1;
    for (const int l : rails[pick]) {
      const auto at = static_cast<std::size_t>(l);
      busy[at] += 1 / links[at].bandwidth_gbs;
    }
  }
  return carried;
}

}  // namespace

RailGateways rail_gateways(const predict::Topology& topology,
                           const std::vector<std::vector<int>>& weights, double node_gbs) {
  RailGateways out;
  const int gpus = topology.gpus_per_node();
  if (topology.nodes() < 2 || gpus < 2 || static_cast<int>(weights.size()) != gpus) return out;
  const auto& links = topology.links();
  // A GPU's rail: its route to its peer on the next node, both NICs and their PCIe on the way
  // (the nodes are copies, so every rail peer's route is the same).
  std::vector<std::span<const int>> rails(static_cast<std::size_t>(gpus));
  std::vector<int> nic(static_cast<std::size_t>(gpus), -1);
  for (int e = 0; e < gpus; ++e) {
    const auto at = static_cast<std::size_t>(e);
    rails[at] = topology.route(e, gpus + e);
    if (rails[at].empty()) return out;
    for (const int l : rails[at]) {
      const predict::Link& link = links[static_cast<std::size_t>(l)];
      if (!(link.bandwidth_gbs > 0)) return out;
      if (nic[at] < 0 && link.type == predict::LinkType::Network) nic[at] = link.from;
    }
  }
  std::vector<double> own(static_cast<std::size_t>(gpus), 0);
  long long pieces = 0;
  for (std::size_t g = 0; g < own.size(); ++g) {
    for (const int w : weights[g]) own[g] += w;
    pieces += static_cast<long long>(own[g]);
  }
  const std::vector<double> target = balanced_rail_pieces(topology, rails, pieces);
  if (busiest_rail_link(topology, rails, target) >=
      busiest_rail_link(topology, rails, own) * (1 - 1e-3)) {
    return out;
  }
  // Each origin keeps its own rail for its first pieces, as many as that rail's share allows,
  // and sends its last ones on the rails with the most room left. The compiler takes the relayed
  // pieces' longer chains first wherever they share a threadblock with others; spread among an
  // origin's pieces they then held up the ones after them (reduce-scatter on two A100 nodes of
  // five NICs at 64 MB: 78 % of the bound, against 93 % with the last ones relayed).
  std::vector<double> room(own.size(), 0);
  for (std::size_t e = 0; e < own.size(); ++e) room[e] = std::max(0.0, target[e] - own[e]);
  out.of.resize(own.size());
  std::set<int> nics;
  for (std::size_t g = 0; g < own.size(); ++g) {
    const double keep = std::min(target[g], own[g]);
    double kept = 0;
    for (const int w : weights[g]) {
      int gateway = static_cast<int>(g);
      if (kept + w > keep + 1e-9) {
        const auto most = std::max_element(room.begin(), room.end());
        gateway = static_cast<int>(most - room.begin());
        *most -= w;
      } else {
        kept += w;
      }
      out.of[g].push_back(gateway);
      nics.insert(nic[static_cast<std::size_t>(gateway)]);
    }
  }
  // A gateway that spread every piece it takes from the network over its node would send
  // (G - 1) × (its own pieces and those) over its links there while its NIC takes them.
  const double nic_busy = busiest_rail_link(topology, rails, target);
  for (std::size_t e = 0; e < own.size(); ++e) {
    out.hand_on = out.hand_on || !(node_gbs > 0) ||
                  (gpus - 1) * (own[e] + target[e]) / node_gbs > nic_busy * (1 + 1e-9);
  }
  out.nics = static_cast<int>(nics.size());
  return out;
}

bool nics_uneven(const predict::Topology& topology) {
  const std::vector<std::vector<int>> eight(static_cast<std::size_t>(topology.gpus_per_node()),
                                            std::vector<int>(8, 1));
  return !rail_gateways(topology, eight).of.empty();
}

bool node_links_bind(const predict::Topology& topology, double node_gbs) {
  const int gpus = topology.gpus_per_node();
  const int nodes = topology.nodes();
  if (nodes < 2 || gpus < 2 || !(node_gbs > 0)) return false;
  return (gpus - 1) / node_gbs > (nodes - 1) / (nodes * nic_gbs(topology));
}

double nic_share_of_links(const predict::Topology& topology, double node_gbs) {
  return (topology.gpus_per_node() - 1) * nic_gbs(topology) / node_gbs;
}

int home_channels(const predict::Topology& topology, double node_gbs, int direct) {
  const double need = nic_share_of_links(topology, node_gbs);
  if (!(need > 0) || need >= 1) return direct;
  const double others = static_cast<double>(topology.nodes() - 1) * direct;
  return std::clamp(static_cast<int>(std::floor(others * (1 - need) / need)), 1, direct);
}

int pieces_within(int pieces, int most, long long ranks, long long budget) {
  while (pieces * 2 <= most && ranks * ranks * pieces * 2 <= budget) pieces *= 2;
  return pieces;
}

bool twins_pay(const predict::Topology& topology, int pieces) {
  const long long ranks = topology.ranks();
  return ranks * ranks * 2 * pieces <= (1 << 18);
}

double channel_gbs(const predict::Topology& topology) {
  return topology.costs().protocol(ir::Protocol::Simple).threadblock_bandwidth_gbs;
}

int sketch_channels(ir::Collective collective, int most_channels) {
  return collective == ir::Collective::AllReduce ? std::max(1, most_channels / 2) : most_channels;
}

int most_lanes(const predict::Topology& topology, int channels) {
  return std::max(1, channels / topology.gpus_per_node());
}

double ring_lane_gbs(const predict::Topology& topology) {
  return channel_gbs(topology) * topology.gpus_per_node() / 4;
}

int path_lanes(const predict::Topology& topology, int channels) {
  const int most = most_lanes(topology, channels);
  int lanes = 1;
  while (lanes * 2 <= most) lanes *= 2;
  return lanes;
}

int direct_pieces(const predict::Topology& topology, const NodePlan& plan, int channels) {
  const double width = rings_width(plan);
  const double gbs = channel_gbs(topology);
  const int gpus = topology.gpus_per_node();
  int direct = 1;
  while (direct * gbs * (gpus - 1) / 2 < width && direct * 2 <= channels) direct *= 2;
  return direct;
}

long long hop_budget(ir::Collective collective) {
  return collective == ir::Collective::AllReduce ? 1 << 16 : 1 << 18;
}

int pipelined_pieces(const predict::Topology& topology, ir::Collective collective) {
  const long long ranks = topology.ranks();
  return static_cast<int>(std::min<long long>(64, hop_budget(collective) / (ranks * ranks)));
}

int split_channels(const predict::Topology& topology, int direct) {
  int channels = std::max(1, direct / 2);
  while (channels > 1 && channels * topology.nodes() > 8) channels /= 2;
  return channels;
}

int alltoall_channels(const predict::Topology& topology) {
  const int gpus = topology.gpus_per_node();
  double egress = 0;
  for (const predict::Link& l : topology.links()) {
    if (l.type != predict::LinkType::Memory &&
        topology.vertices()[static_cast<std::size_t>(l.from)].rank == 0) {
      egress += l.bandwidth_gbs;
    }
  }
  const double gbs = channel_gbs(topology);
  int wide = 2;
  while (wide < 16 && wide * gbs * std::max(1, gpus - 1) / 2 < egress) wide *= 2;
  return wide;
}

}  // namespace weft::synthesis
