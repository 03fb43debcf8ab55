// primitives.cuh's accesses in host mode: std::atomic_ref with the orders the PTX of
// primitives_cuda.cuh means, so that the C++ memory model (and ThreadSanitizer) see the same
// handshakes the GPU relies on. Scopes collapse: one process's threads see one memory.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "portability.h"
#include "weft/program/device_abi.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// The GPU polls with relaxed loads and fences once; here every poll is an acquire and the fence
// is nothing, which is at least as strong and what ThreadSanitizer can follow (it does not model
// standalone fences).
inline std::uint64_t load_poll(const std::uint64_t* p, bool /*system*/) {
  return std::atomic_ref<const std::uint64_t>(*p).load(std::memory_order_acquire);
}
inline void fence_after_poll(bool /*system*/) {}
inline std::uint64_t load_acquire(const std::uint64_t* p, bool /*system*/) {
  return std::atomic_ref<const std::uint64_t>(*p).load(std::memory_order_acquire);
}
inline void fence_before_post(bool /*system*/) {}
inline void store_post(std::uint64_t* p, std::uint64_t v, bool /*system*/) {
  std::atomic_ref<std::uint64_t>(*p).store(v, std::memory_order_release);
}

// Named barriers (bar.sync / bar.arrive id, count): host_thread.h's NamedBarrier.
inline void named_barrier_sync(unsigned id, unsigned count) {
  ::weft::gpu::host::this_thread().cta->named(id).sync(static_cast<int>(count));
}
inline void named_barrier_arrive(unsigned id, unsigned count) {
  ::weft::gpu::host::this_thread().cta->named(id).arrive(static_cast<int>(count));
}

inline std::uint64_t load_cta_word(const std::uint64_t* p) {
  return std::atomic_ref<const std::uint64_t>(*p).load(std::memory_order_relaxed);
}
inline void store_cta_word(std::uint64_t* p, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(*p).store(v, std::memory_order_relaxed);
}

inline std::uint32_t load_abort_word(const std::uint32_t* p) {
  return std::atomic_ref<const std::uint32_t>(*p).load(std::memory_order_relaxed);
}
inline void store_abort_word(std::uint32_t* p, std::uint32_t v) {
  std::atomic_ref<std::uint32_t>(*p).store(v, std::memory_order_relaxed);
}

inline std::uint32_t load_claimed(const std::uint32_t* p) {
  return std::atomic_ref<const std::uint32_t>(*p).load(std::memory_order_relaxed);
}

inline std::uint64_t load_arrival(const std::uint64_t* p) {
  return std::atomic_ref<const std::uint64_t>(*p).load(std::memory_order_relaxed);
}
inline void store_arrival(std::uint64_t* p, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(*p).store(v, std::memory_order_relaxed);
}

inline std::uint64_t global_timer_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Hundreds of threads may poll at once on two cores: give the core to one that can progress.
inline void spin_pause() {
  std::this_thread::yield();
}

// LL: the GPU reads and writes a line {data0, flag0, data1, flag1} with one 16-byte access; here
// each half {data, flag} is one 8-byte atomic access. The receiver accepts a line only when both
// flags match, and each half carries its own flag, so this is all LL's correctness needs (and
// less than the GPU gives).
struct LLLine {
  std::uint32_t data0, flag0, data1, flag1;
};

inline std::uint64_t ll_half(std::uint32_t data, std::uint32_t flag) {
  return static_cast<std::uint64_t>(data) | (static_cast<std::uint64_t>(flag) << 32);
}

inline LLLine load_ll_line(const LLLine* p) {
  const auto* words = reinterpret_cast<const std::uint64_t*>(p);
  const std::uint64_t a =
      std::atomic_ref<const std::uint64_t>(words[0]).load(std::memory_order_relaxed);
  const std::uint64_t b =
      std::atomic_ref<const std::uint64_t>(words[1]).load(std::memory_order_relaxed);
  return {static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32),
          static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32)};
}

inline void store_ll_line(LLLine* p, std::uint64_t data, std::uint32_t flag) {
  auto* words = reinterpret_cast<std::uint64_t*>(p);
  std::atomic_ref<std::uint64_t>(words[0]).store(ll_half(static_cast<std::uint32_t>(data), flag),
                                                 std::memory_order_relaxed);
  std::atomic_ref<std::uint64_t>(words[1]).store(
      ll_half(static_cast<std::uint32_t>(data >> 32), flag), std::memory_order_relaxed);
}

// LL128: on the GPU a line's 128 bytes travel as one store (NVLink, one device) and are read by
// one warp instruction. Here the lanes are threads, so the warp's access is made whole with the
// warp barrier: the sender's data lanes store, then the flag lane publishes the flag with a
// release; the receiver's flag lane reads the flag with an acquire, then the data lanes read. A
// receiver that saw the new flag therefore sees the whole line, as on the GPU.
inline void load_ll128_part(const std::uint64_t* p, std::uint64_t& v0, std::uint64_t& v1,
                            bool active, bool flag_lane) {
  if (active && flag_lane) {
    v1 = std::atomic_ref<const std::uint64_t>(p[1]).load(std::memory_order_acquire);
    v0 = std::atomic_ref<const std::uint64_t>(p[0]).load(std::memory_order_relaxed);
  }
  __syncwarp();
  if (active && !flag_lane) {
    v0 = std::atomic_ref<const std::uint64_t>(p[0]).load(std::memory_order_relaxed);
    v1 = std::atomic_ref<const std::uint64_t>(p[1]).load(std::memory_order_relaxed);
  }
}

inline void store_ll128_part(std::uint64_t* p, std::uint64_t v0, std::uint64_t v1, bool active,
                             bool flag_lane) {
  if (active && !flag_lane) {
    std::atomic_ref<std::uint64_t>(p[0]).store(v0, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(p[1]).store(v1, std::memory_order_relaxed);
  }
  __syncwarp();
  if (active && flag_lane) {
    std::atomic_ref<std::uint64_t>(p[0]).store(v0, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(p[1]).store(v1, std::memory_order_release);
  }
}

inline void publish_report(ErrorReport* report) {
  std::atomic_ref<std::uint32_t>(report->valid).store(1, std::memory_order_release);
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
