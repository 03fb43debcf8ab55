// NCCL's tuning model on a Weft topology. The figures are in nccl_tables.h; the search
// approximation is described in nccl_model.h.
#include "weft/predict/nccl_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <span>

#include "nccl_tables.h"

namespace weft::predict {
namespace {

bool links_cpus(const Topology& t, const Link& link) {
  return t.vertices()[static_cast<std::size_t>(link.from)].kind == VertexKind::Cpu &&
         t.vertices()[static_cast<std::size_t>(link.to)].kind == VertexKind::Cpu;
}

// A link at NCCL's figure (nccl_tables.h), from its line rate: NCCL's figures are its own
// (Weft's achievable shares do not enter NCCL's model). Inter-socket links already hold NCCL's
// figure.
double nccl_bandwidth(const Topology& t, const Link& link) {
  switch (link.type) {
    case LinkType::NVLink: {
      const int sm = t.machine().gpu_sm > 0 ? t.machine().gpu_sm : 80;
      return link.line_rate_gbs / 25.0 * nccl::nvlink_link_bw(sm);
    }
    case LinkType::PCIe:
      return links_cpus(t, link) ? link.line_rate_gbs
                                 : link.line_rate_gbs * nccl::kPciShareOfLineRate;
    case LinkType::Network:
      return link.line_rate_gbs;
    case LinkType::Memory:
      break;
  }
  return std::numeric_limits<double>::infinity();
}

double bottleneck(const Topology& t, std::span<const int> route) {
  double least = std::numeric_limits<double>::infinity();
  for (int l : route)
    least = std::min(least, nccl_bandwidth(t, t.links()[static_cast<std::size_t>(l)]));
  return least;
}

// The uses of each link by one channel, and the channels a speed admits.
struct ChannelLoad {
  std::map<int, double> uses;        // link -> uses per channel
  std::vector<double> nic_capacity;  // multi-node: per NIC used, the best GPU-to-network path

  int channels_at(const Topology& t, double speed) const {
    double fit = nccl::kMaxRingChannels;
    for (const auto& [link, n] : uses) {
      const double bw = nccl_bandwidth(t, t.links()[static_cast<std::size_t>(link)]);
      fit = std::min(fit, std::floor(bw / (speed * n) + 1e-9));
    }
    if (!nic_capacity.empty()) {
      double through_nics = 0;
      for (double c : nic_capacity) through_nics += std::floor(c / speed + 1e-9);
      fit = std::min(fit, through_nics);
    }
    return static_cast<int>(std::max(0.0, fit));
  }
};

}  // namespace

NcclGraph nccl_ring_graph(const Topology& t) {
  NcclGraph g;
  const int gpn = t.gpus_per_node();
  const int nodes = t.nodes();
  if (t.ranks() < 2 || t.machine().emulated_ranks > 0) return g;
  const int sm = t.machine().gpu_sm > 0 ? t.machine().gpu_sm : 80;

  // The ring within node 0, local rank order; across nodes each hop is used by (g-1) of every g
  // channels, since each channel starts and ends at a different GPU.
  ChannelLoad load;
  bool all_nvlink = true;
  const double share = nodes > 1 ? (gpn - 1.0) / gpn : 1.0;
  if (gpn > 1) {
    for (int r = 0; r < gpn; ++r) {
      const auto route = t.route(r, (r + 1) % gpn);
      for (int l : route) {
        load.uses[l] += share;
        if (t.links()[static_cast<std::size_t>(l)].type != LinkType::NVLink) all_nvlink = false;
      }
    }
  }
  g.intra_type = all_nvlink ? LinkType::NVLink : LinkType::PCIe;

  // Fastest path: between GPUs of a node, or from a GPU to the network.
  bool nic_through_cpu = false;
  if (nodes == 1) {
    for (int a = 0; a < gpn; ++a) {
      for (int b = 0; b < gpn; ++b) {
        if (a != b) g.max_bw = std::max(g.max_bw, bottleneck(t, t.route(a, b)));
      }
    }
  } else {
    std::map<int, double> per_nic;  // first network link of the route -> best path to it
    for (int r = 0; r < gpn; ++r) {
      const auto route = t.route(r, gpn + r);
      std::size_t k = 0;
      while (k < route.size() &&
             t.links()[static_cast<std::size_t>(route[k])].type != LinkType::Network) {
        const Link& link = t.links()[static_cast<std::size_t>(route[k])];
        if (t.vertices()[static_cast<std::size_t>(link.to)].kind == VertexKind::Cpu) {
          nic_through_cpu = true;
        }
        ++k;
      }
      const double path = bottleneck(t, route.subspan(0, std::min(k + 1, route.size())));
      if (k < route.size()) per_nic[route[k]] = std::max(per_nic[route[k]], path);
      g.max_bw = std::max(g.max_bw, path);
    }
    for (const auto& [nic, capacity] : per_nic) load.nic_capacity.push_back(capacity);
  }
  for (int r = 0; r < gpn; ++r) {
    double nvlink = 0, pci = 0;
    for (const Link& link : t.links()) {
      const Vertex& from = t.vertices()[static_cast<std::size_t>(link.from)];
      if (from.rank != r || link.from == link.to) continue;
      if (link.type == LinkType::NVLink) nvlink += nccl_bandwidth(t, link);
      if (link.type == LinkType::PCIe) pci = std::max(pci, nccl_bandwidth(t, link));
    }
    g.total_bw = std::max(g.total_bw, std::max(nvlink, pci));
  }

  std::span<const double> speeds = nodes == 1
                                       ? (sm >= 90 ? std::span<const double>(nccl::kSpeedIntraSm90)
                                                   : std::span<const double>(nccl::kSpeedIntra))
                                       : (sm >= 90 ? std::span<const double>(nccl::kSpeedInterSm90)
                                                   : std::span<const double>(nccl::kSpeedInter));
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (speeds[i] > g.max_bw || speeds[i] > g.total_bw)) ++i;
  int best_n = 0;
  double best_s = 0;
  for (;; ++i) {
    const int n = load.channels_at(t, speeds[i]);
    if (n > 0 && n * speeds[i] > best_n * best_s + 1e-9) {
      best_n = n;
      best_s = speeds[i];
    }
    if (best_n > 0 && (best_n * best_s >= g.total_bw || best_n == nccl::kMaxRingChannels)) break;
    if (i + 1 >= speeds.size()) break;
    if (best_n > 0 && speeds[i + 1] / best_s <= 0.49) break;
  }
  if (best_n == 0) {
    // search.cc's fallback: one channel in rank order at whatever the slowest link allows.
    g.channels = 1;
    g.speed_gbs = std::min(g.max_bw, speeds.back());
  } else {
    // ncclTopoDupChannels, then pass 2 of the search.
    const bool dup = best_s >= 25.0 && !(sm > 80 && best_s < 50.0 && best_n > 4);
    if (dup) {
      const int doubled = std::min(2 * best_n, nccl::kMaxRingChannels);
      best_s /= (doubled + best_n - 1) / best_n;
      best_n = doubled;
    }
    std::size_t k = 0;
    while (k < speeds.size() && speeds[k] > best_s) ++k;
    while (k > 0 && load.channels_at(t, speeds[k - 1]) >= best_n) best_s = speeds[--k];
    g.channels = best_n;
    g.speed_gbs = best_s;
  }
  // tuning.cc: LL128 by default only within NVLink and, across nodes, with the NIC reached
  // without crossing a CPU (PATH_PXB or better; PXN on Hopper, still without a CPU).
  g.ll128 = g.intra_type == LinkType::NVLink && (nodes == 1 || !nic_through_cpu);
  return g;
}

double bus_bandwidth_factor(ir::Collective collective, int ranks) {
  const double n = ranks;
  switch (collective) {
    case ir::Collective::AllReduce:
      return 2 * (n - 1) / n;
    case ir::Collective::AllGather:
    case ir::Collective::ReduceScatter:
    case ir::Collective::AllToAll:
      return (n - 1) / n;
    default:
      return 1;
  }
}

std::vector<NcclPrediction> predict_nccl(const Topology& t, ir::Collective collective,
                                         std::uint64_t bytes) {
  std::vector<NcclPrediction> out;
  const bool ring_collective =
      collective == ir::Collective::AllReduce || collective == ir::Collective::AllGather ||
      collective == ir::Collective::ReduceScatter || collective == ir::Collective::Broadcast ||
      collective == ir::Collective::Reduce;
  if (!ring_collective || t.ranks() < 2 || t.machine().emulated_ranks > 0) return out;
  const NcclGraph graph = nccl_ring_graph(t);
  const int nranks = t.ranks();
  const int nodes = t.nodes();
  const int ppn = t.gpus_per_node();
  const int sm = t.machine().gpu_sm > 0 ? t.machine().gpu_sm : 80;
  const std::size_t gen = nccl::generation(sm);
  const std::size_t column = nodes <= 2 ? static_cast<std::size_t>(nodes - 1) : 2;
  const std::size_t ll_row = nodes == 1 ? gen : (t.machine().cpu_vendor == CpuVendor::Amd ? 1 : 0);
  const double ll_max_bw = nccl::kLlMaxBw[ll_row][column];
  const bool allreduce = collective == ir::Collective::AllReduce;
  const int nsteps =
      allreduce ? 2 * (nranks - 1)
      : (collective == ir::Collective::AllGather || collective == ir::Collective::ReduceScatter)
          ? nranks - 1
          : nranks;
  const int inter_steps = nodes == 1 ? 0 : allreduce ? 2 * (nodes - 1) : nodes - 1;
  const std::size_t intra_hw =
      graph.intra_type == LinkType::NVLink ? nccl::kHwNvlink : nccl::kHwPci;
  const double net_overhead =
      t.machine().cpu_vendor == CpuVendor::Amd ? nccl::kNetOverheadAmd : nccl::kNetOverheadIntel;
  // The NIC's own latency (the XML's `latency`), NCCL's graph latencyInter.
  double latency_inter = 0;
  for (const Link& link : t.links()) {
    if (link.type == LinkType::Network) latency_inter = std::max(latency_inter, link.latency_us);
  }
  int log_size = -1;  // NCCL's log2i(bytes >> 6)
  for (std::uint64_t v = bytes >> 6; v > 0; v >>= 1) ++log_size;

  const double nch = graph.channels;
  for (std::size_t a : {nccl::kTree, nccl::kRing}) {
    if (a == nccl::kTree && !allreduce) continue;
    for (ir::Protocol proto : {ir::Protocol::LL, ir::Protocol::LL128, ir::Protocol::Simple}) {
      const std::size_t p = nccl::nccl_protocol(proto);
      if (p == nccl::kLL128 && !graph.ll128) continue;
      double bus = nch * graph.speed_gbs;
      if (a == nccl::kRing && p == nccl::kLL) bus = std::min(ll_max_bw, bus * nccl::kRingLLFactor);
      if (a == nccl::kRing && p == nccl::kLL128) {
        bus = std::min(bus * nccl::kRingLL128Factor, nch * nccl::kPerChMaxRingLL128Bw[gen][column]);
      }
      if (a == nccl::kTree)
        bus = std::min(bus * nccl::kTreeFactor, nch * nccl::kPerChMaxTreeBw[gen][column]);
      if (a == nccl::kTree && p == nccl::kLL) bus = std::min(bus * nccl::kTreeLLFactor, ll_max_bw);
      if (a == nccl::kTree && p == nccl::kLL128) {
        bus = std::min(
            bus * (nodes == 1 ? nccl::kTreeLL128FactorOneNode : nccl::kTreeLL128FactorNodes),
            nch * nccl::kPerChMaxTreeLL128Bw[gen][column]);
      }
      double algbw = bus * (a == nccl::kRing ? static_cast<double>(nranks) / nsteps : 0.5);

      double lat = nccl::kBaseLatency[a][p];
      double intra_lat = nccl::kHwLatency[intra_hw][a][p];
      double inter_lat = (ppn == 1 ? nccl::kHwLatency[nccl::kHwNet][nccl::kTree][p]
                                   : nccl::kHwLatency[nccl::kHwNet][a][p]) +
                         latency_inter * (p == nccl::kSimple ? 2 : 1);
      if (a == nccl::kRing) {
        if (collective == ir::Collective::Broadcast || collective == ir::Collective::Reduce) {
          // NCCL's sameChannels case: the search found its channels on identical rings.
          lat += nccl::kHwLatency[nodes == 1 ? intra_hw : nccl::kHwNet][a][p];
        } else {
          if (nodes > 1)
            intra_lat = std::max(intra_lat, net_overhead * (p == nccl::kSimple ? 3 : 1));
          lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
        }
      } else {
        int log_nodes = 0;
        for (int v = nodes; v > 1; v >>= 1) ++log_nodes;
        lat += 2 * ((ppn - 1) * intra_lat + log_nodes * inter_lat);
      }
      // ncclTopoGetAlgoTime's corrections.
      if (a == nccl::kTree && log_size < 23) {
        algbw *= nccl::kTreeCorrection[p][static_cast<std::size_t>(std::max(0, log_size))];
      }
      if (a == nccl::kRing && p == nccl::kSimple && nodes > 1 && allreduce &&
          static_cast<double>(bytes) / (nch * nranks) >= 64) {
        lat *= sm < 80 ? nccl::kRingPlateauVolta : nccl::kRingPlateau;
      }
      NcclPrediction pred;
      pred.algorithm = a == nccl::kRing ? "Ring" : "Tree";
      pred.protocol = proto;
      pred.channels = graph.channels;
      pred.latency_us = lat;
      pred.algbw_gbs = algbw;
      pred.time_us = lat + static_cast<double>(bytes) / (1000.0 * algbw);
      out.push_back(pred);
    }
  }
  return out;
}

std::optional<NcclPrediction> best_nccl(const Topology& t, ir::Collective collective,
                                        std::uint64_t bytes) {
  const auto all = predict_nccl(t, collective, bytes);
  if (all.empty()) return std::nullopt;
  return *std::min_element(all.begin(), all.end(),
                           [](const auto& x, const auto& y) { return x.time_us < y.time_us; });
}

}  // namespace weft::predict
