// Host mode's DeviceRuntime: host memory, the interpreter compiled by the C++ compiler
// (kernel/kernels.h in namespace device::host), every launch run to completion on OS threads.
#pragma once

#include <memory>

#include "weft/communicator/device_runtime.h"

namespace weft::gpu::host {

// At most this many OS threads in one launch: the residency check's limit in host mode.
inline constexpr int kThreadBudget = 16384;
// Threads per CTA: two warps at most (every warp-level path still runs with several warps), one
// at least (LL128 needs whole warps).
inline constexpr int kMaxThreadsPerCta = 32;
inline constexpr int kMinThreadsPerCta = 32;

std::shared_ptr<DeviceRuntime> make_host_runtime();

}  // namespace weft::gpu::host
