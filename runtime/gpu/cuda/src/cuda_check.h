// Private to weft_gpu: CUDA runtime errors as Status, and a scoped current device.
#pragma once

#include <string_view>

#include <cuda_runtime_api.h>

#include "weft/program/status.h"

namespace weft::gpu {

// CudaError naming the call: "cudaMalloc (region of rank 3): out of memory".
Status cuda_error(cudaError_t error, std::string_view call);

#define WEFT_CUDA_TRY(call)                                                             \
  do {                                                                                  \
    if (const cudaError_t weft_cuda_error_ = (call); weft_cuda_error_ != cudaSuccess) { \
      return ::weft::gpu::cuda_error(weft_cuda_error_, #call);                          \
    }                                                                                   \
  } while (0)

// Makes `device` current for the scope and restores the previous one: the runtime must not
// change the caller's current device behind its back.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  const Status& status() const { return status_; }

 private:
  int previous_ = -1;
  Status status_;
};

}  // namespace weft::gpu
