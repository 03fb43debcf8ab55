// The preset machines and the hardware figures they rest on. Every figure names its source;
// bandwidths are GB/s (10^9 bytes) per direction.
//
// Link latencies are 0 here on purpose: the per-hop latency of a message (the flag handshake and
// one slot's pipeline) is a cost parameter by link type (cost_parameters.h), taken from NCCL's
// measured hwLat, which already includes the wire. A link's own latency is for what a file
// states on top of that (a NIC's `latency` attribute).
#include "weft/predict/presets.h"

#include <array>

#include <fmt/format.h>

namespace weft::predict {
namespace {

// A GPU's memory link carries bytes copied within its memory: each byte is read once and
// written once, and a streaming copy reaches about 90% of the HBM peak, so the link's bandwidth
// is 0.9 x peak / 2.
constexpr double memory_copy_gbs(double hbm_peak_gbs) {
  return 0.9 * hbm_peak_gbs / 2;
}

// H100 SXM5 80 GB: HBM3 3.35 TB/s, 18 NVLink 4 links (NVIDIA H100 Tensor Core GPU datasheet).
constexpr GpuFigures kH100Sxm{"H100 SXM", 90, 18, memory_copy_gbs(3350)};
// A100 SXM4 80 GB: HBM2e 2,039 GB/s, 12 NVLink 3 links (NVIDIA A100 datasheet).
constexpr GpuFigures kA100Sxm{"A100 SXM", 80, 12, memory_copy_gbs(2039)};
// A100 PCIe 80 GB: HBM2e 1,935 GB/s; PCIe Gen4 x16; no NVLink bridge assumed (A100 datasheet).
constexpr GpuFigures kA100Pcie{"A100 PCIe", 80, 0, memory_copy_gbs(1935)};
// V100 SXM2 32 GB: HBM2 900 GB/s, 6 NVLink 2 links (NVIDIA V100 datasheet).
constexpr GpuFigures kV100Sxm{"V100 SXM2", 70, 6, memory_copy_gbs(900)};
// The other SXM GPUs of 8-GPU NVSwitch baseboards, which the XML reader recognises by their PCI
// device id (pci_devices.cpp); no preset uses them.
// H200 SXM 141 GB: HBM3e 4.8 TB/s, 18 NVLink 4 links as the H100's (NVIDIA H200 datasheet).
constexpr GpuFigures kH200Sxm{"H200 SXM", 90, 18, memory_copy_gbs(4800)};
// H800 SXM5 80 GB: the H100's HBM3 3.35 TB/s, NVLink cut to 400 GB/s both ways together, that
// is 8 NVLink 4 links (NVIDIA H800 product brief).
constexpr GpuFigures kH800Sxm{"H800 SXM", 90, 8, memory_copy_gbs(3350)};
// A100 SXM4 40 GB: HBM2 1,555 GB/s, 12 NVLink 3 links (NVIDIA A100 datasheet).
constexpr GpuFigures kA100Sxm40{"A100 SXM 40GB", 80, 12, memory_copy_gbs(1555)};

// NVLink 2 (V100), 3 (A100) and 4 (H100) all run 25 GB/s per link and direction: 6 x 25 = 150,
// 12 x 25 = 300 and 18 x 25 = 450 GB/s per GPU and direction, half of the "300/600/900 GB/s"
// bidirectional totals of the datasheets.
constexpr double kNvlinkPerLinkGbs = 25.0;

// NICs: ConnectX-7 NDR 400 Gb/s, ConnectX-6 HDR 200 Gb/s (NVIDIA DGX H100 / DGX A100 user guides).
constexpr double kNdr400Gbs = 400.0 / 8;
constexpr double kHdr200Gbs = 200.0 / 8;

// The CPUs of the presets, as x86 family/model numbers (what NCCL's XML `modelid` holds).
constexpr int kSapphireRapidsModel = 143;  // DGX H100: 2 x Xeon Platinum 8480C
constexpr int kAmdRomeModel = 49;          // DGX A100: 2 x EPYC 7742 (family 23)
constexpr int kAmdMilanModel = 1;          // pcie-gen4: 2 x EPYC 7003 (family 25)

constexpr std::array kPresets{
    PresetInfo{"h100-nvswitch",
               "8 x H100 SXM, NVLink 4 through NVSwitch (450 GB/s per GPU and direction), "
               "PCIe Gen5, one 400 Gb/s NIC per GPU (DGX H100 / ND H100 v5)"},
    PresetInfo{"a100-nvswitch",
               "8 x A100 SXM, NVLink 3 through NVSwitch (300 GB/s per GPU and direction), "
               "PCIe Gen4, one 200 Gb/s NIC per GPU (DGX A100 / ND A100 v4)"},
    PresetInfo{"pcie-gen4",
               "8 x A100 PCIe, no NVLink: pairs under PCIe Gen4 switches, 4 GPUs per CPU "
               "socket, two sockets, one 200 Gb/s NIC per switch"},
    PresetInfo{"emulated",
               "N ranks emulated on one H100 (what weft-perf runs): every rank shares the one "
               "HBM3 memory link; give N with --gpus-per-node or --ranks"},
};

// 8 GPUs with NVSwitch; `gpus_per_switch` GPUs and as many NICs under each PCIe switch, half the
// switches on each of two CPUs. All of NVIDIA's NVSwitch chips of a node are one vertex: every
// GPU reaches every other through them at its full NVLink bandwidth, as NCCL models them too.
MachineDescription nvswitch_machine(std::string name, const GpuFigures& gpu, double pcie_gbs,
                                    double nic_gbs, int gpus_per_switch, CpuVendor vendor,
                                    int cpu_model) {
  MachineDescription m;
  m.name = std::move(name);
  m.memory_bandwidth_gbs = gpu.memory_bandwidth_gbs;
  m.info.gpu_model = std::string(gpu.model);
  m.info.gpu_sm = gpu.sm;
  m.info.cpu_vendor = vendor;
  m.info.cpu_model = cpu_model;
  m.info.nic_speed_gbs = nic_gbs;
  const int cpu0 = m.add_vertex(VertexKind::Cpu, "cpu 0");
  const int cpu1 = m.add_vertex(VertexKind::Cpu, "cpu 1");
  m.add_link(cpu0, cpu1, LinkType::PCIe, inter_socket_bandwidth_gbs(vendor, cpu_model));
  const int nvswitch = m.add_vertex(VertexKind::NVSwitch, "nvswitch");
  const int switches = 8 / gpus_per_switch;
  int gpu_index = 0;
  int nic_index = 0;
  for (int s = 0; s < switches; ++s) {
    const int cpu = s < switches / 2 ? cpu0 : cpu1;
    const int sw = m.add_vertex(VertexKind::PciSwitch, fmt::format("pci switch {}", s));
    m.add_link(sw, cpu, LinkType::PCIe, pcie_gbs);
    for (int k = 0; k < gpus_per_switch; ++k) {
      const int g = m.add_vertex(VertexKind::Gpu, fmt::format("gpu {}", gpu_index++));
      m.add_link(g, sw, LinkType::PCIe, pcie_gbs);
      m.add_link(g, nvswitch, LinkType::NVLink, gpu.nvlinks * kNvlinkPerLinkGbs);
    }
    for (int k = 0; k < gpus_per_switch; ++k) {
      const int nic = m.add_vertex(VertexKind::Nic, fmt::format("nic {}", nic_index++));
      m.add_link(nic, sw, LinkType::PCIe, pcie_gbs);
    }
  }
  return m;
}

// DGX H100: each GPU and its ConnectX-7 share one PCIe Gen5 switch (DGX H100 user guide; the
// ND H100 v5 topology file has the same layout), 4 switches per Sapphire Rapids socket.
MachineDescription h100_nvswitch() {
  return nvswitch_machine("h100-nvswitch", kH100Sxm, pcie_bandwidth_gbs(32, 16), kNdr400Gbs, 1,
                          CpuVendor::Intel, kSapphireRapidsModel);
}

// DGX A100: 4 PCIe Gen4 switches, each with 2 GPUs and 2 ConnectX-6 (DGX A100 user guide, and
// the ND A100 v4 topology file), 2 switches per EPYC socket.
MachineDescription a100_nvswitch() {
  return nvswitch_machine("a100-nvswitch", kA100Sxm, pcie_bandwidth_gbs(16, 16), kHdr200Gbs, 2,
                          CpuVendor::Amd, kAmdRomeModel);
}

// A generic 8-GPU PCIe server: two EPYC 7003 sockets, each with two PCIe Gen4 switches, each
// switch with two A100 PCIe and one 200 Gb/s NIC. GPUs under one switch talk through it; others
// through the CPU, and across sockets through the xGMI link at NCCL's AMD figure.
MachineDescription pcie_gen4() {
  MachineDescription m;
  m.name = "pcie-gen4";
  m.memory_bandwidth_gbs = kA100Pcie.memory_bandwidth_gbs;
  m.info.gpu_model = std::string(kA100Pcie.model);
  m.info.gpu_sm = kA100Pcie.sm;
  m.info.cpu_vendor = CpuVendor::Amd;
  m.info.cpu_model = kAmdMilanModel;
  m.info.nic_speed_gbs = kHdr200Gbs;
  const double gen4 = pcie_bandwidth_gbs(16, 16);
  const int cpu0 = m.add_vertex(VertexKind::Cpu, "cpu 0");
  const int cpu1 = m.add_vertex(VertexKind::Cpu, "cpu 1");
  m.add_link(cpu0, cpu1, LinkType::PCIe,
             inter_socket_bandwidth_gbs(CpuVendor::Amd, kAmdMilanModel));
  int gpu_index = 0;
  for (int s = 0; s < 4; ++s) {
    const int sw = m.add_vertex(VertexKind::PciSwitch, fmt::format("pci switch {}", s));
    m.add_link(sw, s < 2 ? cpu0 : cpu1, LinkType::PCIe, gen4);
    for (int k = 0; k < 2; ++k) {
      const int g = m.add_vertex(VertexKind::Gpu, fmt::format("gpu {}", gpu_index++));
      m.add_link(g, sw, LinkType::PCIe, gen4);
    }
    const int nic = m.add_vertex(VertexKind::Nic, fmt::format("nic {}", s));
    m.add_link(nic, sw, LinkType::PCIe, gen4);
  }
  return m;
}

// weft-perf's set-up: N ranks as N sets of threadblocks on one H100; a message between two ranks
// is a copy within the GPU's HBM, so the shared memory link (1,507 GB/s of copies, from the
// 3.35 TB/s peak as above) is the only link.
MachineDescription emulated() {
  MachineDescription m;
  m.name = "emulated";
  m.emulated = true;
  m.memory_bandwidth_gbs = kH100Sxm.memory_bandwidth_gbs;
  m.info.gpu_model = std::string(kH100Sxm.model);
  m.info.gpu_sm = kH100Sxm.sm;
  m.add_vertex(VertexKind::Gpu, "gpu 0");
  m.assumptions.push_back(
      "all ranks run on one H100 and share its memory link; a threadblock's copy rate is taken "
      "from NCCL's H100 NVLink figures, since the copy loop is the same code");
  return m;
}

}  // namespace

std::span<const PresetInfo> presets() {
  return kPresets;
}

std::optional<MachineDescription> preset_machine(std::string_view name) {
  if (name == "h100-nvswitch") return h100_nvswitch();
  if (name == "a100-nvswitch") return a100_nvswitch();
  if (name == "pcie-gen4") return pcie_gen4();
  if (name == "emulated") return emulated();
  return std::nullopt;
}

const GpuFigures& h100_sxm() {
  return kH100Sxm;
}
const GpuFigures& a100_sxm() {
  return kA100Sxm;
}
const GpuFigures& a100_pcie() {
  return kA100Pcie;
}
const GpuFigures& v100_sxm() {
  return kV100Sxm;
}
const GpuFigures& h200_sxm() {
  return kH200Sxm;
}
const GpuFigures& h800_sxm() {
  return kH800Sxm;
}
const GpuFigures& a100_sxm_40gb() {
  return kA100Sxm40;
}

double nvlink_bandwidth_gbs(int /*sm*/) {
  return kNvlinkPerLinkGbs;
}

double pcie_bandwidth_gbs(double gts, int lanes) {
  return gts * lanes / 8 * 128.0 / 130.0;
}

// NCCL's src/graph/topo.h (AMD_BW, SKL_QPI_BW, SRP_QPI_BW, ERP_QPI_BW, BDW_QPI_BW): what GPU
// peer traffic reaches across sockets. The links' raw rates (4 x xGMI-2 at about 36 GB/s, UPI
// 2.0 at about 32 GB/s per link) are far higher; GPU peer traffic never sees them.
double inter_socket_bandwidth_gbs(CpuVendor vendor, int cpu_model) {
  if (vendor == CpuVendor::Intel) {
    // NCCL's model ranges for family 6 (topo.cc): 0xCF and up Emerald Rapids, 0x8F Sapphire
    // Rapids, 0x55 Skylake, older Broadwell.
    if (cpu_model >= 0xCF) return 40.0;
    if (cpu_model >= 0x8F) return 22.0;
    if (cpu_model >= 0x55) return 10.0;
    return 6.0;
  }
  return 16.0;  // AMD; also taken for an unknown CPU (the caller says so)
}

}  // namespace weft::predict
