#include "cuda_links.h"

#include <dlfcn.h>

#include <cstdio>
#include <optional>
#include <tuple>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace weft::gpu {

namespace {

// The few NVML declarations needed, as the driver's libnvidia-ml.so.1 exports them (NVML's ABI
// has kept these since CUDA 10; nvml.h is not part of every toolkit installation).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];
};
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS on Hopper
constexpr int kNvlinkDeviceTypeSwitch = 2;

// "0000:18:00.0" and "00000000:18:00.0" name the same function: compare the numbers.
std::optional<std::tuple<unsigned, unsigned, unsigned, unsigned>> parse_bus_id(
    std::string_view id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  const std::string text(id);
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) {
    return std::nullopt;
  }
  return std::tuple{domain, bus, device, function};
}

class Nvml {
 public:
  Nvml() {
    handle_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) return;
    init_ = reinterpret_cast<NvmlReturn (*)()>(dlsym(handle_, "nvmlInit_v2"));
    shutdown_ = reinterpret_cast<NvmlReturn (*)()>(dlsym(handle_, "nvmlShutdown"));
    by_bus_id_ = reinterpret_cast<NvmlReturn (*)(const char*, NvmlDevice*)>(
        dlsym(handle_, "nvmlDeviceGetHandleByPciBusId_v2"));
    link_state_ = reinterpret_cast<NvmlReturn (*)(NvmlDevice, unsigned, int*)>(
        dlsym(handle_, "nvmlDeviceGetNvLinkState"));
    remote_pci_ = reinterpret_cast<NvmlReturn (*)(NvmlDevice, unsigned, NvmlPciInfo*)>(
        dlsym(handle_, "nvmlDeviceGetNvLinkRemotePciInfo_v2"));
    remote_type_ = reinterpret_cast<NvmlReturn (*)(NvmlDevice, unsigned, int*)>(
        dlsym(handle_, "nvmlDeviceGetNvLinkRemoteDeviceType"));
    ready_ = init_ != nullptr && shutdown_ != nullptr && by_bus_id_ != nullptr &&
             link_state_ != nullptr && remote_pci_ != nullptr && init_() == kNvmlSuccess;
  }
  ~Nvml() {
    if (ready_) shutdown_();
    if (handle_ != nullptr) dlclose(handle_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ready() const { return ready_; }

  // The active NVLinks of the GPU at `bus_id`: whether one leads to `peer`, and whether one
  // leads to an NVSwitch.
  struct Links {
    bool found = false;
    bool to_peer = false;
    bool to_switch = false;
  };
  Links links(std::string_view bus_id, std::string_view peer) const {
    Links result;
    NvmlDevice device = nullptr;
    if (by_bus_id_(std::string(bus_id).c_str(), &device) != kNvmlSuccess) return result;
    result.found = true;
    const auto peer_id = parse_bus_id(peer);
    for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
      int active = 0;
      if (link_state_(device, link, &active) != kNvmlSuccess || active == 0) continue;
      NvmlPciInfo remote{};
      if (remote_pci_(device, link, &remote) == kNvmlSuccess && peer_id &&
          parse_bus_id(remote.bus_id) == peer_id) {
        result.to_peer = true;
      }
      int type = -1;
      if (remote_type_ != nullptr && remote_type_(device, link, &type) == kNvmlSuccess &&
          type == kNvlinkDeviceTypeSwitch) {
        result.to_switch = true;
      }
    }
    return result;
  }

 private:
  void* handle_ = nullptr;
  bool ready_ = false;
  NvmlReturn (*init_)() = nullptr;
  NvmlReturn (*shutdown_)() = nullptr;
  NvmlReturn (*by_bus_id_)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*link_state_)(NvmlDevice, unsigned, int*) = nullptr;
  NvmlReturn (*remote_pci_)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  NvmlReturn (*remote_type_)(NvmlDevice, unsigned, int*) = nullptr;
};

}  // namespace

std::string cuda_bus_id(int device) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof(id), device) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  return id;
}

PeerLink cuda_peer_link(int device, std::string_view peer_bus_id) {
  const std::string mine = cuda_bus_id(device);
  if (mine.empty() || peer_bus_id.empty()) {
    return {LinkKind::Unknown, "a GPU's PCI address is unknown"};
  }
  const Nvml nvml;
  if (!nvml.ready()) {
    return {LinkKind::Unknown, "NVML (libnvidia-ml.so.1) is not available to tell the link"};
  }
  const Nvml::Links a = nvml.links(mine, peer_bus_id);
  const Nvml::Links b = nvml.links(peer_bus_id, mine);
  if (!a.found) return {LinkKind::Unknown, fmt::format("NVML does not know GPU {}", mine)};
  if (a.to_peer)
    return {LinkKind::NVLink, fmt::format("{} has an NVLink to {}", mine, peer_bus_id)};
  if (a.to_switch && b.found && b.to_switch) {
    return {LinkKind::NVLink, fmt::format("{} and {} are both on NVSwitch", mine, peer_bus_id)};
  }
  return {LinkKind::PCIe, fmt::format("no NVLink between {} and {}", mine, peer_bus_id)};
}

}  // namespace weft::gpu
