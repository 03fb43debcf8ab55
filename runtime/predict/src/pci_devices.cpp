// The device ids follow the PCI id database (pci-ids.ucw.cz, vendors 10de and 15b3); the figures
// each names are in presets.cpp with their sources.
#include "pci_devices.h"

#include <algorithm>
#include <array>

namespace weft::predict {
namespace {

// PCIe cards are listed too, so that a file naming one is not taken for an SXM baseboard by its
// compute capability alone.
const std::array<NvidiaGpuDevice, 14> kNvidiaGpus{{
    {0x20b0, "A100 SXM4 40GB", &a100_sxm_40gb()},
    {0x20b2, "A100 SXM4 80GB", &a100_sxm()},
    {0x2324, "H800 SXM5 80GB", &h800_sxm()},
    {0x2330, "H100 SXM5 80GB", &h100_sxm()},
    {0x2335, "H200 SXM 141GB", &h200_sxm()},
    {0x20b1, "A100 PCIe 40GB", nullptr},
    {0x20b5, "A100 PCIe 80GB", nullptr},
    {0x20b7, "A30 PCIe", nullptr},
    {0x20f1, "A100 PCIe 40GB", nullptr},
    {0x2321, "H100 NVL", nullptr},
    {0x2322, "H800 PCIe", nullptr},
    {0x2331, "H100 PCIe", nullptr},
    {0x233b, "H200 NVL", nullptr},
    {0x26b9, "L40S", nullptr},
}};

// Line rates: ConnectX-5 EDR / 100 GbE, ConnectX-6 HDR 200 Gb/s, ConnectX-7 NDR 400 Gb/s
// (NVIDIA's ConnectX product briefs).
const std::array<NicDevice, 4> kMellanoxNics{{
    {0x1017, "ConnectX-5", 100.0 / 8},
    {0x1019, "ConnectX-5 Ex", 100.0 / 8},
    {0x101b, "ConnectX-6", 200.0 / 8},
    {0x1021, "ConnectX-7", 400.0 / 8},
}};

template <typename Device, std::size_t N>
const Device* find_device(const std::array<Device, N>& table, int device) {
  const auto it =
      std::find_if(table.begin(), table.end(), [&](const Device& d) { return d.device == device; });
  return it == table.end() ? nullptr : &*it;
}

}  // namespace

const NvidiaGpuDevice* nvidia_gpu_device(int device) {
  return find_device(kNvidiaGpus, device);
}

const NicDevice* mellanox_nic_device(int device) {
  return find_device(kMellanoxNics, device);
}

}  // namespace weft::predict
