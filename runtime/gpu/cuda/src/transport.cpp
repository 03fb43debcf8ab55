// In-process and CUDA IPC transports (transport.h). Both start with one exchange of participant
// records (process, host, device, ranks) and share memory per window: same-process peers by
// address (with peer access between devices), other processes by cudaIpcMemHandle_t.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cuda_check.h"
#include "cuda_device_runtime.h"
#include "cuda_links.h"
#include "device_memory.h"
#include "weft/communicator/transport.h"
#include "weft/communicator/transport_records.h"
#include "weft/cuda/cuda_network.h"
#include "weft/program/device_abi.h"

namespace weft::gpu {

namespace {

constexpr int kMaxLocal = kMaxRecordRanks;
static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(WindowEntry::ipc_handle));

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

template <class Record>
Status allgather_records(Bootstrap& bootstrap, const Record& mine, std::vector<Record>& all) {
  all.assign(static_cast<std::size_t>(bootstrap.size()), Record{});
  all[static_cast<std::size_t>(bootstrap.rank())] = mine;
  return bootstrap.allgather(std::as_writable_bytes(std::span<Record>(all)), sizeof(Record));
}

enum class Mode { InProcess, Ipc };

class CudaWindow final : public SharedWindow {
 public:
  CudaWindow(int device, int nranks, std::vector<int> local_ranks)
      : device_(device),
        nranks_(nranks),
        local_ranks_(std::move(local_ranks)),
        peers_(local_ranks_.size(), std::vector<void*>(static_cast<std::size_t>(nranks), nullptr)),
        bytes_(local_ranks_.size(), 0) {}

  ~CudaWindow() override {
    DeviceScope scope(device_);
    for (void* opened : ipc_opened_) cudaIpcCloseMemHandle(opened);
  }

  void* local(int rank) const override {
    const int k = index_of(rank);
    return k < 0 ? nullptr : allocations_[static_cast<std::size_t>(k)].get();
  }
  void* peer(int rank, int peer) const override {
    const int k = index_of(rank);
    if (k < 0 || peer < 0 || peer >= nranks_) return nullptr;
    return peers_[static_cast<std::size_t>(k)][static_cast<std::size_t>(peer)];
  }
  std::size_t bytes(int rank) const override {
    const int k = index_of(rank);
    return k < 0 ? 0 : bytes_[static_cast<std::size_t>(k)];
  }

  int index_of(int rank) const {
    const auto it = std::find(local_ranks_.begin(), local_ranks_.end(), rank);
    return it == local_ranks_.end() ? -1 : static_cast<int>(it - local_ranks_.begin());
  }

  std::span<const ProxiedSend> proxied_sends(int rank) const override {
    return proxied_ ? proxied_->sends(rank) : std::span<const ProxiedSend>{};
  }
  std::span<const ProxiedReceive> proxied_receives(int rank) const override {
    return proxied_ ? proxied_->receives(rank) : std::span<const ProxiedReceive>{};
  }
  Status close() override {
    return proxied_ && bootstrap_ ? proxied_->close(*bootstrap_) : Status{};
  }

  int device_;
  int nranks_;
  std::vector<int> local_ranks_;
  std::vector<DeviceAllocation> allocations_;
  std::vector<std::vector<void*>> peers_;  // [local index][rank]
  std::vector<std::size_t> bytes_;
  std::vector<void*> ipc_opened_;
  // The connections to other hosts' ranks, and the rendezvous its closing meets at. Declared
  // last, so that they go first: the proxy stops posting into the regions before they are freed.
  std::shared_ptr<Bootstrap> bootstrap_;
  std::unique_ptr<proxy::ProxiedWindow> proxied_;
};

class CudaTransport final : public Transport {
 public:
  CudaTransport(Mode mode, std::shared_ptr<Bootstrap> bootstrap, int nranks,
                std::vector<int> local_ranks, int device,
                std::optional<CudaNetworkOptions> network = std::nullopt)
      : mode_(mode),
        bootstrap_(std::move(bootstrap)),
        nranks_(nranks),
        local_ranks_(std::move(local_ranks)),
        device_(device),
        runtime_(make_cuda_runtime(device)),
        network_(std::move(network)) {}

  std::string_view name() const override {
    return mode_ == Mode::InProcess ? "in-process" : "cuda-ipc";
  }
  int nranks() const override { return nranks_; }
  std::span<const int> local_ranks() const override { return local_ranks_; }
  int device() const override { return device_; }
  DeviceKind device_kind() const override { return DeviceKind::Cuda; }
  std::shared_ptr<DeviceRuntime> device_runtime() const override { return runtime_; }
  Status barrier() override { return bootstrap_->barrier(); }
  Status async_error() const override { return proxy_ ? proxy_->failure() : Status{}; }
  std::string locate(int rank) const override {
    if (!proxy_ || rank < 0 || rank >= nranks_ ||
        !who_.participants_cross(who_.me, owner_[static_cast<std::size_t>(rank)])) {
      return {};
    }
    return fmt::format("{}, through the proxy over {}", who_.where(rank), network());
  }
  std::string network() const override { return proxy_ ? proxy_->describe() : std::string{}; }
  std::string silent_hosts() const override { return proxy_ ? proxy_->silence() : std::string{}; }

  PeerLink peer_link(int rank, int peer) const override {
    if (peer < 0 || peer >= nranks_ || owner_.empty()) return {LinkKind::Unknown, "no such rank"};
    if (proxy_ && who_.crosses(rank, peer)) {
      return {LinkKind::Network, fmt::format("rank {} is on {}, through the proxy over {}", peer,
                                             who_.where(peer), network())};
    }
    const ParticipantRecord& who =
        participants_[static_cast<std::size_t>(owner_[static_cast<std::size_t>(peer)])];
    const ParticipantRecord& me = participants_[static_cast<std::size_t>(bootstrap_->rank())];
    if (who.process == me.process && who.device == device_) {
      return {LinkKind::SameDevice, fmt::format("both on device {}", device_)};
    }
    const std::string_view bus(who.bus_id, strnlen(who.bus_id, sizeof(who.bus_id)));
    if (!bus.empty() && bus == std::string_view(me.bus_id, strnlen(me.bus_id, sizeof(me.bus_id)))) {
      return {LinkKind::SameDevice, fmt::format("both on the GPU at {}", bus)};
    }
    return cuda_peer_link(device_, bus);
  }

  Status introduce() {
    ParticipantRecord mine;
    mine.nranks = nranks_;
    mine.device = device_;
    mine.local_count = static_cast<std::int32_t>(local_ranks_.size());
    mine.pid = static_cast<std::uint64_t>(::getpid());
    mine.process = process_token();
    const std::string host = network_ ? network_->host : hostname();
    mine.host = std::hash<std::string>{}(host);
    host.copy(mine.host_name, sizeof(mine.host_name) - 1);
    const std::string bus = cuda_bus_id(device_);
    bus.copy(mine.bus_id, sizeof(mine.bus_id) - 1);
    std::copy(local_ranks_.begin(), local_ranks_.end(), mine.ranks);
    if (auto s = allgather_records(*bootstrap_, mine, participants_); !s.ok()) return s;

    if (auto s = check_participants(participants_, nranks_, bootstrap_->rank(),
                                    mode_ == Mode::InProcess, name(), owner_, network_.has_value());
        !s.ok()) {
      return s;
    }
    if (!network_) return {};
    // Ranks of other hosts are reached through the proxy; this host's by CUDA IPC.
    who_.hosts.clear();
    for (const ParticipantRecord& r : participants_) {
      who_.hosts.emplace_back(r.host_name, strnlen(r.host_name, sizeof(r.host_name)));
    }
    who_.owner = owner_;
    who_.me = bootstrap_->rank();
    who_.every_process = false;
    if (!who_.any_crossing()) return {};
    auto started = proxy::Proxy::start(*bootstrap_, who_, runtime_, network_->proxy);
    if (!started.ok()) return started.status();
    proxy_ = std::move(started.value());
    return {};
  }

  Result<std::unique_ptr<SharedWindow>> open_window(const WindowRequest& request) override {
    const std::span<const std::size_t> bytes = request.bytes_per_local_rank;
    const std::uint64_t fingerprint = request.fingerprint;
    if (bytes.size() != local_ranks_.size()) {
      return Status::error(ErrorCode::InternalError, "open_window: one size per local rank needed");
    }
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    auto window = std::make_unique<CudaWindow>(device_, nranks_, local_ranks_);
    WindowRecord mine;
    mine.fingerprint = fingerprint;
    mine.count = static_cast<std::int32_t>(local_ranks_.size());
    Status failure;
    for (std::size_t k = 0; k < local_ranks_.size() && failure.ok(); ++k) {
      auto allocation = DeviceAllocation::zeroed(
          device_, bytes[k], fmt::format("the FIFOs of rank {}", local_ranks_[k]));
      if (!allocation.ok()) {
        failure = allocation.status();
        break;
      }
      WindowEntry& entry = mine.entries[k];
      entry.rank = local_ranks_[k];
      entry.bytes = allocation.value().bytes();
      entry.address = reinterpret_cast<std::uintptr_t>(allocation.value().get());
      if (mode_ == Mode::Ipc) {
        cudaIpcMemHandle_t handle{};
        if (const cudaError_t e = cudaIpcGetMemHandle(&handle, allocation.value().get());
            e != cudaSuccess) {
          failure = cuda_error(e, "cudaIpcGetMemHandle");
        }
        std::memcpy(entry.ipc_handle.data(), &handle, sizeof(handle));
      }
      window->bytes_[k] = entry.bytes;
      window->allocations_.push_back(std::move(allocation.value()));
    }
    // Everyone takes part in the exchange even after a local failure, so that the others fail
    // with a message instead of waiting for this participant until the bootstrap times out.
    if (!failure.ok()) mine.count = -1;
    std::vector<WindowRecord> all;
    if (auto s = allgather_records(*bootstrap_, mine, all); !s.ok()) return s;
    if (!failure.ok()) return failure;
    if (auto s = check_window_records(all, participants_, owner_, nranks_, bootstrap_->rank(),
                                      fingerprint);
        !s.ok()) {
      return s;
    }
    const ProcessToken& mine_process =
        participants_[static_cast<std::size_t>(bootstrap_->rank())].process;
    // Every participant opens the other processes' regions on its host (a failure there ends
    // this participant alone: the others then wait in the proxy's exchange until it times out).
    Status opened;
    for (std::size_t p = 0; p < all.size() && opened.ok(); ++p) {
      const ParticipantRecord& who = participants_[p];
      if (proxy_ && who_.participants_cross(who_.me, static_cast<int>(p))) continue;
      const bool same_process = who.process == mine_process;
      for (int e = 0; e < all[p].count && e < kMaxLocal; ++e) {
        const WindowEntry& entry = all[p].entries[e];
        void* address = nullptr;
        if (same_process) {
          address = reinterpret_cast<void*>(static_cast<std::uintptr_t>(entry.address));
          if (who.device != device_) {
            if (auto s = enable_peer_access(who.device); !s.ok()) {
              opened = s;
              break;
            }
          }
        } else {
          cudaIpcMemHandle_t handle{};
          std::memcpy(&handle, entry.ipc_handle.data(), sizeof(handle));
          if (const cudaError_t err =
                  cudaIpcOpenMemHandle(&address, handle, cudaIpcMemLazyEnablePeerAccess);
              err != cudaSuccess) {
            opened = cuda_error(
                err, fmt::format("cudaIpcOpenMemHandle (region of rank {})", entry.rank));
            break;
          }
          window->ipc_opened_.push_back(address);
        }
        for (auto& row : window->peers_) row[static_cast<std::size_t>(entry.rank)] = address;
      }
    }
    if (!opened.ok()) return opened;
    if (proxy_) {
      // The ranks of other hosts: the proxy's ends of their connections, and their arrival
      // tables in its memory.
      std::vector<void*> regions;
      for (const DeviceAllocation& allocation : window->allocations_) {
        regions.push_back(allocation.get());
      }
      auto proxied = proxy_->open_window(*bootstrap_, request, regions);
      if (!proxied.ok()) return proxied.status();
      window->proxied_ = std::move(proxied.value());
      window->bootstrap_ = bootstrap_;
      for (int rank = 0; rank < nranks_; ++rank) {
        if (void* table = window->proxied_->arrival_table(rank)) {
          for (auto& row : window->peers_) row[static_cast<std::size_t>(rank)] = table;
        }
      }
    }
    return std::unique_ptr<SharedWindow>(std::move(window));
  }

 private:
  Status enable_peer_access(int peer_device) {
    int can = 0;
    WEFT_CUDA_TRY(cudaDeviceCanAccessPeer(&can, device_, peer_device));
    if (can == 0) {
      return Status::error(ErrorCode::InvalidUsage,
                           fmt::format("device {} cannot access device {} (no peer access); the "
                                       "in-process transport needs it",
                                       device_, peer_device));
    }
    const cudaError_t e = cudaDeviceEnablePeerAccess(peer_device, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();  // not an error here; clear it
      return {};
    }
    if (e != cudaSuccess)
      return cuda_error(e, fmt::format("cudaDeviceEnablePeerAccess({})", peer_device));
    return {};
  }

  Mode mode_;
  std::shared_ptr<Bootstrap> bootstrap_;
  int nranks_;
  std::vector<int> local_ranks_;
  int device_;
  std::shared_ptr<DeviceRuntime> runtime_;
  std::vector<ParticipantRecord> participants_;
  std::optional<CudaNetworkOptions> network_;
  proxy::Participants who_;  // hosts and owners, as the proxy sees them
  std::shared_ptr<proxy::Proxy> proxy_;
  std::vector<int> owner_;
};

Result<std::shared_ptr<Transport>> make(Mode mode, std::shared_ptr<Bootstrap> bootstrap, int nranks,
                                        std::vector<int> local_ranks, int device,
                                        std::optional<CudaNetworkOptions> network = std::nullopt) {
  if (!bootstrap) return Status::error(ErrorCode::InvalidArgument, "transport: no bootstrap");
  if (nranks < 1) {
    return Status::error(ErrorCode::InvalidArgument, fmt::format("transport: {} ranks", nranks));
  }
  if (local_ranks.empty() || static_cast<int>(local_ranks.size()) > kMaxLocal) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("transport: a participant drives 1 to {} ranks, not {}",
                                     kMaxLocal, local_ranks.size()));
  }
  std::sort(local_ranks.begin(), local_ranks.end());
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return Status::error(ErrorCode::CudaError, "transport: no CUDA device is visible");
  }
  if (device < 0) {
    WEFT_CUDA_TRY(cudaGetDevice(&device));
  }
  if (device >= count) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("transport: device {} of {}", device, count));
  }
  auto transport = std::make_shared<CudaTransport>(
      mode, std::move(bootstrap), nranks, std::move(local_ranks), device, std::move(network));
  if (auto s = transport->introduce(); !s.ok()) return s;
  return std::shared_ptr<Transport>(std::move(transport));
}

}  // namespace

Result<std::shared_ptr<Transport>> make_emulation_transport(int nranks, int device) {
  if (nranks < 1 || nranks > kMaxLocal) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("emulation: 1 to {} ranks, not {}", kMaxLocal, nranks));
  }
  std::vector<int> ranks(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) ranks[static_cast<std::size_t>(r)] = r;
  return make(Mode::InProcess, make_single_participant_bootstrap(), nranks, std::move(ranks),
              device);
}

Result<std::shared_ptr<Transport>> make_in_process_transport(std::shared_ptr<Bootstrap> bootstrap,
                                                             int nranks,
                                                             std::vector<int> local_ranks,
                                                             int device) {
  return make(Mode::InProcess, std::move(bootstrap), nranks, std::move(local_ranks), device);
}

Result<std::shared_ptr<Transport>> make_ipc_transport(std::shared_ptr<Bootstrap> bootstrap,
                                                      int nranks, std::vector<int> local_ranks,
                                                      int device) {
  return make(Mode::Ipc, std::move(bootstrap), nranks, std::move(local_ranks), device);
}

Result<std::shared_ptr<Transport>> make_ipc_network_transport(std::shared_ptr<Bootstrap> bootstrap,
                                                              int nranks,
                                                              std::vector<int> local_ranks,
                                                              int device,
                                                              CudaNetworkOptions options) {
  return make(Mode::Ipc, std::move(bootstrap), nranks, std::move(local_ranks), device,
              std::move(options));
}

}  // namespace weft::gpu
