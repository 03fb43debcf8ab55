// PerfDevice for host mode: buffers in host memory, calls timed by the wall clock (a host-mode
// call has finished when Communicator::run returns).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "perf_device.h"

namespace weft::perf {

namespace {

class HostPerfDevice final : public PerfDevice {
 public:
  gpu::DeviceKind kind() const override { return gpu::DeviceKind::Host; }
  std::string describe() const override {
    return fmt::format("the host (host mode): {} hardware threads",
                       std::thread::hardware_concurrency());
  }

  gpu::Result<void*> allocate(std::size_t bytes) override {
    // 256-byte aligned, as cudaMalloc's memory: the kernel's vector paths see the same alignment.
    const std::size_t size = (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
    void* pointer = std::aligned_alloc(256, size);
    if (pointer == nullptr) {
      return gpu::Status::error(gpu::ErrorCode::SystemError,
                                fmt::format("out of host memory for {} bytes", bytes));
    }
    std::memset(pointer, 0, size);
    return pointer;
  }
  void release(void* pointer) override { std::free(pointer); }

  gpu::Status upload(void* destination, std::span<const std::byte> source) override {
    if (!source.empty()) std::memcpy(destination, source.data(), source.size());
    return {};
  }
  gpu::Status download(std::span<std::byte> destination, const void* source) override {
    if (!destination.empty()) std::memcpy(destination.data(), source, destination.size());
    return {};
  }
  gpu::Status fill(void* destination, unsigned char byte, std::size_t bytes) override {
    std::memset(destination, byte, bytes);
    return {};
  }

  gpu::StreamHandle stream() const override { return nullptr; }
  gpu::Status synchronize() override { return {}; }

  gpu::Result<double> time_calls(const std::function<gpu::Status()>& enqueue, int iterations,
                                 int graph_launches) override {
    const int rounds = graph_launches > 0 ? graph_launches : 1;
    const auto start = std::chrono::steady_clock::now();
    for (int round = 0; round < rounds; ++round) {
      for (int i = 0; i < iterations; ++i) {
        if (auto s = enqueue(); !s.ok()) return s;
      }
    }
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    return elapsed.count() / (static_cast<double>(iterations) * rounds);
  }

  gpu::Result<double> copy_bandwidth() override {
    const std::size_t bytes = std::size_t{64} << 20;
    std::vector<std::byte> a(bytes, std::byte{1}), b(bytes);
    std::memcpy(b.data(), a.data(), bytes);  // warm up
    const int iterations = 5;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) std::memcpy(b.data(), a.data(), bytes);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    // Read the copy, so that it cannot be left out.
    const volatile std::byte sink = b[bytes / 2];
    static_cast<void>(sink);
    return 2.0 * static_cast<double>(bytes) * iterations / elapsed.count() / 1e9;
  }
};

}  // namespace

std::unique_ptr<PerfDevice> make_host_perf_device() {
  return std::make_unique<HostPerfDevice>();
}

}  // namespace weft::perf
