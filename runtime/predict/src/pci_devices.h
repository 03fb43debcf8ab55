// PCI device ids the topology reader recognises: NVIDIA GPUs (which are SXM parts of 8-GPU
// NVSwitch baseboards, which PCIe cards) and Mellanox NICs (their line rate). Cloud vendors'
// topology files name devices by these ids and leave out what NCCL detects on the live machine
// (NVLink, NIC speeds); the ids let the reader state what such a file leaves out.
#pragma once

#include <string_view>

#include "weft/predict/presets.h"

namespace weft::predict {

constexpr int kNvidiaVendor = 0x10de;
constexpr int kMellanoxVendor = 0x15b3;

struct NvidiaGpuDevice {
  int device = 0;
  std::string_view name;  // as the PCI id database names it: "H100 SXM5 80GB"
  // The GPU's figures when it is an SXM part, sold only on 8-GPU baseboards whose GPUs are
  // joined through NVSwitch (HGX); nullptr for a PCIe card (or NVL pair), which has no NVSwitch.
  const GpuFigures* sxm_figures = nullptr;
};

// The NVIDIA GPU with this PCI device id (vendor 0x10de), or nullptr when Weft does not know it.
const NvidiaGpuDevice* nvidia_gpu_device(int device);

struct NicDevice {
  int device = 0;
  std::string_view name;  // "ConnectX-7"
  double speed_gbs = 0;   // its line rate in GB/s per direction
};

// The Mellanox (NVIDIA networking) NIC with this PCI device id (vendor 0x15b3), or nullptr.
const NicDevice* mellanox_nic_device(int device);

}  // namespace weft::predict
