// How a communicator reaches the device its transport's memory lives on: memory, the kernels,
// launches. A transport hands out its device's runtime; the Communicator is written against this
// interface only, so one implementation of loading, call planning, FIFO sizing, the residency
// check and error reporting serves both kinds of device:
//   - a CUDA device (weft_gpu): cudaMalloc, the nvcc-compiled kernels, cudaLaunchKernel on a
//     stream; calls are asynchronous;
//   - the host (weft_kernel_host): host memory, the same kernel source compiled by the C++
//     compiler and run with one OS thread per CUDA thread; calls run to completion before run()
//     returns, and the stream argument is not used.
// Users never implement it; they pick a transport (transport.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "weft/ir/ir.h"
#include "weft/ir/types.h"
#include "weft/program/status.h"

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace weft::gpu {

namespace device {
struct LaunchArgs;
struct ScaleArgs;
}  // namespace device

using StreamHandle = CUstream_st*;

enum class DeviceKind {
  Cuda,  // a CUDA device
  Host,  // the kernel's source on CPU threads (host mode)
};
std::string_view to_string(DeviceKind kind);

// Owning handle of memory the device addresses (zeroed when allocated).
class DeviceMemory {
 public:
  using Release = std::function<void(void*)>;
  DeviceMemory() = default;
  DeviceMemory(void* pointer, std::size_t bytes, Release release)
      : pointer_(pointer), bytes_(bytes), release_(std::move(release)) {}
  DeviceMemory(DeviceMemory&& other) noexcept { *this = std::move(other); }
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() { reset(); }

  void* get() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void reset();
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
  Release release_;
};

// Memory the device writes and the host reads while kernels run (the error report): its host
// and device addresses.
struct MappedMemory {
  DeviceMemory owner;
  void* host = nullptr;
  void* device = nullptr;
};

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  virtual DeviceKind kind() const = 0;
  virtual int device() const = 0;  // the CUDA device; 0 on the host
  virtual std::string describe() const = 0;

  // `bytes` (at least 1) of zeroed device memory; `what` names it in errors.
  virtual Result<DeviceMemory> allocate(std::size_t bytes, std::string_view what) = 0;
  virtual Result<MappedMemory> allocate_mapped(std::size_t bytes, std::string_view what) = 0;
  // Synchronous copy from the host into device memory.
  virtual Status upload(void* destination, std::span<const std::byte> data) = 0;
  // Returns once nothing launched on the device any more runs.
  virtual Status synchronize() = 0;
  // Whether `stream` is being captured into a graph (when nothing may be allocated).
  virtual Result<bool> capturing(StreamHandle stream) = 0;

  // Threads per CTA: the largest the kernel may be launched with, given the configured count,
  // and the smallest the residency check may go down to.
  virtual int max_threads(int configured) const = 0;
  virtual int min_threads() const = 0;
  // Whether the interpreter exists for (type, operator, protocol).
  virtual bool has_interpreter(DataType dtype, ReduceOp op, ir::Protocol protocol) const = 0;
  // How many CTAs of `threads` threads of that interpreter the device holds at once, and the
  // arithmetic behind it for messages ("8 per SM × 132 SMs").
  struct Residency {
    int ctas = 0;
    std::string arithmetic;
  };
  virtual Result<Residency> resident_ctas(DataType dtype, ReduceOp op, ir::Protocol protocol,
                                          int threads) = 0;

  virtual Status launch_interpreter(DataType dtype, ReduceOp op, ir::Protocol protocol,
                                    const device::LaunchArgs& args, int ctas, int threads,
                                    StreamHandle stream) = 0;
  // Avg's premultiplication of one rank's input (floating types).
  virtual Status launch_scale(DataType dtype, const device::ScaleArgs& args,
                              StreamHandle stream) = 0;

  // The process's abort word (one per process, seen by every communicator and device of it):
  // a failing kernel raises it, and every wait of every communicator created before gives up.
  struct AbortWord {
    std::uint32_t* device = nullptr;  // for the kernels
    std::uint32_t* host = nullptr;    // for reading it on the host, and raising it (the proxy)
  };
  virtual Result<AbortWord> abort_word() = 0;

  // Writes one 64-bit word of device memory while a kernel may be running and polling it (the
  // proxy's arrival words from ranks on other hosts): host mode, an atomic store; CUDA, a copy
  // on a stream of its own, which does not wait for the kernels.
  virtual Status post_word(std::uint64_t* address, std::uint64_t value) = 0;

  // Whether LL128 may run between ranks that share this device: its correctness rests on a
  // 128-byte store being seen whole by another SM, which a probe of the device checks once
  // (CUDA); host mode makes the warp's line access whole itself. Fails with the reason.
  virtual Status ll128_on_one_device() = 0;
};

}  // namespace weft::gpu
