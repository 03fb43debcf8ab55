// primitives.cuh's accesses as nvcc compiles them: PTX with the scope and order each handshake
// needs (see primitives.cuh for which is used where). Its twin for host mode is primitives_host.h,
// with the same functions.
#pragma once

#include <cstdint>

#include "portability.h"
#include "weft/program/device_abi.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// Polling a counter another CTA or GPU advances: relaxed loads while waiting, then one acquire
// fence once the value is there (fence_after_poll), instead of an acquire on every look. The
// scope is the system's when a peer may be another GPU, the GPU's when every rank shares it.
__device__ __forceinline__ std::uint64_t load_poll(const std::uint64_t* p, bool system) {
  std::uint64_t v;
  if (system) {
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  } else {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  }
  return v;
}

__device__ __forceinline__ void fence_after_poll(bool system) {
  if (system) {
    asm volatile("fence.acq_rel.sys;" ::: "memory");
  } else {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
  }
}

// The lean step's acquire (RuntimeOptions::step): once a relaxed poll has seen the value, one
// acquire load of the same word instead of a fence. On sm_70 and later it compiles to a strong
// load and an L1 invalidation (CCTL.IVALL) where the fence is a MEMBAR, which also waits for
// every store the thread still has in flight.
__device__ __forceinline__ std::uint64_t load_acquire(const std::uint64_t* p, bool system) {
  std::uint64_t v;
  if (system) {
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  } else {
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  }
  return v;
}

// Posting counters: one release fence (cumulative through the barrier before it, so it covers
// every thread's payload stores), then relaxed stores of every counter the step advances.
__device__ __forceinline__ void fence_before_post(bool system) {
  fence_after_poll(system);
}

__device__ __forceinline__ void store_post(std::uint64_t* p, std::uint64_t v, bool system) {
  if (system) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  } else {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  }
}

// Named barriers: `count` threads (a multiple of 32) of the CTA meet at barrier `id` (1..15; 0 is
// __syncthreads'). bar.sync waits for the round, bar.arrive only counts itself: the producer
// side of a producer/consumer pair. Both order the thread's earlier memory accesses before the
// accesses of the threads that wait for the round (PTX ISA, "bar, barrier": the waiting
// threads observe what the participating threads did before it).
__device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(unsigned id, unsigned count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// A word of the CTA's shared memory that one thread may write while others read it (the overlap
// step's stop word): volatile, so that each access is one access.
__device__ __forceinline__ std::uint64_t load_cta_word(const std::uint64_t* p) {
  return *static_cast<const volatile std::uint64_t*>(p);
}
__device__ __forceinline__ void store_cta_word(std::uint64_t* p, std::uint64_t v) {
  *static_cast<volatile std::uint64_t*>(p) = v;
}

// The process's abort word, in host-mapped memory every device of the process sees.
__device__ __forceinline__ std::uint32_t load_abort_word(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_abort_word(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// The communicator's control word (device memory), claimed by the first failing thread.
__device__ __forceinline__ std::uint32_t load_claimed(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Arrival tables: only ever read to decide when a wait's clock starts, so relaxed is enough (a
// peer's table may be on another GPU: system scope, as a FIFO counter's poll and post).
__device__ __forceinline__ std::uint64_t load_arrival(const std::uint64_t* p) {
  return load_poll(p, true);
}

__device__ __forceinline__ void store_arrival(std::uint64_t* p, std::uint64_t v) {
  store_post(p, v, true);
}

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Between two looks at a flag: nothing; the poll itself is the pause.
__device__ __forceinline__ void spin_pause() {}

// LL: one 16-byte line {data0, flag0, data1, flag1}, read and written with one access.
struct LLLine {
  std::uint32_t data0, flag0, data1, flag1;
};

__device__ __forceinline__ LLLine load_ll_line(const LLLine* p) {
  LLLine l;
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(l.data0), "=r"(l.flag0), "=r"(l.data1), "=r"(l.flag1)
               : "l"(p)
               : "memory");
  return l;
}

__device__ __forceinline__ void store_ll_line(LLLine* p, std::uint64_t data, std::uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p),
               "r"(static_cast<std::uint32_t>(data)), "r"(flag),
               "r"(static_cast<std::uint32_t>(data >> 32)), "r"(flag)
               : "memory");
}

// LL128: each lane moves 16 bytes of a 128-byte line; the 8 lanes of a line, and the 4 lines of a
// warp, go in one warp-wide instruction. Every lane of the warp calls these (the inactive ones
// too, with `active` false), so that the warp is converged around the access.
__device__ __forceinline__ void load_ll128_part(const std::uint64_t* p, std::uint64_t& v0,
                                                std::uint64_t& v1, bool active,
                                                bool /*flag_lane*/) {
  if (active) {
    asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];"
                 : "=l"(v0), "=l"(v1)
                 : "l"(p)
                 : "memory");
  }
}

__device__ __forceinline__ void store_ll128_part(std::uint64_t* p, std::uint64_t v0,
                                                 std::uint64_t v1, bool active,
                                                 bool /*flag_lane*/) {
  __syncwarp();
  if (active) {
    asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" ::"l"(p), "l"(v0), "l"(v1) : "memory");
  }
}

// Makes a filled-in error report visible to the host: `valid` last, between system fences.
__device__ __forceinline__ void publish_report(ErrorReport* report) {
  __threadfence_system();
  *static_cast<volatile std::uint32_t*>(&report->valid) = 1;
  __threadfence_system();
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
