// Named machines: what `--topology NAME` gives without a file. Each preset's figures and their
// sources are in presets.cpp.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "weft/predict/topology_builder.h"

namespace weft::predict {

struct PresetInfo {
  std::string_view name;
  std::string_view description;  // one line, for `weftc topology --list`
};

// Every preset, in the order a listing shows them.
std::span<const PresetInfo> presets();

// The machine a preset names (one node), or nothing when no preset has that name.
std::optional<MachineDescription> preset_machine(std::string_view name);

// Figures of the GPUs the presets use, also what the XML reader assumes for a GPU it recognises.
struct GpuFigures {
  std::string_view model;       // "H100 SXM"
  int sm = 0;                   // compute capability x 10
  int nvlinks = 0;              // NVLink links per GPU (0: none)
  double memory_bandwidth_gbs;  // bytes copied per second within its memory (see presets.cpp)
};
const GpuFigures& h100_sxm();
const GpuFigures& a100_sxm();
const GpuFigures& a100_pcie();
const GpuFigures& v100_sxm();
// SXM GPUs no preset has, for topology files that name them by PCI device id.
const GpuFigures& h200_sxm();
const GpuFigures& h800_sxm();
const GpuFigures& a100_sxm_40gb();

// NVLink bandwidth per link and direction for a GPU generation (NVLink 2, 3 and 4 are all
// 25 GB/s per link and direction).
double nvlink_bandwidth_gbs(int sm);
// What GPU peer traffic gets across the link between two CPU sockets (or NUMA domains), per
// direction: NCCL's own figures by CPU, far below the link's raw rate.
double inter_socket_bandwidth_gbs(CpuVendor vendor, int cpu_model);
// PCIe bandwidth per direction: `gts` GT/s per lane (8 Gen3, 16 Gen4, 32 Gen5) times `lanes`,
// after the 128b/130b line code.
double pcie_bandwidth_gbs(double gts, int lanes);

}  // namespace weft::predict
