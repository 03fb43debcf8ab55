// The shim's backend in host mode (standalone with WEFT_DEVICE=host): the interpreter kernel on
// CPU threads over the application's host buffers, each process's ranks in its own memory and
// every other process reached through the proxy. For NCCL programs tested where there is no GPU;
// it proves results, not speed (README, "Without a GPU: host mode").
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "weft/communicator/communicator.h"
#include "weft/host/host_network.h"
#include "weft/program/options.h"
#include "weft_backend.h"

namespace weft::plugin {

namespace {

class HostWeftSide final : public WeftSide {
 public:
  HostWeftSide(std::unique_ptr<gpu::Communicator> comm, std::string network)
      : comm_(std::move(comm)), network_(std::move(network)) {}
  ~HostWeftSide() override {
    comm_.reset();
    std::free(spare_receive_);
  }

  gpu::Result<int> load(const ir::Algorithm& algorithm) override {
    auto handle = comm_->load(algorithm);
    if (!handle.ok()) return handle.status();
    return handle.value().id;
  }

  gpu::Result<gpu::PlannedCall> plan(int handle, const gpu::CallShape& call) const override {
    return comm_->plan(gpu::AlgorithmHandle{handle}, call);
  }

  // The call has run to its end when this returns (host mode), whatever the stream.
  gpu::Status run(const gpu::PlannedCall& planned, const CollectiveCall& call,
                  cudaStream_t /*stream*/) override {
    void* recvbuf = call.recvbuf;
    if (recvbuf == nullptr) {
      // A non-root rank of a reduce may pass no receive buffer (as on the GPU path).
      const std::size_t bytes = planned.shape.count * size_of(planned.shape.dtype);
      if (bytes > spare_receive_bytes_) {
        std::free(spare_receive_);
        spare_receive_ = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
        spare_receive_bytes_ = spare_receive_ != nullptr ? bytes : 0;
        if (spare_receive_ == nullptr) {
          return gpu::Status::error(gpu::ErrorCode::SystemError,
                                    "out of host memory for a non-root reduce's receive buffer");
        }
      }
      recvbuf = spare_receive_;
    }
    return comm_->run(planned, call.sendbuf, recvbuf, nullptr);
  }

  gpu::Status async_error() const override { return comm_->async_error(); }
  std::string network() const override { return network_; }

 private:
  std::unique_ptr<gpu::Communicator> comm_;
  std::string network_;
  void* spare_receive_ = nullptr;
  std::size_t spare_receive_bytes_ = 0;
};

class HostBackend final : public WeftBackend {
 public:
  gpu::Result<int> current_device() override { return 0; }

  gpu::Result<std::shared_ptr<gpu::Bootstrap>> nccl_bootstrap(ncclComm_t, int, int, int,
                                                              const NcclFunctions&) override {
    return gpu::Status::error(gpu::ErrorCode::InvalidUsage,
                              "host mode (WEFT_DEVICE=host) serves standalone communicators only");
  }

  gpu::Result<std::unique_ptr<WeftSide>> create(std::shared_ptr<gpu::Bootstrap> bootstrap,
                                                int nranks, int rank, int /*device*/,
                                                const std::string& host) override {
    auto options = gpu::runtime_options_from_env(gpu::process_environment());
    if (!options.ok()) return options.status();
    gpu::HostNetworkOptions network;
    network.proxy = proxy::proxy_options_from_env(gpu::process_environment());
    network.host = host;
    auto transport =
        gpu::make_host_network_transport(std::move(bootstrap), nranks, {rank}, network);
    if (!transport.ok()) return transport.status();
    std::string across = transport.value()->network();
    auto comm = gpu::Communicator::create(std::move(transport).value(), options.value());
    if (!comm.ok()) return comm.status();
    return std::unique_ptr<WeftSide>(
        std::make_unique<HostWeftSide>(std::move(comm).value(), std::move(across)));
  }
};

}  // namespace

std::unique_ptr<WeftBackend> make_host_backend() {
  return std::make_unique<HostBackend>();
}

}  // namespace weft::plugin
