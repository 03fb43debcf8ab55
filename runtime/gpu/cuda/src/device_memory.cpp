#include "device_memory.h"

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "cuda_check.h"

namespace weft::gpu {

DeviceAllocation::DeviceAllocation(DeviceAllocation&& other) noexcept
    : pointer_(std::exchange(other.pointer_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(std::exchange(other.device_, -1)) {}

DeviceAllocation& DeviceAllocation::operator=(DeviceAllocation&& other) noexcept {
  if (this != &other) {
    reset();
    pointer_ = std::exchange(other.pointer_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

DeviceAllocation::~DeviceAllocation() {
  reset();
}

void DeviceAllocation::reset() {
  if (pointer_ != nullptr) {
    DeviceScope scope(device_);
    cudaFree(pointer_);  // implicitly waits for kernels that may still use it
  }
  pointer_ = nullptr;
  bytes_ = 0;
}

Result<DeviceAllocation> DeviceAllocation::zeroed(int device, std::size_t bytes,
                                                  std::string_view what) {
  DeviceScope scope(device);
  if (!scope.status().ok()) return scope.status();
  DeviceAllocation allocation;
  allocation.device_ = device;
  allocation.bytes_ = std::max<std::size_t>(bytes, 1);
  if (const cudaError_t e = cudaMalloc(&allocation.pointer_, allocation.bytes_); e != cudaSuccess) {
    allocation.pointer_ = nullptr;
    return cuda_error(e, fmt::format("cudaMalloc({} bytes for {}) on device {}", allocation.bytes_,
                                     what, device));
  }
  // cudaMemset on the legacy stream, then wait: peers may write into this memory as soon as they
  // learn its address, which must not be before it is zero.
  WEFT_CUDA_TRY(cudaMemset(allocation.pointer_, 0, allocation.bytes_));
  WEFT_CUDA_TRY(cudaStreamSynchronize(nullptr));
  return allocation;
}

Status DeviceAllocation::upload(std::span<const std::byte> data, std::size_t offset) const {
  if (offset + data.size() > bytes_) {
    return Status::error(
        ErrorCode::InternalError,
        fmt::format("upload of {} bytes at {} into {} bytes", data.size(), offset, bytes_));
  }
  if (data.empty()) return {};
  DeviceScope scope(device_);
  WEFT_CUDA_TRY(cudaMemcpy(static_cast<char*>(pointer_) + offset, data.data(), data.size(),
                           cudaMemcpyHostToDevice));
  // The DMA from pageable memory may still be on its way when cudaMemcpy returns; a kernel on a
  // non-blocking stream would not wait for it. The copy runs on the legacy stream: wait for it.
  WEFT_CUDA_TRY(cudaStreamSynchronize(nullptr));
  return {};
}

MappedHostAllocation::MappedHostAllocation(MappedHostAllocation&& other) noexcept
    : host_(std::exchange(other.host_, nullptr)), device_(std::exchange(other.device_, nullptr)) {}

MappedHostAllocation& MappedHostAllocation::operator=(MappedHostAllocation&& other) noexcept {
  if (this != &other) {
    reset();
    host_ = std::exchange(other.host_, nullptr);
    device_ = std::exchange(other.device_, nullptr);
  }
  return *this;
}

MappedHostAllocation::~MappedHostAllocation() {
  reset();
}

void MappedHostAllocation::reset() {
  if (host_ != nullptr) cudaFreeHost(host_);
  host_ = nullptr;
  device_ = nullptr;
}

Result<MappedHostAllocation> MappedHostAllocation::zeroed(std::size_t bytes) {
  MappedHostAllocation allocation;
  WEFT_CUDA_TRY(
      cudaHostAlloc(&allocation.host_, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(allocation.host_, 0, bytes);
  WEFT_CUDA_TRY(cudaHostGetDevicePointer(&allocation.device_, allocation.host_, 0));
  return allocation;
}

}  // namespace weft::gpu
