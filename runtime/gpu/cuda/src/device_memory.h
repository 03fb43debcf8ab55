// Private to weft_gpu: owning handles for device memory and host-mapped memory. Freeing happens
// on the device the memory was allocated on.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "weft/program/status.h"

namespace weft::gpu {

class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  DeviceAllocation(DeviceAllocation&& other) noexcept;
  DeviceAllocation& operator=(DeviceAllocation&& other) noexcept;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  ~DeviceAllocation();

  // Allocates `bytes` (at least 1) on `device`, zeroed, synchronously. `what` names it in errors.
  static Result<DeviceAllocation> zeroed(int device, std::size_t bytes, std::string_view what);

  void* get() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }
  // Synchronous host-to-device copy into the allocation at `offset`.
  Status upload(std::span<const std::byte> data, std::size_t offset = 0) const;

 private:
  void reset();
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = -1;
};

// Pinned host memory mapped into the device's address space: the kernel writes its error report
// here and the host reads it without synchronising.
class MappedHostAllocation {
 public:
  MappedHostAllocation() = default;
  MappedHostAllocation(MappedHostAllocation&& other) noexcept;
  MappedHostAllocation& operator=(MappedHostAllocation&& other) noexcept;
  MappedHostAllocation(const MappedHostAllocation&) = delete;
  MappedHostAllocation& operator=(const MappedHostAllocation&) = delete;
  ~MappedHostAllocation();

  static Result<MappedHostAllocation> zeroed(std::size_t bytes);
  void* host() const { return host_; }
  void* device() const { return device_; }

 private:
  void reset();
  void* host_ = nullptr;
  void* device_ = nullptr;
};

}  // namespace weft::gpu
