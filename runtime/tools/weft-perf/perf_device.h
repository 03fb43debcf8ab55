// Where weft-perf's call buffers live and how its calls are timed: a CUDA device, or the host
// (host mode, where the interpreter's source runs on CPU threads). Shared by weft-perf, the GPU
// tests and the host-mode tests.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "weft/communicator/device_runtime.h"
#include "weft/program/status.h"

namespace weft::perf {

class PerfDevice {
 public:
  virtual ~PerfDevice() = default;
  virtual gpu::DeviceKind kind() const = 0;
  // "device 0: NVIDIA H100 80GB HBM3, 132 SMs", "the host: 2 hardware threads".
  virtual std::string describe() const = 0;

  virtual gpu::Result<void*> allocate(std::size_t bytes) = 0;
  virtual void release(void* pointer) = 0;
  // Synchronous copies and fills.
  virtual gpu::Status upload(void* destination, std::span<const std::byte> source) = 0;
  virtual gpu::Status download(std::span<std::byte> destination, const void* source) = 0;
  virtual gpu::Status fill(void* destination, unsigned char byte, std::size_t bytes) = 0;

  // The stream calls are enqueued on, and waiting for it.
  virtual gpu::StreamHandle stream() const = 0;
  virtual gpu::Status synchronize() = 0;
  // Microseconds per call: `enqueue` (which enqueues one call) run `iterations` times, or, with
  // graph_launches > 0, captured once as a graph of `iterations` calls replayed that often (host
  // mode replays by calling again: the same launches, with nothing reset in between).
  virtual gpu::Result<double> time_calls(const std::function<gpu::Status()>& enqueue,
                                         int iterations, int graph_launches) = 0;
  // Bytes read + written per second (GB/s) by a large device-to-device copy.
  virtual gpu::Result<double> copy_bandwidth() = 0;
};

std::unique_ptr<PerfDevice> make_host_perf_device();
// Defined only where weft-perf is built with CUDA (weft_perf_device).
gpu::Result<std::unique_ptr<PerfDevice>> make_cuda_perf_device(int device);
gpu::Result<int> cuda_device_count();

}  // namespace weft::perf
