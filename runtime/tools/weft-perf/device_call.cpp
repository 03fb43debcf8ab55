#include "device_call.h"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

namespace weft::perf {

namespace {

gpu::Status cuda(cudaError_t e, std::string_view call) {
  if (e == cudaSuccess) return {};
  return gpu::Status::error(gpu::ErrorCode::CudaError,
                            fmt::format("{}: {}", call, cudaGetErrorString(e)));
}

#define PERF_CUDA(call)                                     \
  do {                                                      \
    if (auto s_ = cuda((call), #call); !s_.ok()) return s_; \
  } while (0)

}  // namespace

gpu::Result<std::unique_ptr<DeviceCall>> DeviceCall::create(const gpu::Communicator& comm,
                                                            const ir::Algorithm& algo,
                                                            std::size_t count, DataType dtype,
                                                            bool in_place) {
  std::unique_ptr<DeviceCall> call(new DeviceCall);
  call->device_ = comm.device();
  call->ranks_.assign(comm.local_ranks().begin(), comm.local_ranks().end());
  call->count_ = count;
  call->dtype_ = dtype;
  call->in_place_ = in_place;
  PERF_CUDA(cudaSetDevice(call->device_));
  for (int rank : call->ranks_) {
    const CallLayout layout = call_layout(algo, rank, count, size_of(dtype), in_place);
    void* recv = nullptr;
    void* send = nullptr;
    PERF_CUDA(cudaMalloc(&recv, std::max<std::size_t>(layout.recv_bytes, 16)));
    call->recv_.push_back(recv);
    if (!in_place) {
      PERF_CUDA(cudaMalloc(&send, std::max<std::size_t>(layout.send_bytes, 16)));
      call->send_.push_back(send);
    }
    gpu::RankBuffers buffers;
    if (in_place) {
      buffers.sendbuf = static_cast<char*>(recv) + layout.send_offset;
      buffers.recvbuf = static_cast<char*>(recv) + layout.recv_offset;
    } else {
      buffers.sendbuf = send;
      buffers.recvbuf = recv;
    }
    call->calls_.push_back(buffers);
    call->layouts_.push_back(layout);
  }
  return call;
}

DeviceCall::~DeviceCall() {
  cudaSetDevice(device_);
  for (void* p : send_) cudaFree(p);
  for (void* p : recv_) cudaFree(p);
}

gpu::Status DeviceCall::upload(const Reference& reference) const {
  PERF_CUDA(cudaSetDevice(device_));
  for (std::size_t k = 0; k < ranks_.size(); ++k) {
    const cpu::RankBuffers& initial = reference.initial.at(static_cast<std::size_t>(ranks_[k]));
    const auto& image = device_image(initial, in_place_);
    if (image.size() != layouts_[k].recv_bytes) {
      return gpu::Status::error(gpu::ErrorCode::InternalError,
                                fmt::format("rank {}: reference buffer of {} bytes, device buffer "
                                            "of {}",
                                            ranks_[k], image.size(), layouts_[k].recv_bytes));
    }
    PERF_CUDA(cudaMemcpy(recv_[k], image.data(), image.size(), cudaMemcpyHostToDevice));
    if (!in_place_) {
      const auto& send = send_image(initial);
      PERF_CUDA(cudaMemcpy(send_[k], send.data(), std::min(send.size(), layouts_[k].send_bytes),
                           cudaMemcpyHostToDevice));
    }
  }
  return {};
}

gpu::Status DeviceCall::fill(unsigned char byte) const {
  PERF_CUDA(cudaSetDevice(device_));
  for (std::size_t k = 0; k < ranks_.size(); ++k) {
    PERF_CUDA(cudaMemset(recv_[k], byte, layouts_[k].recv_bytes));
    if (!in_place_) PERF_CUDA(cudaMemset(send_[k], byte, layouts_[k].send_bytes));
  }
  PERF_CUDA(cudaDeviceSynchronize());
  return {};
}

gpu::Status DeviceCall::run(gpu::Communicator& comm, gpu::AlgorithmHandle handle, ReduceOp op,
                            int root, gpu::StreamHandle stream) const {
  return comm.run(handle, calls_, count_, dtype_, op, root, stream);
}

gpu::Result<std::size_t> DeviceCall::count_wrong(const Reference& reference) const {
  PERF_CUDA(cudaSetDevice(device_));
  std::size_t wrong = 0;
  std::vector<std::byte> found;
  for (std::size_t k = 0; k < ranks_.size(); ++k) {
    const auto& expected =
        device_image(reference.expected.at(static_cast<std::size_t>(ranks_[k])), in_place_);
    found.resize(layouts_[k].recv_bytes);
    PERF_CUDA(cudaMemcpy(found.data(), recv_[k], found.size(), cudaMemcpyDeviceToHost));
    wrong += perf::count_wrong(dtype_, expected, found);
  }
  return wrong;
}

gpu::Result<double> measure_copy_bandwidth(int device) {
  PERF_CUDA(cudaSetDevice(device));
  std::size_t free_bytes = 0, total = 0;
  PERF_CUDA(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t bytes = std::min<std::size_t>(std::size_t{512} << 20, free_bytes / 4);
  void* a = nullptr;
  void* b = nullptr;
  PERF_CUDA(cudaMalloc(&a, bytes));
  if (auto s = cuda(cudaMalloc(&b, bytes), "cudaMalloc"); !s.ok()) {
    cudaFree(a);
    return s;
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const int iterations = 20;
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);  // warm up
  cudaEventRecord(start);
  for (int i = 0; i < iterations; ++i) cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(stop);
  const cudaError_t e = cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  if (e != cudaSuccess) return cuda(e, "cudaEventSynchronize");
  // Every byte copied is read once and written once.
  return 2.0 * static_cast<double>(bytes) * iterations / (static_cast<double>(ms) * 1e6);
}

}  // namespace weft::perf
