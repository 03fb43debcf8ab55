// From one machine's description to a Topology: copies per node, a network switch between their
// NICs, memory links, and every rank pair's route.
//
// Link layout (what route indices mean): node n's links start at n * per_node, first one memory
// link per GPU, then each machine link as two directed links (a->b at 2k, b->a at 2k + 1). After
// every node come the network links, two per NIC (NIC->switch, switch->NIC). In one-GPU emulation
// there is a single link, the shared memory link.
#include "weft/predict/topology_builder.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "weft/predict/cost_parameters.h"

namespace weft::predict {

int MachineDescription::add_vertex(VertexKind kind, std::string vertex_name) {
  vertices.push_back({kind, std::move(vertex_name)});
  const int index = static_cast<int>(vertices.size()) - 1;
  if (kind == VertexKind::Gpu) gpus.push_back(index);
  if (kind == VertexKind::Nic) nics.push_back(index);
  return index;
}

void MachineDescription::add_link(int a, int b, LinkType type, double bandwidth_gbs,
                                  double latency_us) {
  links.push_back({a, b, type, bandwidth_gbs, latency_us});
}

Diagnostics check_request(const MachineDescription& machine, const TopologyRequest& request,
                          const std::string& where) {
  Diagnostics out;
  const int gpus = static_cast<int>(machine.gpus.size());
  if (request.nodes < 1) {
    out.error(where, 0, "", fmt::format("--nodes is {}; it must be at least 1", request.nodes));
  }
  if (request.gpus_per_node < 0) {
    out.error(where, 0, "",
              fmt::format("--gpus-per-node is {}; it must be at least 1", request.gpus_per_node));
  }
  // Routes are kept for every rank pair: 4 M pairs at the limit, about 100 MB.
  const long long ranks = static_cast<long long>(std::max(request.nodes, 1)) *
                          (request.gpus_per_node > 0 ? request.gpus_per_node : gpus);
  if (ranks > kMaxRanks) {
    out.error(where, 0, "",
              fmt::format("{} ranks asked for; a topology has at most {}", ranks, kMaxRanks));
  }
  if (machine.emulated) {
    if (request.gpus_per_node < 2) {
      out.error(where, 0, "",
                "emulated runs N ranks on one GPU: give the rank count with --gpus-per-node N "
                "(or --ranks N), at least 2");
    }
    if (request.nodes > 1) {
      out.error(where, 0, "", "emulated is one GPU in one machine: --nodes must be 1");
    }
    return out;
  }
  if (gpus == 0) out.error(where, 0, "", "the machine has no GPUs");
  if (request.gpus_per_node > gpus && gpus > 0) {
    out.error(where, 0, "",
              fmt::format("--gpus-per-node asks for {} GPUs but {} has {}", request.gpus_per_node,
                          machine.name, gpus));
  }
  if (request.nodes > 1 && machine.nics.empty()) {
    out.error(where, 0, "",
              fmt::format("--nodes {} needs NICs to join the machines, and {} has none",
                          request.nodes, machine.name));
  }
  return out;
}

namespace {

// The machine restricted to its first `keep` GPUs: the others and their links go, so that no
// vertex of the topology is a GPU without a rank.
MachineDescription first_gpus(const MachineDescription& machine, int keep) {
  if (keep >= static_cast<int>(machine.gpus.size())) return machine;
  std::vector<bool> dropped(machine.vertices.size(), false);
  for (auto k = static_cast<std::size_t>(keep); k < machine.gpus.size(); ++k) {
    dropped[static_cast<std::size_t>(machine.gpus[k])] = true;
  }
  MachineDescription out;
  out.name = machine.name;
  out.memory_bandwidth_gbs = machine.memory_bandwidth_gbs;
  out.nic_latency_us = machine.nic_latency_us;
  out.info = machine.info;
  out.assumptions = machine.assumptions;
  std::vector<int> remap(machine.vertices.size(), -1);
  for (std::size_t v = 0; v < machine.vertices.size(); ++v) {
    if (dropped[v]) continue;
    remap[v] = out.add_vertex(machine.vertices[v].kind, machine.vertices[v].name);
  }
  // add_vertex listed GPUs and NICs in vertex order; keep the machine's own order instead.
  out.gpus.clear();
  out.nics.clear();
  for (int g : machine.gpus) {
    if (remap[static_cast<std::size_t>(g)] >= 0)
      out.gpus.push_back(remap[static_cast<std::size_t>(g)]);
  }
  for (int n : machine.nics) out.nics.push_back(remap[static_cast<std::size_t>(n)]);
  for (const MachineLink& link : machine.links) {
    const int a = remap[static_cast<std::size_t>(link.a)];
    const int b = remap[static_cast<std::size_t>(link.b)];
    if (a >= 0 && b >= 0) out.add_link(a, b, link.type, link.bandwidth_gbs, link.latency_us);
  }
  return out;
}

// Within one machine: directed link 2k is links[k] a->b, 2k + 1 is b->a.
struct LocalGraph {
  const MachineDescription& machine;
  std::vector<std::vector<int>> out_links;  // per vertex, directed local link indices

  explicit LocalGraph(const MachineDescription& m) : machine(m), out_links(m.vertices.size()) {
    for (std::size_t k = 0; k < m.links.size(); ++k) {
      out_links[static_cast<std::size_t>(m.links[k].a)].push_back(static_cast<int>(2 * k));
      out_links[static_cast<std::size_t>(m.links[k].b)].push_back(static_cast<int>(2 * k + 1));
    }
  }
  const MachineLink& link(int directed) const {
    return machine.links[static_cast<std::size_t>(directed / 2)];
  }
  int head(int directed) const { return directed % 2 == 0 ? link(directed).b : link(directed).a; }
  VertexKind kind(int v) const { return machine.vertices[static_cast<std::size_t>(v)].kind; }

  // The cheapest path from `src` to `dst` (cost: the time a byte takes on each link, plus a
  // little per hop so that equal bandwidths prefer fewer hops). Traffic passes through another
  // GPU only over NVLink on both sides (NCCL's NVB path) and never through a NIC. Empty when
  // unreachable. `cost` receives the path's cost.
  // Whether a path (directed links, as path() returns) passes through no CPU.
  bool avoids_cpus(const std::vector<int>& links) const {
    return std::none_of(links.begin(), links.end(),
                        [this](int l) { return kind(head(l)) == VertexKind::Cpu; });
  }

  std::vector<int> path(int src, int dst, double* cost) const {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> best(machine.vertices.size(), inf);
    std::vector<int> via(machine.vertices.size(), -1);
    using Item = std::pair<double, int>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
    best[static_cast<std::size_t>(src)] = 0;
    queue.push({0.0, src});
    while (!queue.empty()) {
      const auto [d, u] = queue.top();
      queue.pop();
      if (d > best[static_cast<std::size_t>(u)]) continue;
      if (u == dst) break;
      for (int l : out_links[static_cast<std::size_t>(u)]) {
        const MachineLink& ml = link(l);
        const int w = head(l);
        if (u != src && kind(u) == VertexKind::Gpu && ml.type != LinkType::NVLink) continue;
        if (w != dst && kind(w) == VertexKind::Gpu && ml.type != LinkType::NVLink) continue;
        if (w != dst && kind(w) == VertexKind::Nic) continue;
        if (ml.bandwidth_gbs <= 0) continue;
        const double nd = d + 1.0 / ml.bandwidth_gbs + 1e-6;
        if (nd < best[static_cast<std::size_t>(w)]) {
          best[static_cast<std::size_t>(w)] = nd;
          via[static_cast<std::size_t>(w)] = l;
          queue.push({nd, w});
        }
      }
    }
    if (cost != nullptr) *cost = best[static_cast<std::size_t>(dst)];
    std::vector<int> out;
    if (best[static_cast<std::size_t>(dst)] == inf) return out;
    for (int v = dst; v != src;) {
      const int l = via[static_cast<std::size_t>(v)];
      out.push_back(l);
      const MachineLink& ml = link(l);
      v = l % 2 == 0 ? ml.a : ml.b;
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
};

std::string node_vertex_name(int nodes, int node, const std::string& name) {
  return nodes == 1 ? name : fmt::format("node {} {}", node, name);
}

}  // namespace

class TopologyBuilder {
 public:
  // The links as built carry their line rates; the defaults for the machine (which read them,
  // as NCCL's model does) then rate each at its type's achievable share.
  static void finish(Topology& t) {
    for (Link& link : t.links_) link.line_rate_gbs = link.bandwidth_gbs;
    t.set_costs(default_cost_parameters(t));
  }

  static Topology emulated(const MachineDescription& machine, int ranks) {
    Topology t;
    t.name_ = machine.name;
    t.nodes_ = 1;
    t.gpus_per_node_ = ranks;
    t.machine_ = machine.info;
    t.machine_.emulated_ranks = ranks;
    t.assumptions_ = machine.assumptions;
    t.vertices_.push_back({VertexKind::Gpu, fmt::format("gpu 0 ({} ranks emulated)", ranks), 0, 0});
    t.links_.push_back({0, 0, LinkType::Memory, machine.memory_bandwidth_gbs, 0});
    t.gpu_vertex_.assign(static_cast<std::size_t>(ranks), 0);
    t.memory_link_.assign(static_cast<std::size_t>(ranks), 0);
    const auto n = static_cast<std::size_t>(ranks);
    t.route_offsets_.reserve(n * n + 1);
    t.route_offsets_.push_back(0);
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) {
        if (a != b) t.route_links_.push_back(0);
        t.route_offsets_.push_back(static_cast<std::uint32_t>(t.route_links_.size()));
      }
    }
    finish(t);
    return t;
  }

  static Topology build(const MachineDescription& whole, int nodes, int gpus_per_node) {
    const MachineDescription machine =
        first_gpus(whole, gpus_per_node > 0 ? gpus_per_node : static_cast<int>(whole.gpus.size()));
    const LocalGraph graph(machine);
    const int gpn = static_cast<int>(machine.gpus.size());
    const int nverts = static_cast<int>(machine.vertices.size());
    const int per_node_links = gpn + 2 * static_cast<int>(machine.links.size());
    const int nnics = static_cast<int>(machine.nics.size());

    Topology t;
    t.name_ = machine.name;
    t.nodes_ = nodes;
    t.gpus_per_node_ = gpn;
    t.machine_ = machine.info;
    t.assumptions_ = machine.assumptions;

    // Vertices: node by node in the machine's order, then the network switch.
    std::vector<int> local_rank(machine.vertices.size(), -1);
    for (int g = 0; g < gpn; ++g) local_rank[static_cast<std::size_t>(machine.gpus[g])] = g;
    for (int n = 0; n < nodes; ++n) {
      for (int v = 0; v < nverts; ++v) {
        const MachineVertex& mv = machine.vertices[static_cast<std::size_t>(v)];
        const int lr = local_rank[static_cast<std::size_t>(v)];
        t.vertices_.push_back(
            {mv.kind, node_vertex_name(nodes, n, mv.name), n, lr < 0 ? -1 : n * gpn + lr});
      }
    }
    const int network_switch = nodes > 1 ? static_cast<int>(t.vertices_.size()) : -1;
    if (nodes > 1) t.vertices_.push_back({VertexKind::NetworkSwitch, "network switch", -1, -1});

    // Links, in the layout the file comment gives.
    for (int n = 0; n < nodes; ++n) {
      const int base = n * nverts;
      for (int g = 0; g < gpn; ++g) {
        const int v = base + machine.gpus[static_cast<std::size_t>(g)];
        t.links_.push_back({v, v, LinkType::Memory, machine.memory_bandwidth_gbs, 0});
      }
      for (const MachineLink& ml : machine.links) {
        t.links_.push_back({base + ml.a, base + ml.b, ml.type, ml.bandwidth_gbs, ml.latency_us});
        t.links_.push_back({base + ml.b, base + ml.a, ml.type, ml.bandwidth_gbs, ml.latency_us});
      }
    }
    const int network_base = static_cast<int>(t.links_.size());
    if (nodes > 1) {
      for (int n = 0; n < nodes; ++n) {
        for (int k = 0; k < nnics; ++k) {
          const int nic = n * nverts + machine.nics[static_cast<std::size_t>(k)];
          const double bw = machine.info.nic_speed_gbs;
          const double lat = machine.nic_latency_us;
          t.links_.push_back({nic, network_switch, LinkType::Network, bw, lat});
          t.links_.push_back({network_switch, nic, LinkType::Network, bw, lat});
        }
      }
    }
    for (int n = 0; n < nodes; ++n) {
      for (int g = 0; g < gpn; ++g) {
        t.gpu_vertex_.push_back(n * nverts + machine.gpus[static_cast<std::size_t>(g)]);
        t.memory_link_.push_back(n * per_node_links + g);
      }
    }

    // Routes within one machine, and from each GPU to its NIC and back: the NIC reached at the
    // least cost; among equals, GPU g takes the (g mod count)-th, so that GPUs sharing a switch
    // with two NICs use one each.
    const auto gsz = static_cast<std::size_t>(gpn);
    std::vector<std::vector<int>> local(gsz * gsz);
    for (int a = 0; a < gpn; ++a) {
      for (int b = 0; b < gpn; ++b) {
        if (a == b) continue;
        local[static_cast<std::size_t>(a) * gsz + static_cast<std::size_t>(b)] =
            graph.path(machine.gpus[static_cast<std::size_t>(a)],
                       machine.gpus[static_cast<std::size_t>(b)], nullptr);
      }
    }
    std::vector<int> nic_of(gsz, -1);
    std::vector<std::vector<int>> up(gsz), down(gsz);
    if (nodes > 1) {
      for (int g = 0; g < gpn; ++g) {
        const int gv = machine.gpus[static_cast<std::size_t>(g)];
        // Every NIC's path from this GPU, worked out once, and its cost.
        std::vector<std::vector<int>> to_nic(static_cast<std::size_t>(nnics));
        std::vector<double> cost(static_cast<std::size_t>(nnics));
        double least = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < to_nic.size(); ++k) {
          to_nic[k] = graph.path(gv, machine.nics[k], &cost[k]);
          least = std::min(least, cost[k]);
        }
        // Among the nearest NICs, those reached without crossing a CPU, as NCCL prefers a NIC
        // under the GPU's own PCIe switches (path PIX or PXB) to one behind the host bridge (PHB):
        // a NIC on a CPU's root port ties in cost with one behind a bridge in the GPU's switch.
        std::vector<int> ties;
        for (int k = 0; k < nnics; ++k) {
          if (cost[static_cast<std::size_t>(k)] <= least * (1 + 1e-9)) ties.push_back(k);
        }
        const auto behind_cpu = [&](int k) {
          return !graph.avoids_cpus(to_nic[static_cast<std::size_t>(k)]);
        };
        if (!std::all_of(ties.begin(), ties.end(), behind_cpu)) std::erase_if(ties, behind_cpu);
        if (ties.empty()) continue;
        const int k = ties[static_cast<std::size_t>(g) % ties.size()];
        nic_of[static_cast<std::size_t>(g)] = k;
        up[static_cast<std::size_t>(g)] = std::move(to_nic[static_cast<std::size_t>(k)]);
        down[static_cast<std::size_t>(g)] =
            graph.path(machine.nics[static_cast<std::size_t>(k)], gv, nullptr);
      }
    }

    const auto ranks = static_cast<std::size_t>(nodes * gpn);
    t.route_offsets_.reserve(ranks * ranks + 1);
    t.route_offsets_.push_back(0);
    const auto put_local = [&](int node, const std::vector<int>& links) {
      for (int l : links) t.route_links_.push_back(node * per_node_links + gpn + l);
    };
    for (std::size_t a = 0; a < ranks; ++a) {
      const int na = static_cast<int>(a / gsz);
      const std::size_t ga = a % gsz;
      for (std::size_t b = 0; b < ranks; ++b) {
        const int nb = static_cast<int>(b / gsz);
        const std::size_t gb = b % gsz;
        if (a == b) {
          // nothing: a rank's own memory is the memory link, not a route
        } else if (na == nb) {
          put_local(na, local[ga * gsz + gb]);
        } else if (nic_of[ga] >= 0 && nic_of[gb] >= 0) {
          put_local(na, up[ga]);
          t.route_links_.push_back(network_base + 2 * (na * nnics + nic_of[ga]));
          t.route_links_.push_back(network_base + 2 * (nb * nnics + nic_of[gb]) + 1);
          put_local(nb, down[gb]);
        }
        t.route_offsets_.push_back(static_cast<std::uint32_t>(t.route_links_.size()));
      }
    }
    finish(t);
    return t;
  }
};

Topology build_topology(const MachineDescription& machine, int nodes, int gpus_per_node) {
  if (machine.emulated) {
    return TopologyBuilder::emulated(machine, gpus_per_node);
  }
  return TopologyBuilder::build(machine, nodes, gpus_per_node);
}

}  // namespace weft::predict
