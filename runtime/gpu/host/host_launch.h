// Host mode: a launch as the GPU runs it, every thread of every CTA at once (they wait on each
// other), each thread an OS thread with its threadIdx, blockIdx and CTA (kernel/host_thread.h).
// The OS threads are kept between launches: starting thousands per call would cost more than
// the call itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "host_thread.h"
#include "weft/gpu/status.h"

namespace weft::gpu::host {

class HostThreads {
 public:
  HostThreads() = default;
  HostThreads(const HostThreads&) = delete;
  HostThreads& operator=(const HostThreads&) = delete;
  ~HostThreads();

  // Runs `body` on every thread of a grid of `ctas` CTAs of `threads` threads and returns when
  // all have returned. Either every thread runs or none: when the system refuses a thread, the
  // launch fails with SystemError before anything runs. One launch at a time.
  Status run_grid(int ctas, int threads, const std::function<void()>& body);

  std::size_t size() const { return workers_.size(); }

 private:
  void work(std::size_t index, std::uint32_t seen);

  std::mutex launching_;
  std::vector<std::thread> workers_;
  // The current launch, published by the increment of `launch_`: the first `active_` workers run
  // `body_` with their context; each then counts itself in `finished_`.
  std::atomic<std::uint32_t> launch_{0};
  std::atomic<std::size_t> active_{0};
  std::atomic<std::size_t> finished_{0};
  std::atomic<bool> stopping_{false};
  const std::function<void()>* body_ = nullptr;
  std::vector<ThreadContext> contexts_;
};

}  // namespace weft::gpu::host
