// The ping-pong on two CPU threads, with std::atomic in the orders the GPU's version uses.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <fmt/format.h>

#include "pingpong.h"

namespace weft::latency {

gpu::Result<double> pingpong_host(const PingPongOptions& options) {
  if (options.round_trips < 1) {
    return gpu::Status::error(gpu::ErrorCode::InvalidArgument,
                              fmt::format("{} round trips: need at least 1", options.round_trips));
  }
  std::atomic<std::uint64_t> ping{0}, pong{0};
  std::atomic<bool> gave_up{false};
  const auto store_order = options.ordered ? std::memory_order_release : std::memory_order_relaxed;
  const auto load_order = options.ordered ? std::memory_order_acquire : std::memory_order_relaxed;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options.timeout_s));
  // Waits for `flag` to reach `value`; false when the other side never answered.
  const auto wait = [&](const std::atomic<std::uint64_t>& flag, std::uint64_t value) {
    for (std::uint32_t spins = 0; flag.load(load_order) < value; ++spins) {
      if (gave_up.load(std::memory_order_relaxed)) return false;
      if (spins % 1024 == 1023) {
        if (std::chrono::steady_clock::now() > deadline) {
          gave_up.store(true, std::memory_order_relaxed);
          return false;
        }
        std::this_thread::yield();  // two threads may share one core
      }
    }
    return true;
  };
  const auto n = static_cast<std::uint64_t>(options.round_trips);
  std::thread answer([&] {
    for (std::uint64_t i = 1; i <= n; ++i) {
      if (!wait(ping, i)) return;
      pong.store(i, store_order);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  bool completed = true;
  for (std::uint64_t i = 1; i <= n && completed; ++i) {
    ping.store(i, store_order);
    completed = wait(pong, i);
  }
  const std::chrono::duration<double, std::micro> elapsed =
      std::chrono::steady_clock::now() - start;
  answer.join();
  if (!completed) {
    return gpu::Status::error(
        gpu::ErrorCode::Timeout,
        fmt::format("ping-pong on the host: no answer within {} s", options.timeout_s));
  }
  return elapsed.count() / (2.0 * static_cast<double>(n));
}

}  // namespace weft::latency
