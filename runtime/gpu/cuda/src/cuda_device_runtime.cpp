// DeviceRuntime on a CUDA device: cudaMalloc'ed memory, the nvcc-compiled kernels, the occupancy
// calculator and cudaLaunchKernel on the caller's stream.
#include "cuda_device_runtime.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "cuda_check.h"
#include "cuda_kernels.h"
#include "device_memory.h"
#include "weft/cuda/ll128_probe.h"
#include "weft/program/device_abi.h"
#include "weft/program/options.h"

namespace weft::gpu {

namespace {

// A DeviceMemory that frees `allocation` (DeviceAllocation, MappedHostAllocation) when reset.
template <class Allocation>
DeviceMemory own(Allocation allocation, void* pointer, std::size_t bytes) {
  auto holder = std::make_shared<Allocation>(std::move(allocation));
  return DeviceMemory(pointer, bytes, [holder](void*) mutable { holder.reset(); });
}

class CudaRuntime final : public DeviceRuntime {
 public:
  explicit CudaRuntime(int device) : device_(device) {}

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  int device() const override { return device_; }
  std::string describe() const override { return fmt::format("device {}", device_); }

  Result<DeviceMemory> allocate(std::size_t bytes, std::string_view what) override {
    auto allocation = DeviceAllocation::zeroed(device_, bytes, what);
    if (!allocation.ok()) return allocation.status();
    void* pointer = allocation.value().get();
    const std::size_t size = allocation.value().bytes();
    return own(std::move(allocation.value()), pointer, size);
  }

  Result<MappedMemory> allocate_mapped(std::size_t bytes, std::string_view /*what*/) override {
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    auto allocation = MappedHostAllocation::zeroed(bytes);
    if (!allocation.ok()) return allocation.status();
    MappedMemory mapped;
    mapped.host = allocation.value().host();
    mapped.device = allocation.value().device();
    mapped.owner = own(std::move(allocation.value()), mapped.host, bytes);
    return mapped;
  }

  Status upload(void* destination, std::span<const std::byte> data) override {
    if (data.empty()) return {};
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    WEFT_CUDA_TRY(cudaMemcpy(destination, data.data(), data.size(), cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return before its DMA has reached the device, and a
    // call launched next on the application's non-blocking stream would not wait for it. The
    // copy runs on the legacy stream: waiting for that one leaves the application's own work be.
    WEFT_CUDA_TRY(cudaStreamSynchronize(nullptr));
    return {};
  }

  Status synchronize() override {
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    WEFT_CUDA_TRY(cudaDeviceSynchronize());
    return {};
  }

  Result<bool> capturing(StreamHandle stream) override {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    WEFT_CUDA_TRY(cudaStreamIsCapturing(reinterpret_cast<cudaStream_t>(stream), &capture));
    return capture != cudaStreamCaptureStatusNone;
  }

  int max_threads(int configured) const override { return configured; }
  int min_threads() const override { return kMinThreads; }

  bool has_interpreter(DataType dtype, ReduceOp op, ir::Protocol protocol) const override {
    return cuda_interpreter_kernel(dtype, op, protocol) != nullptr;
  }

  Result<Residency> resident_ctas(DataType dtype, ReduceOp op, ir::Protocol protocol,
                                  int threads) override {
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    if (sm_count_ == 0) {
      WEFT_CUDA_TRY(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device_));
    }
    int per_sm = 0;
    WEFT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, cuda_interpreter_kernel(dtype, op, protocol), threads, 0));
    return Residency{per_sm * sm_count_,
                     fmt::format("{} per SM × {} SMs = {}", per_sm, sm_count_, per_sm * sm_count_)};
  }

  Status launch_interpreter(DataType dtype, ReduceOp op, ir::Protocol protocol,
                            const device::LaunchArgs& args, int ctas, int threads,
                            StreamHandle stream) override {
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    device::LaunchArgs copy = args;
    void* parameters[] = {&copy};
    // Cooperative: the CTAs wait on each other, and only a cooperative launch guarantees they
    // are all resident at once (another kernel on the GPU could otherwise leave some waiting);
    // the driver refuses a grid it cannot hold instead. It can be captured in a graph.
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(ctas));
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.stream = reinterpret_cast<cudaStream_t>(stream);
    cudaLaunchAttribute cooperative{};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    config.attrs = &cooperative;
    config.numAttrs = 1;
    const cudaError_t e =
        cudaLaunchKernelExC(&config, cuda_interpreter_kernel(dtype, op, protocol), parameters);
    if (e == cudaErrorCooperativeLaunchTooLarge) {
      cudaGetLastError();
      return Status::error(ErrorCode::NotResident,
                           fmt::format("device {} cannot hold the launch's {} threadblocks of {} "
                                       "threads at once (cooperative launch refused)",
                                       device_, ctas, threads));
    }
    if (e != cudaSuccess) return cuda_error(e, "cudaLaunchKernelExC (cooperative)");
    return {};
  }

  Status launch_scale(DataType dtype, const device::ScaleArgs& args, StreamHandle stream) override {
    const void* kernel = cuda_scale_kernel(dtype);
    if (kernel == nullptr) {
      return Status::error(ErrorCode::NotApplicable,
                           fmt::format("avg is not supported for {}", to_string(dtype)));
    }
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    if (sm_count_ == 0) {
      WEFT_CUDA_TRY(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device_));
    }
    device::ScaleArgs copy = args;
    void* parameters[] = {&copy};
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(
        (args.elements + 255) / 256, static_cast<std::size_t>(sm_count_) * 8));
    WEFT_CUDA_TRY(cudaLaunchKernel(kernel, dim3(blocks), dim3(256), parameters, 0,
                                   reinterpret_cast<cudaStream_t>(stream)));
    return {};
  }

  Result<AbortWord> abort_word() override {
    // One pinned, mapped word for the whole process (CUDA's own context is per process too), so
    // that a failure on one device stops the waits of every communicator on every device.
    static std::once_flag once;
    static std::uint32_t* word = nullptr;
    static cudaError_t error = cudaSuccess;
    std::call_once(once, [] {
      void* p = nullptr;
      error = cudaHostAlloc(&p, 64, cudaHostAllocMapped | cudaHostAllocPortable);
      if (error == cudaSuccess) {
        std::memset(p, 0, 64);
        word = static_cast<std::uint32_t*>(p);
      }
    });
    if (error != cudaSuccess) return cuda_error(error, "cudaHostAlloc (the process's abort word)");
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    void* on_device = nullptr;
    WEFT_CUDA_TRY(cudaHostGetDevicePointer(&on_device, word, 0));
    return AbortWord{static_cast<std::uint32_t*>(on_device), word};
  }

  Status post_word(std::uint64_t* address, std::uint64_t value) override {
    const std::lock_guard lock(post_mutex_);
    DeviceScope scope(device_);
    if (!scope.status().ok()) return scope.status();
    if (post_stream_ == nullptr) {
      // Non-blocking: the copy must not wait for the kernel that polls the word.
      WEFT_CUDA_TRY(cudaStreamCreateWithFlags(&post_stream_, cudaStreamNonBlocking));
      auto staging = MappedHostAllocation::zeroed(sizeof(std::uint64_t));
      if (!staging.ok()) return staging.status();
      post_staging_ = std::make_unique<MappedHostAllocation>(std::move(staging.value()));
    }
    auto* source = static_cast<std::uint64_t*>(post_staging_->host());
    *source = value;
    WEFT_CUDA_TRY(
        cudaMemcpyAsync(address, source, sizeof(value), cudaMemcpyHostToDevice, post_stream_));
    // One word in flight: the next post reuses the staging word.
    WEFT_CUDA_TRY(cudaStreamSynchronize(post_stream_));
    return {};
  }

  Status ll128_on_one_device() override {
    const std::lock_guard lock(probe_mutex_);
    if (!probe_) {
      auto result = probe_ll128(device_, Ll128ProbeOptions{});
      if (!result.ok()) {
        probe_ = Status::error(result.status().code,
                               "the torn-line probe could not run: " + result.status().message);
      } else if (result.value().torn != 0) {
        probe_ = Status::error(
            ErrorCode::NotApplicable,
            fmt::format("they share device {}, on which the torn-line probe saw {} of {} lines "
                        "torn between SMs",
                        device_, result.value().torn, result.value().lines_read));
      } else {
        probe_ = Status{};
      }
    }
    return *probe_;
  }

 private:
  int device_;
  int sm_count_ = 0;
  std::mutex probe_mutex_;
  std::optional<Status> probe_;  // the probe's verdict, once it ran
  std::mutex post_mutex_;
  cudaStream_t post_stream_ = nullptr;  // post_word's, created at its first use
  std::unique_ptr<MappedHostAllocation> post_staging_;
};

}  // namespace

std::shared_ptr<DeviceRuntime> make_cuda_runtime(int device) {
  return std::make_shared<CudaRuntime>(device);
}

}  // namespace weft::gpu
