#include "host_runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "host_launch.h"
#include "kernels.h"

namespace weft::gpu::host {

namespace {

// Slots, counters and flags are laid out for 128-byte lines (kFlagStrideWords, LL128 lines).
constexpr std::size_t kAlignment = 256;

class HostRuntime final : public DeviceRuntime {
 public:
  DeviceKind kind() const override { return DeviceKind::Host; }
  int device() const override { return 0; }
  std::string describe() const override { return "the host (host mode)"; }

  Result<DeviceMemory> allocate(std::size_t bytes, std::string_view what) override {
    const std::size_t size =
        (std::max<std::size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    void* pointer = std::aligned_alloc(kAlignment, size);
    if (pointer == nullptr) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("host mode: out of memory for {} bytes of {}", size, what));
    }
    std::memset(pointer, 0, size);
    return DeviceMemory(pointer, size, [](void* p) { std::free(p); });
  }

  Result<MappedMemory> allocate_mapped(std::size_t bytes, std::string_view what) override {
    auto memory = allocate(bytes, what);
    if (!memory.ok()) return memory.status();
    MappedMemory mapped;
    mapped.host = mapped.device = memory.value().get();
    mapped.owner = std::move(memory.value());
    return mapped;
  }

  Status upload(void* destination, std::span<const std::byte> data) override {
    if (!data.empty()) std::memcpy(destination, data.data(), data.size());
    return {};
  }

  // Every launch has finished when launch_* returns.
  Status synchronize() override { return {}; }
  Result<bool> capturing(StreamHandle /*stream*/) override { return false; }

  int max_threads(int configured) const override { return std::min(configured, kMaxThreadsPerCta); }
  int min_threads() const override { return kMinThreadsPerCta; }

  bool has_interpreter(DataType dtype, ReduceOp op, ir::Protocol protocol) const override {
    return device::interpreter_kernel(dtype, op, protocol) != nullptr;
  }

  Result<Residency> resident_ctas(DataType /*dtype*/, ReduceOp /*op*/, ir::Protocol /*protocol*/,
                                  int threads) override {
    const int ctas = kThreadBudget / std::max(threads, 1);
    return Residency{
        ctas, fmt::format("{} host threads / {} per CTA = {}", kThreadBudget, threads, ctas)};
  }

  Status launch_interpreter(DataType dtype, ReduceOp op, ir::Protocol protocol,
                            const device::LaunchArgs& args, int ctas, int threads,
                            StreamHandle /*stream*/) override {
    const device::InterpreterEntry kernel = device::interpreter_kernel(dtype, op, protocol);
    if (kernel == nullptr) {
      return Status::error(ErrorCode::NotApplicable, fmt::format("no kernel for {} with {}",
                                                                 to_string(op), to_string(dtype)));
    }
    return threads_.run_grid(ctas, threads, [&] { kernel(args); });
  }

  Status launch_scale(DataType dtype, const device::ScaleArgs& args,
                      StreamHandle /*stream*/) override {
    const device::ScaleEntry kernel = device::scale_kernel(dtype);
    if (kernel == nullptr) {
      return Status::error(ErrorCode::NotApplicable,
                           fmt::format("avg is not supported for {}", to_string(dtype)));
    }
    return threads_.run_grid(1, kMinThreadsPerCta, [&] { kernel(args); });
  }

  Result<AbortWord> abort_word() override {
    // One word for the whole process, as on the GPU path: deliberately the process's, so that
    // a failure stops every communicator's waits at once (kernel/device_abi.h, LaunchArgs).
    alignas(64) static std::uint32_t word = 0;
    return AbortWord{&word, &word};
  }

  Status post_word(std::uint64_t* address, std::uint64_t value) override {
    // The kernel's arrival loads are relaxed atomics (kernel/primitives_host.h).
    std::atomic_ref<std::uint64_t>(*address).store(value, std::memory_order_relaxed);
    return {};
  }

  // The warp barrier makes every LL128 line access whole here (kernel/primitives_host.h).
  Status ll128_on_one_device() override { return {}; }

 private:
  HostThreads threads_;
};

}  // namespace

std::shared_ptr<DeviceRuntime> make_host_runtime() {
  return std::make_shared<HostRuntime>();
}

}  // namespace weft::gpu::host
