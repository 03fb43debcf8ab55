#include "weft/synthesis/machine_facts.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

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
