// Device buffers for one call of every local rank, filled from and checked against the CPU
// reference. Shared by weft-perf, the GPU tests and the host-mode tests; the buffers live where
// the PerfDevice puts them (a CUDA device, or host memory in host mode).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "perf_device.h"
#include "reference.h"
#include "weft/communicator/communicator.h"

namespace weft::perf {

class DeviceCall {
 public:
  // Allocates each local rank's buffers for a call of `count` elements of `dtype` (in place or
  // not) on `device`, which must be where the communicator runs.
  static gpu::Result<std::unique_ptr<DeviceCall>> create(PerfDevice& device,
                                                         const gpu::Communicator& comm,
                                                         const ir::Algorithm& algo,
                                                         std::size_t count, DataType dtype,
                                                         bool in_place);
  ~DeviceCall();
  DeviceCall(const DeviceCall&) = delete;
  DeviceCall& operator=(const DeviceCall&) = delete;

  // Copies the reference's starting buffers of the local ranks to the device (synchronously).
  gpu::Status upload(const Reference& reference) const;
  // Fills the buffers with a byte pattern (benchmarks without checking).
  gpu::Status fill(unsigned char byte) const;
  // Enqueues the call.
  gpu::Status run(gpu::Communicator& comm, gpu::AlgorithmHandle handle, ReduceOp op, int root,
                  gpu::StreamHandle stream) const;
  // Copies the results back (synchronously) and counts elements that differ from the reference,
  // summed over the local ranks.
  gpu::Result<std::size_t> count_wrong(const Reference& reference) const;

  std::span<const gpu::RankBuffers> calls() const { return calls_; }
  std::size_t count() const { return count_; }

 private:
  explicit DeviceCall(PerfDevice& device) : device_(device) {}
  PerfDevice& device_;
  std::vector<int> ranks_;
  std::size_t count_ = 0;
  DataType dtype_ = DataType::Float;
  bool in_place_ = false;
  std::vector<CallLayout> layouts_;
  std::vector<void*> send_;  // out of place only
  std::vector<void*> recv_;  // the receive buffer, or the one buffer in place
  std::vector<gpu::RankBuffers> calls_;
};

}  // namespace weft::perf
