// make_host_network_transport (weft/host/host_network.h): the host transport's memory, the
// proxy's connections.
#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "host_runtime.h"
#include "weft/host/host_network.h"
#include "weft/program/device_abi.h"

namespace weft::gpu {

namespace {

class HostNetworkWindow final : public SharedWindow {
 public:
  HostNetworkWindow(std::shared_ptr<Bootstrap> bootstrap, std::vector<int> local_ranks, int nranks)
      : bootstrap_(std::move(bootstrap)),
        local_ranks_(std::move(local_ranks)),
        nranks_(nranks),
        regions_(local_ranks_.size()) {}

  void* local(int rank) const override {
    const int k = index_of(rank);
    return k < 0 ? nullptr : regions_[static_cast<std::size_t>(k)].get();
  }
  void* peer(int rank, int peer) const override {
    if (index_of(rank) < 0 || peer < 0 || peer >= nranks_) return nullptr;
    if (void* own = local(peer); own != nullptr) return own;
    return proxied_ ? proxied_->arrival_table(peer) : nullptr;
  }
  std::size_t bytes(int rank) const override {
    const int k = index_of(rank);
    return k < 0 ? 0 : regions_[static_cast<std::size_t>(k)].bytes();
  }
  std::span<const ProxiedSend> proxied_sends(int rank) const override {
    return proxied_ ? proxied_->sends(rank) : std::span<const ProxiedSend>{};
  }
  std::span<const ProxiedReceive> proxied_receives(int rank) const override {
    return proxied_ ? proxied_->receives(rank) : std::span<const ProxiedReceive>{};
  }
  Status close() override { return proxied_ ? proxied_->close(*bootstrap_) : Status{}; }

  int index_of(int rank) const {
    const auto it = std::find(local_ranks_.begin(), local_ranks_.end(), rank);
    return it == local_ranks_.end() ? -1 : static_cast<int>(it - local_ranks_.begin());
  }

  std::shared_ptr<Bootstrap> bootstrap_;
  std::vector<int> local_ranks_;
  int nranks_;
  std::vector<DeviceMemory> regions_;
  // Declared after the regions so that it goes first: the proxy stops posting into them.
  std::unique_ptr<proxy::ProxiedWindow> proxied_;
};

class HostNetworkTransport final : public Transport {
 public:
  HostNetworkTransport(std::shared_ptr<Bootstrap> bootstrap, int nranks, std::vector<int> ranks)
      : bootstrap_(std::move(bootstrap)),
        runtime_(host::make_host_runtime()),
        nranks_(nranks),
        ranks_(std::move(ranks)) {}

  Status start(const HostNetworkOptions& options) {
    auto who = proxy::gather_participants(*bootstrap_, nranks_, ranks_, options.host, true);
    if (!who.ok()) return who.status();
    if (!who.value().any_crossing()) {
      participants_ = std::move(who.value());
      return {};
    }
    auto started = proxy::Proxy::start(*bootstrap_, who.value(), runtime_, options.proxy);
    if (!started.ok()) return started.status();
    proxy_ = std::move(started.value());
    participants_ = proxy_->participants();
    return {};
  }

  std::string_view name() const override { return "host-network"; }
  int nranks() const override { return nranks_; }
  std::span<const int> local_ranks() const override { return ranks_; }
  int device() const override { return 0; }
  DeviceKind device_kind() const override { return DeviceKind::Host; }
  std::shared_ptr<DeviceRuntime> device_runtime() const override { return runtime_; }
  PeerLink peer_link(int rank, int peer) const override {
    if (peer < 0 || peer >= nranks_) return {LinkKind::Unknown, "no such rank"};
    if (!participants_.crosses(rank, peer)) {
      return {LinkKind::Host, "host mode: both ranks in this process's memory"};
    }
    return {LinkKind::Network, fmt::format("rank {} is on {}, through the proxy over {}", peer,
                                           participants_.where(peer), network())};
  }

  Result<std::unique_ptr<SharedWindow>> open_window(const WindowRequest& request) override {
    const std::span<const std::size_t> bytes = request.bytes_per_local_rank;
    if (bytes.size() != ranks_.size()) {
      return Status::error(ErrorCode::InternalError, "open_window: one size per local rank needed");
    }
    auto window = std::make_unique<HostNetworkWindow>(bootstrap_, ranks_, nranks_);
    // A failure still takes part in the proxy's exchange, so that the others fail too instead
    // of waiting for this participant until the rendezvous times out.
    Status local;
    std::vector<void*> regions;
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      auto region = runtime_->allocate(bytes[k], fmt::format("the FIFOs of rank {}", ranks_[k]));
      if (!region.ok()) {
        local = region.status();
        break;
      }
      regions.push_back(region.value().get());
      window->regions_[k] = std::move(region.value());
    }
    if (proxy_) {
      if (!local.ok()) regions.assign(ranks_.size(), nullptr);
      auto proxied = proxy_->open_window(*bootstrap_, request, regions);
      if (!local.ok()) return local;
      if (!proxied.ok()) return proxied.status();
      window->proxied_ = std::move(proxied.value());
    }
    if (!local.ok()) return local;
    return std::unique_ptr<SharedWindow>(std::move(window));
  }

  Status barrier() override { return bootstrap_->barrier(); }
  Status async_error() const override { return proxy_ ? proxy_->failure() : Status{}; }
  std::string locate(int rank) const override {
    if (!proxy_ || rank < 0 || rank >= nranks_) return {};
    const int me = participants_.me;
    if (participants_.owner[static_cast<std::size_t>(rank)] == me) return {};
    return fmt::format("{}, through the proxy over {}", participants_.where(rank), network());
  }
  std::string network() const override { return proxy_ ? proxy_->describe() : std::string{}; }
  std::string silent_hosts() const override { return proxy_ ? proxy_->silence() : std::string{}; }

 private:
  std::shared_ptr<Bootstrap> bootstrap_;
  std::shared_ptr<DeviceRuntime> runtime_;
  int nranks_;
  std::vector<int> ranks_;
  proxy::Participants participants_;
  std::shared_ptr<proxy::Proxy> proxy_;
};

}  // namespace

Result<std::shared_ptr<Transport>> make_host_network_transport(std::shared_ptr<Bootstrap> bootstrap,
                                                               int nranks,
                                                               std::vector<int> local_ranks,
                                                               HostNetworkOptions options) {
  if (!bootstrap) return Status::error(ErrorCode::InvalidArgument, "transport: no bootstrap");
  if (nranks < 1) {
    return Status::error(ErrorCode::InvalidArgument, fmt::format("transport: {} ranks", nranks));
  }
  if (local_ranks.empty() ||
      local_ranks.size() > static_cast<std::size_t>(device::kMaxLocalRanks)) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("transport: a participant drives 1 to {} ranks, not {}",
                                     device::kMaxLocalRanks, local_ranks.size()));
  }
  std::sort(local_ranks.begin(), local_ranks.end());
  auto transport =
      std::make_shared<HostNetworkTransport>(std::move(bootstrap), nranks, std::move(local_ranks));
  if (Status s = transport->start(options); !s.ok()) return s;
  return std::shared_ptr<Transport>(std::move(transport));
}

}  // namespace weft::gpu
