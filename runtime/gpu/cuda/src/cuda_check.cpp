#include "cuda_check.h"

#include <fmt/format.h>

namespace weft::gpu {

Status cuda_error(cudaError_t error, std::string_view call) {
  return Status::error(
      ErrorCode::CudaError,
      fmt::format("{}: {} ({})", call, cudaGetErrorString(error), cudaGetErrorName(error)));
}

DeviceScope::DeviceScope(int device) {
  if (const cudaError_t e = cudaGetDevice(&previous_); e != cudaSuccess) {
    status_ = cuda_error(e, "cudaGetDevice");
    previous_ = -1;
    return;
  }
  if (previous_ != device) {
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
      status_ = cuda_error(e, fmt::format("cudaSetDevice({})", device));
    }
  }
}

DeviceScope::~DeviceScope() {
  int current = -1;
  if (previous_ >= 0 && cudaGetDevice(&current) == cudaSuccess && current != previous_) {
    cudaSetDevice(previous_);
  }
}

}  // namespace weft::gpu
