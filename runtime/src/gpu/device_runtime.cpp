#include "weft/runtime/gpu/device_runtime.h"

#include <utility>

namespace weft::gpu {

std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Cuda: return "cuda";
    case DeviceKind::Host: return "host";
  }
  return "unknown";
}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    reset();
    pointer_ = std::exchange(other.pointer_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    release_ = std::exchange(other.release_, nullptr);
  }
  return *this;
}

void DeviceMemory::reset() {
  if (pointer_ != nullptr && release_) release_(pointer_);
  pointer_ = nullptr;
  bytes_ = 0;
  release_ = nullptr;
}

}  // namespace weft::gpu
