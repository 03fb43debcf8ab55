#include "host_launch.h"

#include <memory>
#include <system_error>

#include <fmt/format.h>

namespace weft::gpu::host {

HostThreads::~HostThreads() {
  stopping_.store(true, std::memory_order_release);
  launch_.fetch_add(1, std::memory_order_acq_rel);
  launch_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void HostThreads::work(std::size_t index, std::uint32_t seen) {
  for (;;) {
    std::uint32_t now;
    while ((now = launch_.load(std::memory_order_acquire)) == seen) launch_.wait(seen);
    seen = now;
    if (stopping_.load(std::memory_order_acquire)) return;
    const std::size_t active = active_.load(std::memory_order_acquire);
    if (index >= active) continue;  // not part of this launch
    set_this_thread(&contexts_[index]);
    (*body_)();
    set_this_thread(nullptr);
    if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == active) finished_.notify_all();
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
      const std::uint32_t seen = launch_.load(std::memory_order_acquire);
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
  body_ = &body;
  finished_.store(0, std::memory_order_relaxed);
  active_.store(total, std::memory_order_release);
  launch_.fetch_add(1, std::memory_order_acq_rel);
  launch_.notify_all();
  std::size_t done;
  while ((done = finished_.load(std::memory_order_acquire)) < total) finished_.wait(done);
  body_ = nullptr;
  return {};
}

}  // namespace weft::gpu::host
