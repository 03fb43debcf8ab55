#include "host_launch.h"

#include <memory>
#include <system_error>

#include <fmt/format.h>

namespace weft::gpu::host {

HostThreads::~HostThreads() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  started_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void HostThreads::work(std::size_t index, std::uint64_t seen) {
  for (;;) {
    std::size_t active = 0;
    {
      std::unique_lock lock(mutex_);
      started_.wait(lock, [&] { return launch_ != seen || stopping_; });
      if (stopping_) return;
      seen = launch_;
      active = active_;
    }
    if (index >= active) continue;  // not part of this launch
    set_this_thread(&contexts_[index]);
    (*body_)();
    set_this_thread(nullptr);
    bool last = false;
    {
      const std::lock_guard lock(mutex_);
      last = ++done_ == active;
    }
    if (last) finished_.notify_all();
  }
}

Status HostThreads::run_grid(int ctas, int threads, const std::function<void()>& body) {
  if (ctas < 1 || threads < 1) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("host launch of {} CTAs × {} threads", ctas, threads));
  }
  const std::lock_guard lock(launching_);
  const std::size_t total = static_cast<std::size_t>(ctas) * static_cast<std::size_t>(threads);
  // Every worker exists before any runs: a CTA whose partner thread never came would wait at
  // its first barrier forever.
  try {
    while (workers_.size() < total) {
      const std::size_t index = workers_.size();
      std::uint64_t seen = 0;
      {
        const std::lock_guard state(mutex_);
        seen = launch_;
      }
      workers_.emplace_back([this, index, seen] { work(index, seen); });
    }
  } catch (const std::system_error& e) {
    return Status::error(
        ErrorCode::SystemError,
        fmt::format("host mode: could not start thread {} of the launch's {} ({} CTAs × {} "
                    "threads): {}",
                    workers_.size() + 1, total, ctas, threads, e.what()));
  }
  std::vector<std::unique_ptr<Cta>> blocks;
  contexts_.assign(total, ThreadContext{});
  for (int b = 0; b < ctas; ++b) {
    blocks.push_back(std::make_unique<Cta>(threads));
    for (int t = 0; t < threads; ++t) {
      ThreadContext& context = contexts_[static_cast<std::size_t>(b * threads + t)];
      context.thread_index.x = static_cast<unsigned>(t);
      context.block_index.x = static_cast<unsigned>(b);
      context.block_dim.x = static_cast<unsigned>(threads);
      context.grid_dim.x = static_cast<unsigned>(ctas);
      context.cta = blocks.back().get();
    }
  }
  {
    const std::lock_guard state(mutex_);
    body_ = &body;
    done_ = 0;
    active_ = total;
    ++launch_;
  }
  started_.notify_all();
  {
    std::unique_lock state(mutex_);
    finished_.wait(state, [&] { return done_ == total; });
    body_ = nullptr;
  }
  return {};
}

}  // namespace weft::gpu::host
