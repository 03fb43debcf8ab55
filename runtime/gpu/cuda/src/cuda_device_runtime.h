// (Not named cuda_runtime.h: this folder is on the include path, and nvcc pre-includes CUDA's.)
// Private to weft_gpu: the DeviceRuntime of a CUDA device, which the CUDA transports hand to
// their communicators.
#pragma once

#include <memory>

#include "weft/communicator/device_runtime.h"

namespace weft::gpu {

// Queries the device's multiprocessor count when first needed.
std::shared_ptr<DeviceRuntime> make_cuda_runtime(int device);

}  // namespace weft::gpu
