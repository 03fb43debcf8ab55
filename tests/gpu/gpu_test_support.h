// Helpers of the GPU tests: an emulated communicator on CUDA device 0 with an algorithm loaded,
// and one call checked against the CPU reference executor (tests/support/emulation.h).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "builtin_algorithms.h"
#include "emulation.h"

namespace weft::gpu::testing {

inline std::unique_ptr<perf::PerfDevice> perf_device(int device) {
  auto made = perf::make_cuda_perf_device(device);
  INFO(made.status().str());
  REQUIRE(made.ok());
  return std::move(made.value());
}

inline std::unique_ptr<Emulation> emulate(const ir::Algorithm& algorithm,
                                          const RuntimeOptions& options = small_tiles(),
                                          int device = 0) {
  return emulate_over(make_emulation_transport(algorithm.ngpus, device), perf_device(device),
                      algorithm, options);
}

inline cudaStream_t stream_of(const Emulation& e) {
  return reinterpret_cast<cudaStream_t>(e.device->stream());
}

}  // namespace weft::gpu::testing
