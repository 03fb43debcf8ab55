// Private to weft_gpu: how this process's CUDA device reaches another GPU of the host, from NVML
// (the driver's own library, loaded at run time): over NVLink (a direct link, or both GPUs on an
// NVSwitch fabric) or not. LL128 is enabled only over NVLink, as NCCL does.
#pragma once

#include <string>
#include <string_view>

#include "weft/communicator/transport.h"

namespace weft::gpu {

// The PCI address of CUDA device `device` ("0000:18:00.0"), empty if CUDA cannot say.
std::string cuda_bus_id(int device);

// How CUDA device `device` reaches the GPU at PCI address `peer_bus_id`: NVLink, PCIe, or Unknown
// when NVML cannot tell (the detail says why).
PeerLink cuda_peer_link(int device, std::string_view peer_bus_id);

}  // namespace weft::gpu
