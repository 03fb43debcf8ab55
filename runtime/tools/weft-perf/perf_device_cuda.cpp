// PerfDevice on a CUDA device: cudaMalloc'ed buffers, a non-blocking stream, CUDA events around
// the timed calls (or a captured graph replayed), and a device-to-device copy for the bandwidth.
#include <cuda_runtime_api.h>

#include <algorithm>

#include <fmt/format.h>

#include "perf_device.h"

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

class CudaPerfDevice final : public PerfDevice {
 public:
  explicit CudaPerfDevice(int device) : device_(device) {}
  ~CudaPerfDevice() override {
    if (stream_ != nullptr) {
      cudaSetDevice(device_);
      cudaStreamDestroy(stream_);
    }
  }

  gpu::Status open() {
    PERF_CUDA(cudaSetDevice(device_));
    PERF_CUDA(cudaGetDeviceProperties(&properties_, device_));
    PERF_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return {};
  }

  gpu::DeviceKind kind() const override { return gpu::DeviceKind::Cuda; }
  std::string describe() const override {
    return fmt::format("device {}: {}, {} SMs", device_, properties_.name,
                       properties_.multiProcessorCount);
  }

  gpu::Result<void*> allocate(std::size_t bytes) override {
    PERF_CUDA(cudaSetDevice(device_));
    void* pointer = nullptr;
    PERF_CUDA(cudaMalloc(&pointer, std::max<std::size_t>(bytes, 16)));
    return pointer;
  }
  void release(void* pointer) override {
    cudaSetDevice(device_);
    cudaFree(pointer);
  }

  gpu::Status upload(void* destination, std::span<const std::byte> source) override {
    PERF_CUDA(cudaSetDevice(device_));
    PERF_CUDA(cudaMemcpy(destination, source.data(), source.size(), cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return before its DMA has reached the device, and the
    // calls run on a non-blocking stream, which does not wait for it: without this, a call could
    // read part of the previous contents (seen on an H200 as wrong in-place results at 1 MB).
    // The copy runs on the legacy stream: wait for that one.
    PERF_CUDA(cudaStreamSynchronize(nullptr));
    return {};
  }
  gpu::Status download(std::span<std::byte> destination, const void* source) override {
    PERF_CUDA(cudaSetDevice(device_));
    PERF_CUDA(cudaMemcpy(destination.data(), source, destination.size(), cudaMemcpyDeviceToHost));
    return {};
  }
  gpu::Status fill(void* destination, unsigned char byte, std::size_t bytes) override {
    PERF_CUDA(cudaSetDevice(device_));
    PERF_CUDA(cudaMemset(destination, byte, bytes));
    PERF_CUDA(cudaDeviceSynchronize());
    return {};
  }

  gpu::StreamHandle stream() const override { return reinterpret_cast<gpu::StreamHandle>(stream_); }
  gpu::Status synchronize() override {
    PERF_CUDA(cudaStreamSynchronize(stream_));
    return {};
  }

  gpu::Result<double> time_calls(const std::function<gpu::Status()>& enqueue, int iterations,
                                 int graph_launches) override {
    cudaEvent_t start, stop;
    PERF_CUDA(cudaEventCreate(&start));
    if (auto s = cuda(cudaEventCreate(&stop), "cudaEventCreate"); !s.ok()) {
      cudaEventDestroy(start);
      return s;
    }
    double calls = iterations;
    gpu::Status status;
    if (graph_launches > 0) {
      cudaGraph_t graph = nullptr;
      cudaGraphExec_t exec = nullptr;
      status = cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "capture");
      for (int i = 0; i < iterations && status.ok(); ++i) status = enqueue();
      const gpu::Status end = cuda(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
      if (status.ok()) status = end;
      if (status.ok()) status = cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
      if (status.ok()) status = cuda(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");  // warm
      if (status.ok()) status = synchronize();
      if (status.ok()) {
        cudaEventRecord(start, stream_);
        for (int g = 0; g < graph_launches && status.ok(); ++g) {
          status = cuda(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
        }
        cudaEventRecord(stop, stream_);
        calls = static_cast<double>(iterations) * graph_launches;
      }
      if (exec != nullptr) cudaGraphExecDestroy(exec);
      if (graph != nullptr) cudaGraphDestroy(graph);
    } else {
      cudaEventRecord(start, stream_);
      for (int i = 0; i < iterations && status.ok(); ++i) status = enqueue();
      cudaEventRecord(stop, stream_);
    }
    if (status.ok()) status = synchronize();
    float ms = 0;
    if (status.ok()) cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (!status.ok()) return status;
    return static_cast<double>(ms) * 1e3 / calls;
  }

  gpu::Result<double> copy_bandwidth() override {
    PERF_CUDA(cudaSetDevice(device_));
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

 private:
  int device_;
  cudaDeviceProp properties_{};
  cudaStream_t stream_ = nullptr;
};

}  // namespace

gpu::Result<int> cuda_device_count() {
  int devices = 0;
  PERF_CUDA(cudaGetDeviceCount(&devices));
  return devices;
}

gpu::Result<std::unique_ptr<PerfDevice>> make_cuda_perf_device(int device) {
  auto perf_device = std::make_unique<CudaPerfDevice>(device);
  if (auto s = perf_device->open(); !s.ok()) return s;
  return std::unique_ptr<PerfDevice>(std::move(perf_device));
}

}  // namespace weft::perf
