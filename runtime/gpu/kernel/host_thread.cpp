#include "host_thread.h"

#include <cstring>

namespace weft::gpu::host {

namespace {

// The thread's context, as the launcher set it; see this_thread().
thread_local const ThreadContext* current_thread = nullptr;

}  // namespace

std::uint32_t GroupBarrier::arrive_and_wait(std::uint32_t bits) {
  const std::uint32_t generation = generation_.load(std::memory_order_acquire);
  accumulated_.fetch_or(bits, std::memory_order_acq_rel);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
    // The last of the round: nobody of the next round can arrive before the generation moves.
    result_ = accumulated_.exchange(0, std::memory_order_acq_rel);
    arrived_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    return result_;
  }
  while (generation_.load(std::memory_order_acquire) == generation) {
    generation_.wait(generation, std::memory_order_acquire);
  }
  return result_;
}

bool NamedBarrier::come(int count) {
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 != count) return false;
  // The last of the round: nobody of the next round can come before the generation moves.
  arrived_.store(0, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  return true;
}

void NamedBarrier::arrive(int count) {
  // Release: what this thread did before is seen by those that wait for the round (acq_rel
  // above, and the release of whoever ends it).
  static_cast<void>(come(count));
}

void NamedBarrier::sync(int count) {
  const std::uint32_t generation = generation_.load(std::memory_order_acquire);
  if (come(count)) return;
  while (generation_.load(std::memory_order_acquire) == generation) {
    generation_.wait(generation, std::memory_order_acquire);
  }
}

Cta::Cta(int threads) : block_(threads) {
  for (int first = 0; first < threads; first += kWarpSize) {
    const int lanes = threads - first < kWarpSize ? threads - first : kWarpSize;
    warps_.push_back(std::make_unique<GroupBarrier>(lanes));
  }
}

void* Cta::shared(const void* site, std::size_t bytes) {
  const std::lock_guard lock(shared_mutex_);
  auto& storage = shared_[site];
  if (!storage) {
    storage = std::make_unique<std::byte[]>(bytes);
    std::memset(storage.get(), 0, bytes);
  }
  return storage.get();
}

const ThreadContext& this_thread() {
  return *current_thread;
}

void set_this_thread(const ThreadContext* context) {
  current_thread = context;
}

}  // namespace weft::gpu::host
