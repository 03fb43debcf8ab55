// Topology's lookups, its description, and load_topology: a preset's name or an NCCL topology
// file, checked against the request.
#include "weft/predict/topology.h"

#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>

#include "weft/predict/presets.h"
#include "weft/predict/topology_builder.h"
#include "weft/predict/topology_xml.h"

namespace weft::predict {

std::string_view to_string(LinkType type) {
  switch (type) {
    case LinkType::Memory:
      return "memory";
    case LinkType::NVLink:
      return "nvlink";
    case LinkType::PCIe:
      return "pcie";
    case LinkType::Network:
      return "network";
  }
  return "?";
}

std::string_view to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::Gpu:
      return "gpu";
    case VertexKind::NVSwitch:
      return "nvswitch";
    case VertexKind::PciSwitch:
      return "pci switch";
    case VertexKind::Cpu:
      return "cpu";
    case VertexKind::Nic:
      return "nic";
    case VertexKind::NetworkSwitch:
      return "network switch";
  }
  return "?";
}

std::string_view to_string(CpuVendor vendor) {
  switch (vendor) {
    case CpuVendor::Intel:
      return "Intel";
    case CpuVendor::Amd:
      return "AMD";
    case CpuVendor::Unknown:
      break;
  }
  return "unknown";
}

std::span<const int> Topology::route(int from_rank, int to_rank) const {
  const int n = ranks();
  if (from_rank < 0 || to_rank < 0 || from_rank >= n || to_rank >= n) return {};
  const auto pair = static_cast<std::size_t>(from_rank) * static_cast<std::size_t>(n) +
                    static_cast<std::size_t>(to_rank);
  const std::uint32_t begin = route_offsets_[pair];
  const std::uint32_t end = route_offsets_[pair + 1];
  return std::span<const int>(route_links_).subspan(begin, end - begin);
}

int Topology::memory_link(int rank) const {
  if (rank < 0 || rank >= ranks()) return -1;
  return memory_link_[static_cast<std::size_t>(rank)];
}

LinkType Topology::route_type(int from_rank, int to_rank) const {
  // Slowest first: the network, then PCIe (and the socket link), NVLink, memory.
  constexpr std::array<int, kLinkTypes> slowness{0, 1, 2, 3};  // Memory, NVLink, PCIe, Network
  LinkType slowest = LinkType::Memory;
  for (int l : route(from_rank, to_rank)) {
    const LinkType type = links_[static_cast<std::size_t>(l)].type;
    if (slowness[static_cast<std::size_t>(type)] > slowness[static_cast<std::size_t>(slowest)]) {
      slowest = type;
    }
  }
  return slowest;
}

void Topology::set_link_parameters(LinkType type, std::optional<double> line_rate_gbs,
                                   std::optional<double> latency_us) {
  for (Link& link : links_) {
    if (link.type != type) continue;
    if (line_rate_gbs) link.line_rate_gbs = *line_rate_gbs;
    if (latency_us) link.latency_us = *latency_us;
  }
  rate_links();
}

void Topology::set_costs(const CostParameters& costs) {
  costs_ = costs;
  rate_links();
}

Topology Topology::at_line_rate() const {
  Topology t = *this;
  t.costs_.achievable_share.fill(1.0);
  t.rate_links();
  return t;
}

void Topology::rate_links() {
  for (Link& link : links_) {
    const bool between_cpus =
        vertices_[static_cast<std::size_t>(link.from)].kind == VertexKind::Cpu &&
        vertices_[static_cast<std::size_t>(link.to)].kind == VertexKind::Cpu;
    link.bandwidth_gbs =
        between_cpus ? link.line_rate_gbs : link.line_rate_gbs * costs_.achievable(link.type);
  }
}

std::string Topology::describe() const {
  std::string out;
  out += fmt::format("topology {}: {} rank{}, {} node{} x {} GPU{}\n", name_, ranks(),
                     ranks() == 1 ? "" : "s", nodes_, nodes_ == 1 ? "" : "s", gpus_per_node_,
                     gpus_per_node_ == 1 ? "" : "s");
  out += fmt::format("  GPU: {} (sm {}); CPU: {}",
                     machine_.gpu_model.empty() ? "unknown" : machine_.gpu_model, machine_.gpu_sm,
                     to_string(machine_.cpu_vendor));
  if (machine_.nic_speed_gbs > 0) {
    out += fmt::format("; NIC: {} Gb/s", machine_.nic_speed_gbs * 8);
  }
  if (machine_.emulated_ranks > 0) {
    out += fmt::format("; {} ranks emulated on one GPU", machine_.emulated_ranks);
  }
  out += "\n";
  std::map<VertexKind, int> kinds;
  for (const Vertex& v : vertices_) ++kinds[v.kind];
  out += "  vertices:";
  for (const auto& [kind, count] : kinds) out += fmt::format(" {} {},", count, to_string(kind));
  out.back() = '\n';
  // The first node's GPUs with their links (every node is a copy).
  const int shown = machine_.emulated_ranks > 0 ? 1 : std::min(ranks(), gpus_per_node_);
  for (int r = 0; r < shown; ++r) {
    const int v = gpu_vertex_[static_cast<std::size_t>(r)];
    out += fmt::format("  {} (rank {}):", vertices_[static_cast<std::size_t>(v)].name, r);
    for (const Link& link : links_) {
      if (link.from != v) continue;
      if (link.to == v) {
        out += fmt::format(" memory {:.0f} GB/s;", link.bandwidth_gbs);
      } else {
        // The stated line rate first (what the file or preset says), then what the model moves.
        out += fmt::format(" {} to {} {:.1f} GB/s", to_string(link.type),
                           vertices_[static_cast<std::size_t>(link.to)].name, link.line_rate_gbs);
        if (link.bandwidth_gbs != link.line_rate_gbs) {
          out += fmt::format(" ({:.1f} achievable)", link.bandwidth_gbs);
        }
        out += ";";
      }
    }
    out.back() = '\n';
  }
  if (nodes_ > 1) out += fmt::format("  nodes 1..{} are copies of node 0\n", nodes_ - 1);
  if (!assumptions_.empty()) {
    out += "  assumed:\n";
    for (const std::string& a : assumptions_) out += fmt::format("  - {}\n", a);
  }
  return out;
}

TopologyResult load_topology(const TopologyRequest& request) {
  TopologyResult result;
  std::optional<MachineDescription> machine = preset_machine(request.source);
  std::string where = request.source;
  if (!machine) {
    if (request.source.empty()) {
      std::string names;
      for (const PresetInfo& p : presets())
        names += fmt::format("{}{}", names.empty() ? "" : ", ", p.name);
      result.diagnostics.error("", 0, "",
                               fmt::format("no topology given: name a preset ({}) or an NCCL "
                                           "topology XML file",
                                           names));
      return result;
    }
    machine = read_topology_xml(request.source, result.diagnostics);
    if (!machine) return result;
  } else {
    where = fmt::format("preset {}", request.source);
  }
  for (const GpuLinkEdit& edit : request.link_edits) {
    const int gpus = static_cast<int>(machine->gpus.size());
    if (edit.gpu_a < 0 || edit.gpu_b < 0 || edit.gpu_a >= gpus || edit.gpu_b >= gpus ||
        edit.gpu_a == edit.gpu_b || !(edit.bandwidth_gbs >= 0)) {
      result.diagnostics.error(where, 0, "",
                               fmt::format("link {}-{}: the machine has GPUs 0 to {}; a link joins "
                                           "two of them, at a bandwidth of 0 (removed) or more",
                                           edit.gpu_a, edit.gpu_b, gpus - 1));
      return result;
    }
    const int a = machine->gpus[static_cast<std::size_t>(edit.gpu_a)];
    const int b = machine->gpus[static_cast<std::size_t>(edit.gpu_b)];
    auto joins = [&](const MachineLink& l) {
      return (l.a == a && l.b == b) || (l.a == b && l.b == a);
    };
    auto& links = machine->links;
    if (std::none_of(links.begin(), links.end(), joins)) {
      result.diagnostics.error(where, 0, "",
                               fmt::format("link {}-{}: GPUs {} and {} have no direct link to "
                                           "change",
                                           edit.gpu_a, edit.gpu_b, edit.gpu_a, edit.gpu_b));
      return result;
    }
    if (edit.bandwidth_gbs == 0) {
      std::erase_if(links, joins);
      machine->assumptions.push_back(fmt::format(
          "the links between GPUs {} and {} are removed (as asked)", edit.gpu_a, edit.gpu_b));
    } else {
      for (MachineLink& l : links) {
        if (joins(l)) l.bandwidth_gbs = edit.bandwidth_gbs;
      }
      machine->assumptions.push_back(
          fmt::format("the links between GPUs {} and {} carry {} GB/s per direction (as asked)",
                      edit.gpu_a, edit.gpu_b, edit.bandwidth_gbs));
    }
  }
  Diagnostics checked = check_request(*machine, request, where);
  result.diagnostics.items.insert(result.diagnostics.items.end(), checked.items.begin(),
                                  checked.items.end());
  if (result.diagnostics.has_errors()) return result;
  result.topology = build_topology(*machine, request.nodes, request.gpus_per_node);
  return result;
}

}  // namespace weft::predict
