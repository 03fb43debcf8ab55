// Host mode: a launch as the GPU runs it, every thread of every CTA at once (they wait on each
// other), each thread an OS thread with its threadIdx, blockIdx and CTA (kernel/host_thread.h).
// The OS threads are kept between launches: starting thousands per call would cost more than
// the call itself.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "host_thread.h"
#include "weft/program/status.h"

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
  void work(std::size_t index, std::uint64_t seen);

  std::mutex launching_;  // one launch at a time
  std::vector<std::thread> workers_;
  // The current launch, published under `mutex_` by the increment of `launch_`: the first
  // `active_` workers run `body_` with their context; each then counts itself in `finished_`.
  // A mutex and condition variables, not std::atomic wait/notify: libstdc++ 12's atomic waits
  // once lost a notification under a heavily loaded machine, and every worker had finished while
  // the launching thread slept on forever (a kernel-host test hung in CI).
  std::mutex mutex_;
  std::condition_variable started_;   // workers: a new launch, or stopping
  std::condition_variable finished_;  // the launching thread: every active worker is done
  std::uint64_t launch_ = 0;
  std::size_t active_ = 0;
  std::size_t done_ = 0;
  bool stopping_ = false;
  const std::function<void()>* body_ = nullptr;
  std::vector<ThreadContext> contexts_;
};

}  // namespace weft::gpu::host
