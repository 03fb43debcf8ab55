#include "weft/communicator/device_runtime.h"

#include <utility>

#include "weft/communicator/transport.h"

namespace weft::gpu {

std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Cuda:
      return "cuda";
    case DeviceKind::Host:
      return "host";
  }
  return "unknown";
}

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::SameDevice:
      return "the same device";
    case LinkKind::NVLink:
      return "NVLink";
    case LinkKind::PCIe:
      return "PCIe";
    case LinkKind::Host:
      return "host memory";
    case LinkKind::Network:
      return "the network, through the proxy";
    case LinkKind::Unknown:
      return "an unknown link";
  }
  return "an unknown link";
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
