// A machine as the simulator sees it (docs/architecture.md §7): GPUs, switches, CPUs and NICs as
// vertices, directed links between them with a bandwidth per direction and a latency, the route a
// message takes from one rank's memory to another's, and the cost parameters of the runtime on it.
// Built from NCCL's own topology XML (what NCCL_TOPO_DUMP_FILE writes, or the partial files people
// feed NCCL_TOPO_FILE) or from a named preset (presets.h); a topology never guesses silently: what
// its source left unknown and what was assumed instead is listed in assumptions().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/ir/diagnostics.h"
#include "weft/ir/ir.h"

namespace weft::predict {

// Memory: a GPU's own device memory, which every local copy and every FIFO slot crosses. In "N
// ranks emulated on one GPU" all ranks share one memory link.
enum class LinkType : std::uint8_t { Memory, NVLink, PCIe, Network };
inline constexpr std::size_t kLinkTypes = 4;
std::string_view to_string(LinkType type);  // "memory", "nvlink", "pcie", "network"

// What one message costs on a protocol (NCCL's own split: a latency per hop and a payload
// efficiency, tuning.cc's hwLat and its LL/LL128 bandwidth factors).
struct ProtocolCosts {
  double payload_efficiency = 1.0;  // payload bytes per byte moved: LL 0.5, LL128 120/128
  // Per message and hop, by the link type that dominates the hop: the flag handshake and the
  // pipeline of one slot. Memory is used only where a route is the memory link itself (ranks
  // emulated on one GPU).
  std::array<double, kLinkTypes> hop_latency_us{};
  double threadblock_bandwidth_gbs = 0;  // what one threadblock moves per second on it
  // Added once per call on this protocol, on top of CostParameters::launch_latency_us: NCCL's
  // base latency differs by protocol (tuning.cc), LL's being the smallest.
  double call_latency_us = 0;
  // What one step of Weft's interpreter costs at the least, measured on a GPU (its waits,
  // barriers and flag posts): no hop is shorter. NCCL's LL hop over NVLink is 0.6 us; a Weft
  // step measured 3.2 (docs/prediction.md, "Weft's step").
  double step_latency_us = 0;

  // The latency of one message over a hop of `type`: the link's hop latency or Weft's step,
  // whichever is longer.
  double hop_us(LinkType type) const {
    const double hop = hop_latency_us[static_cast<std::size_t>(type)];
    return hop > step_latency_us ? hop : step_latency_us;
  }
};

// The runtime's costs on this machine: one place, readable and editable
// (cost_parameters.h reads and writes them as text).
struct CostParameters {
  double launch_latency_us = 0;              // per call: kernel launch and the interpreter's set-up
  std::array<ProtocolCosts, 3> protocols{};  // indexed by ir::Protocol
  // Per link type, the share of a link's line rate that SM copies achieve on it (NVLink moves
  // about 82 % of its signalling rate as payload on Hopper). A link's modelled bandwidth is its
  // line rate times this share (Link::bandwidth_gbs). Defaults and their sources:
  // cost_parameters.cpp.
  std::array<double, kLinkTypes> achievable_share{1.0, 1.0, 1.0, 1.0};
  double achievable(LinkType type) const {
    return achievable_share[static_cast<std::size_t>(type)];
  }
  const ProtocolCosts& protocol(ir::Protocol proto) const {
    return protocols[static_cast<std::size_t>(proto)];
  }
};

enum class VertexKind : std::uint8_t { Gpu, NVSwitch, PciSwitch, Cpu, Nic, NetworkSwitch };
std::string_view to_string(VertexKind kind);

enum class CpuVendor : std::uint8_t { Unknown, Intel, Amd };
std::string_view to_string(CpuVendor vendor);  // "unknown", "Intel", "AMD"

// What the machine is, beyond its graph: the NCCL model (nccl_model.h) and the cost defaults
// depend on the GPU generation and the CPU, as NCCL's own tuning does.
struct MachineInfo {
  std::string gpu_model;  // "H100 SXM", "A100 SXM", ...; empty when unknown
  int gpu_sm = 0;         // compute capability x 10 (70, 80, 90); 0 when unknown
  CpuVendor cpu_vendor = CpuVendor::Unknown;
  int cpu_model = 0;         // x86 model number (Intel family 6: 85 Skylake, 143 Sapphire Rapids)
  double nic_speed_gbs = 0;  // each NIC's network bandwidth per direction; 0 when no NIC
  int emulated_ranks = 0;    // > 0: that many ranks emulated on one GPU (preset "emulated")
};

struct Vertex {
  VertexKind kind = VertexKind::Gpu;
  std::string name;  // "node 0 gpu 3", "node 0 pci 0000:07:00.0", ...
  int node = 0;
  int rank = -1;  // GPUs: the global rank (node × gpus_per_node + local index); others -1
};

struct Link {
  int from = 0;  // vertex indices
  int to = 0;
  LinkType type = LinkType::NVLink;
  // GB/s (10^9 bytes) in this direction that the model moves: the line rate times the cost
  // parameters' achievable share for the link's type (CostParameters::achievable_share).
  double bandwidth_gbs = 0;
  double latency_us = 0;
  double line_rate_gbs = 0;  // as the preset or the file states it (NCCL's model reads this)
};

class Topology {
 public:
  const std::string& name() const { return name_; }
  int ranks() const { return static_cast<int>(gpu_vertex_.size()); }
  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  const std::vector<Vertex>& vertices() const { return vertices_; }
  const std::vector<Link>& links() const { return links_; }
  const MachineInfo& machine() const { return machine_; }
  const CostParameters& costs() const { return costs_; }
  // New costs; every link is rated again at its line rate times the new achievable share.
  void set_costs(const CostParameters& costs);
  // This topology with every link at its line rate (every achievable share 1): the bound a
  // schedule could reach if links delivered their signalling rate as payload.
  Topology at_line_rate() const;
  // What the source did not say and what was assumed instead, one sentence each.
  const std::vector<std::string>& assumptions() const { return assumptions_; }

  // The directed links a message from `from_rank`'s memory to `to_rank`'s crosses, in order
  // (empty when from_rank == to_rank). The memory links at either end are not included, except
  // in one-GPU emulation, where the route between two ranks is the shared memory link itself.
  std::span<const int> route(int from_rank, int to_rank) const;
  // The memory link of a rank's GPU (shared by every rank in one-GPU emulation).
  int memory_link(int rank) const;
  // The slowest link type a message between the two ranks crosses (NVLink within an NVSwitch
  // node, PCIe between GPUs under PCI switches, Network across nodes).
  LinkType route_type(int from_rank, int to_rank) const;

  // Multi-line: vertices per kind, GPUs with their links, assumptions. For `weftc topology`.
  std::string describe() const;

  // Every link of `type` takes the given line rate (then rated at its achievable share) and
  // latency where given (a cost file's link.* overrides, cost_parameters.h). Routes stay as they
  // are.
  void set_link_parameters(LinkType type, std::optional<double> line_rate_gbs,
                           std::optional<double> latency_us);

 private:
  friend class TopologyBuilder;
  // bandwidth_gbs = line_rate_gbs x the costs' achievable share, for every link; links between
  // CPUs keep their line rate, which is already NCCL's figure for what they carry.
  void rate_links();
  std::string name_;
  int nodes_ = 1;
  int gpus_per_node_ = 0;
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
  std::vector<int> gpu_vertex_;   // per rank
  std::vector<int> memory_link_;  // per rank
  // Routes: every ordered pair's links, concatenated; pair (a, b) is
  // route_links_[route_offsets_[a * ranks + b] .. route_offsets_[a * ranks + b + 1]). About 6
  // links a pair across nodes: 25 MB at 1024 ranks, looked up in constant time.
  std::vector<int> route_links_;
  std::vector<std::uint32_t> route_offsets_;
  MachineInfo machine_;
  CostParameters costs_;
  std::vector<std::string> assumptions_;
};

// A link between two GPUs of the machine, changed before the machine is built: a degraded
// machine (an NVLink pair down, a slower link) without editing its topology file (`--link`).
struct GpuLinkEdit {
  int gpu_a = 0;  // local GPU indices within the machine
  int gpu_b = 0;
  double bandwidth_gbs = 0;  // per direction; 0 removes every link between the two
};

// What a user asks for: `--topology T [--nodes A] [--gpus-per-node B | --ranks N] [--link ...]`.
struct TopologyRequest {
  std::string source;     // a preset's name (presets.h) or the path of an NCCL topology XML
  int nodes = 1;          // copies of the machine, joined through their NICs by one network
  int gpus_per_node = 0;  // 0: every GPU the source has; else at most that many, the first ones
  std::vector<GpuLinkEdit> link_edits{};  // applied to the machine, so to every node alike
};

struct TopologyResult {
  std::optional<Topology> topology;  // present when there are no errors
  Diagnostics diagnostics;           // errors name the file and line, or the preset
};

TopologyResult load_topology(const TopologyRequest& request);

}  // namespace weft::predict
