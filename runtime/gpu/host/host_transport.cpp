// make_host_transport (transport.h): every rank in this process, regions in host memory. One
// participant, so nothing is exchanged: a peer's region is its address.
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "host_runtime.h"
#include "weft/communicator/transport.h"
#include "weft/program/device_abi.h"

namespace weft::gpu {

namespace {

class HostWindow final : public SharedWindow {
 public:
  std::vector<DeviceMemory> regions;  // by rank

  void* local(int rank) const override { return at(rank); }
  void* peer(int rank, int peer) const override { return at(rank) == nullptr ? nullptr : at(peer); }
  std::size_t bytes(int rank) const override {
    return at(rank) == nullptr ? 0 : regions[static_cast<std::size_t>(rank)].bytes();
  }

 private:
  void* at(int rank) const {
    if (rank < 0 || rank >= static_cast<int>(regions.size())) return nullptr;
    return regions[static_cast<std::size_t>(rank)].get();
  }
};

class HostTransport final : public Transport {
 public:
  explicit HostTransport(int nranks) : runtime_(host::make_host_runtime()) {
    for (int r = 0; r < nranks; ++r) ranks_.push_back(r);
  }

  std::string_view name() const override { return "host"; }
  int nranks() const override { return static_cast<int>(ranks_.size()); }
  std::span<const int> local_ranks() const override { return ranks_; }
  int device() const override { return 0; }
  DeviceKind device_kind() const override { return DeviceKind::Host; }
  std::shared_ptr<DeviceRuntime> device_runtime() const override { return runtime_; }
  PeerLink peer_link(int /*rank*/, int /*peer*/) const override {
    return {LinkKind::Host, "host mode: every rank in this process's memory"};
  }

  Result<std::unique_ptr<SharedWindow>> open_window(const WindowRequest& request) override {
    const std::span<const std::size_t> bytes = request.bytes_per_local_rank;
    if (bytes.size() != ranks_.size()) {
      return Status::error(ErrorCode::InternalError, "open_window: one size per local rank needed");
    }
    auto window = std::make_unique<HostWindow>();
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      auto region = runtime_->allocate(bytes[k], fmt::format("the FIFOs of rank {}", ranks_[k]));
      if (!region.ok()) return region.status();
      window->regions.push_back(std::move(region.value()));
    }
    return std::unique_ptr<SharedWindow>(std::move(window));
  }

  Status barrier() override { return {}; }

 private:
  std::shared_ptr<DeviceRuntime> runtime_;
  std::vector<int> ranks_;
};

}  // namespace

Result<std::shared_ptr<Transport>> make_host_transport(int nranks) {
  if (nranks < 1 || nranks > device::kMaxLocalRanks) {
    return Status::error(ErrorCode::InvalidArgument, fmt::format("host mode: 1 to {} ranks, not {}",
                                                                 device::kMaxLocalRanks, nranks));
  }
  return std::shared_ptr<Transport>(std::make_shared<HostTransport>(nranks));
}

}  // namespace weft::gpu
