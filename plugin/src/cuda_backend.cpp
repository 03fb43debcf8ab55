// The shim's backend on the real GPU runtime: weft::gpu::Communicator over CUDA IPC, with
// handles exchanged through NCCL itself (beside an NCCL communicator) or through Weft's own
// bootstraps (standalone).
#include <cuda_runtime.h>

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "weft/communicator/communicator.h"
#include "weft/communicator/transport.h"
#include "weft/cuda/cuda_network.h"
#include "weft/program/options.h"
#include "weft_backend.h"

namespace weft::plugin {

namespace {

gpu::Status cuda_failure(const char* what, cudaError_t error) {
  return gpu::Status::error(gpu::ErrorCode::CudaError,
                            fmt::format("{}: {}", what, cudaGetErrorString(error)));
}

// Makes `device` current for the scope and restores the caller's device after: the shim runs
// inside the application's threads and must not change their CUDA state.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ != device) status_ = cudaSetDevice(device);
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  cudaError_t status() const { return status_; }

 private:
  int previous_ = -1;
  cudaError_t status_ = cudaSuccess;
};

// The one collective a transport needs, done by the real NCCL: an in-place ncclAllGather of
// the records through a device buffer. Runs a few times per communicator, never per call.
class NcclBootstrap final : public gpu::Bootstrap {
 public:
  NcclBootstrap(ncclComm_t comm, int rank, int nranks, int device, const NcclFunctions& nccl)
      : comm_(comm), rank_(rank), nranks_(nranks), device_(device), nccl_(nccl) {}

  int rank() const override { return rank_; }
  int size() const override { return nranks_; }

  gpu::Status allgather(std::span<std::byte> data, std::size_t bytes_per_rank) override {
    if (bytes_per_rank == 0) return gpu::Status::success();
    if (data.size() != bytes_per_rank * static_cast<std::size_t>(nranks_)) {
      return gpu::Status::error(gpu::ErrorCode::InvalidArgument,
                                fmt::format("bootstrap allgather: {} bytes for {} ranks × {}",
                                            data.size(), nranks_, bytes_per_rank));
    }
    DeviceScope scope(device_);
    if (scope.status() != cudaSuccess) return cuda_failure("cudaSetDevice", scope.status());
    void* buffer = nullptr;
    cudaStream_t stream = nullptr;
    if (auto e = cudaMalloc(&buffer, data.size()); e != cudaSuccess) {
      return cuda_failure("cudaMalloc (bootstrap)", e);
    }
    gpu::Status status;
    auto* own = static_cast<std::byte*>(buffer) + bytes_per_rank * static_cast<std::size_t>(rank_);
    if (auto e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess) {
      status = cuda_failure("cudaStreamCreate (bootstrap)", e);
    } else if (auto e2 =
                   cudaMemcpy(own, data.data() + bytes_per_rank * static_cast<std::size_t>(rank_),
                              bytes_per_rank, cudaMemcpyHostToDevice);
               e2 != cudaSuccess) {
      status = cuda_failure("cudaMemcpy (bootstrap)", e2);
    } else if (auto r = nccl_.AllGather(own, buffer, bytes_per_rank, ncclUint8, comm_, stream);
               r != ncclSuccess) {
      status =
          gpu::Status::error(gpu::ErrorCode::SystemError,
                             fmt::format("ncclAllGather (bootstrap) failed: {}",
                                         nccl_.GetErrorString ? nccl_.GetErrorString(r) : "?"));
    } else if (auto e3 = cudaStreamSynchronize(stream); e3 != cudaSuccess) {
      status = cuda_failure("cudaStreamSynchronize (bootstrap)", e3);
    } else if (auto e4 = cudaMemcpy(data.data(), buffer, data.size(), cudaMemcpyDeviceToHost);
               e4 != cudaSuccess) {
      status = cuda_failure("cudaMemcpy (bootstrap)", e4);
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
    cudaFree(buffer);
    return status;
  }

 private:
  ncclComm_t comm_;
  int rank_;
  int nranks_;
  int device_;
  NcclFunctions nccl_;
};

class CudaWeftSide final : public WeftSide {
 public:
  CudaWeftSide(std::unique_ptr<gpu::Communicator> comm, int device)
      : comm_(std::move(comm)), device_(device) {}
  ~CudaWeftSide() override {
    comm_.reset();
    if (spare_receive_ != nullptr) {
      DeviceScope scope(device_);
      cudaFree(spare_receive_);
    }
  }

  gpu::Result<int> load(const ir::Algorithm& algorithm) override {
    DeviceScope scope(device_);
    auto handle = comm_->load(algorithm);
    if (!handle.ok()) return handle.status();
    return handle.value().id;
  }

  gpu::Result<gpu::PlannedCall> plan(int handle, const gpu::CallShape& call) const override {
    return comm_->plan(gpu::AlgorithmHandle{handle}, call);
  }

  gpu::Status run(const gpu::PlannedCall& planned, const CollectiveCall& call,
                  cudaStream_t stream) override {
    void* recvbuf = call.recvbuf;
    if (recvbuf == nullptr) {
      // NCCL lets non-root ranks of a reduce pass no receive buffer; an algorithm may still
      // stage data in its output there.
      const std::size_t bytes = planned.shape.count * size_of(planned.shape.dtype);
      if (bytes > spare_receive_bytes_) {
        DeviceScope scope(device_);
        if (spare_receive_ != nullptr) cudaFree(spare_receive_);
        spare_receive_ = nullptr;
        spare_receive_bytes_ = 0;
        if (auto e = cudaMalloc(&spare_receive_, bytes); e != cudaSuccess) {
          return cuda_failure("cudaMalloc (receive buffer of a non-root reduce rank)", e);
        }
        spare_receive_bytes_ = bytes;
      }
      recvbuf = spare_receive_;
    }
    return comm_->run(planned, call.sendbuf, recvbuf, stream);
  }

  gpu::Status async_error() const override { return comm_->async_error(); }
  std::string network() const override { return network_; }

  std::string network_;

 private:
  std::unique_ptr<gpu::Communicator> comm_;
  int device_;
  void* spare_receive_ = nullptr;
  std::size_t spare_receive_bytes_ = 0;
};

class CudaBackend final : public WeftBackend {
 public:
  gpu::Result<int> current_device() override {
    int device = -1;
    if (auto e = cudaGetDevice(&device); e != cudaSuccess) return cuda_failure("cudaGetDevice", e);
    return device;
  }

  gpu::Result<std::shared_ptr<gpu::Bootstrap>> nccl_bootstrap(ncclComm_t comm, int rank, int nranks,
                                                              int device,
                                                              const NcclFunctions& nccl) override {
    return std::shared_ptr<gpu::Bootstrap>(
        std::make_shared<NcclBootstrap>(comm, rank, nranks, device, nccl));
  }

  gpu::Result<std::unique_ptr<WeftSide>> create(std::shared_ptr<gpu::Bootstrap> bootstrap,
                                                int nranks, int rank, int device,
                                                const std::string& host) override {
    auto options = gpu::runtime_options_from_env(gpu::process_environment());
    if (!options.ok()) return options.status();
    DeviceScope scope(device);
    if (scope.status() != cudaSuccess) return cuda_failure("cudaSetDevice", scope.status());
    gpu::CudaNetworkOptions network;
    network.proxy = proxy::proxy_options_from_env(gpu::process_environment());
    network.host = host;
    auto transport =
        gpu::make_ipc_network_transport(std::move(bootstrap), nranks, {rank}, device, network);
    if (!transport.ok()) return transport.status();
    const std::string across = transport.value()->network();
    auto comm = gpu::Communicator::create(std::move(transport).value(), options.value());
    if (!comm.ok()) return comm.status();
    auto side = std::make_unique<CudaWeftSide>(std::move(comm).value(), device);
    side->network_ = across;
    return std::unique_ptr<WeftSide>(std::move(side));
  }
};

}  // namespace

std::unique_ptr<WeftBackend> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

}  // namespace weft::plugin
