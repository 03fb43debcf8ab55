// Host mode of the interpreter kernel (docs/architecture.md §5): what a GPU gives a thread of a
// CTA, given by the host launcher to each of its OS threads. The kernel's source compiles unchanged
// against portability.h, which maps threadIdx, __syncthreads_or, __ballot_sync and the rest onto
// this.
//
// Every CTA of a launch runs at once, each of its threads a real OS thread, because CTAs wait on
// each other (FIFOs, dependency flags) and the threads of a CTA on each other (barriers, warp
// votes). Barriers block in the kernel (futex), spinning waits yield, so thousands of such
// threads share two cores.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

namespace weft::gpu::host {

inline constexpr int kWarpSize = 32;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// A barrier of a fixed group of threads (a CTA, or a warp of it) that also combines one 32-bit
// value per thread with OR: what __syncthreads_or, __any_sync and __ballot_sync need. Reusable
// at once: a generation counter tells waiters that the round they joined is over.
class GroupBarrier {
 public:
  explicit GroupBarrier(int parties) : parties_(parties) {}
  GroupBarrier(const GroupBarrier&) = delete;
  GroupBarrier& operator=(const GroupBarrier&) = delete;

  // Waits for every thread of the group; returns the OR of every thread's `bits` this round.
  std::uint32_t arrive_and_wait(std::uint32_t bits);

 private:
  const int parties_;
  std::atomic<int> arrived_{0};
  std::atomic<std::uint32_t> accumulated_{0};
  std::atomic<std::uint32_t> generation_{0};
  // Written by the last thread of a round before the generation moves on, read by the others
  // after they see it move; the next round cannot end before they have all read it.
  std::uint32_t result_ = 0;
};

// A named barrier (PTX bar.sync / bar.arrive with an id and a thread count): a round ends when
// `count` threads have come, some of which only arrive (they go on at once) while the others
// wait for the round to end. As on the GPU, a thread must not arrive for the next round before
// the current one has ended; the kernel orders its uses so that it cannot.
class NamedBarrier {
 public:
  NamedBarrier() = default;
  NamedBarrier(const NamedBarrier&) = delete;
  NamedBarrier& operator=(const NamedBarrier&) = delete;

  void sync(int count);
  void arrive(int count);

 private:
  // True when this arrival ended the round.
  bool come(int count);
  std::atomic<int> arrived_{0};
  std::atomic<std::uint32_t> generation_{0};
};

inline constexpr int kNamedBarriers = 16;  // as many as a CTA has on the GPU

// One CTA's shared state: its barriers and its __shared__ variables.
class Cta {
 public:
  explicit Cta(int threads);
  Cta(const Cta&) = delete;
  Cta& operator=(const Cta&) = delete;

  GroupBarrier& block() { return block_; }
  GroupBarrier& warp(unsigned thread) { return *warps_[thread / kWarpSize]; }
  NamedBarrier& named(unsigned id) { return named_[id % kNamedBarriers]; }
  // The CTA's instance of a __shared__ variable, told apart by the address of a static object of
  // its declaration (WEFT_CTA_SHARED); zero-filled by the first thread that asks.
  void* shared(const void* site, std::size_t bytes);

 private:
  GroupBarrier block_;
  std::vector<std::unique_ptr<GroupBarrier>> warps_;
  NamedBarrier named_[kNamedBarriers];
  std::mutex shared_mutex_;
  std::map<const void*, std::unique_ptr<std::byte[]>> shared_;
};

// What one thread of a launch is: its indices and its CTA.
struct ThreadContext {
  Dim3 thread_index;
  Dim3 block_index;
  Dim3 block_dim;
  Dim3 grid_dim;
  Cta* cta = nullptr;
};

// The calling thread's context. The launcher sets it before running the kernel on a thread and
// clears it after: it plays the part of the hardware registers threadIdx and blockIdx live in.
const ThreadContext& this_thread();
void set_this_thread(const ThreadContext* context);

template <class T>
T& cta_shared(const void* site) {
  static_assert(std::is_trivially_copyable_v<T>, "__shared__ variables are plain data");
  // The storage is a new[] of bytes, aligned for every fundamental type.
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  return *static_cast<T*>(this_thread().cta->shared(site, sizeof(T)));
}

}  // namespace weft::gpu::host
