// One machine (one node) as a description, and the step that turns it into a Topology: what the
// presets and the NCCL topology XML reader produce, replicated into `nodes` copies joined by one
// network switch, with every route worked out once.
#pragma once

#include <string>
#include <vector>

#include "weft/predict/topology.h"

namespace weft::predict {

struct MachineVertex {
  VertexKind kind = VertexKind::Gpu;
  std::string name;  // within the machine: "gpu 3", "pci 0000:07:00.0"; "node k " is prefixed
};

// Both directions, each with this bandwidth: every link NCCL's files and the presets describe is
// symmetric.
struct MachineLink {
  int a = 0;  // indices into MachineDescription::vertices
  int b = 0;
  LinkType type = LinkType::PCIe;
  double bandwidth_gbs = 0;
  double latency_us = 0;
};

struct MachineDescription {
  std::string name;
  std::vector<MachineVertex> vertices;
  std::vector<MachineLink> links;
  std::vector<int> gpus;  // GPU vertices in local rank order
  std::vector<int> nics;  // NIC vertices; each gets a Network link to the switch across nodes
  // Bytes a GPU copies per second within its own memory: the memory link's bandwidth.
  double memory_bandwidth_gbs = 0;
  // A NIC's own latency (NCCL's <net latency>), the network links' latency across nodes.
  double nic_latency_us = 0;
  MachineInfo info;
  std::vector<std::string> assumptions;
  // One GPU whose memory every rank shares (preset "emulated"): the request's gpus_per_node is
  // the rank count.
  bool emulated = false;

  int add_vertex(VertexKind kind, std::string vertex_name);
  void add_link(int a, int b, LinkType type, double bandwidth_gbs, double latency_us = 0);
};

// The most ranks a topology holds (nodes x GPUs per node).
inline constexpr int kMaxRanks = 2048;

// Whether `request` can be built from `machine`: nodes >= 1, gpus_per_node within what the machine
// has (and given for an emulated machine), NICs present when nodes > 1. Errors name `where`.
Diagnostics check_request(const MachineDescription& machine, const TopologyRequest& request,
                          const std::string& where);

// The topology of `nodes` copies of `machine`, each keeping its first `gpus_per_node` GPUs (0: all;
// for an emulated machine, the number of ranks). Preconditions: check_request found no errors.
// Costs are NCCL-calibrated defaults for the machine (cost_parameters.h).
Topology build_topology(const MachineDescription& machine, int nodes, int gpus_per_node);

}  // namespace weft::predict
