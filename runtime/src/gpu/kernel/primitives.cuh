// Memory-ordering primitives of the interpreter. Every cross-CTA or cross-GPU handshake goes
// through these few functions so that each ordering decision is made once:
//  - counters and flags other CTAs or GPUs read: release stores and acquire loads, at system
//    scope when the other side may be another GPU (FIFO tail/head), at GPU scope for the progress
//    flags of one rank's threadblocks (always on one device);
//  - data another CTA or GPU wrote: ld.global.cg (L2, never a stale L1 line);
//  - LL/LL128 lines: volatile vector accesses whose flag travels in the same store.
#pragma once

#include <cstdint>

#include "device_abi.h"

namespace weft::gpu::device {

__device__ __forceinline__ std::uint64_t load_acquire_sys(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release_sys(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ std::uint64_t load_acquire_gpu(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release_gpu(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ std::uint32_t load_relaxed_u32(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// LL: one 16-byte line {data0, flag, data1, flag}.
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

// LL128: each lane moves 16 bytes of a 128-byte line with one instruction per warp.
__device__ __forceinline__ void load_128(const std::uint64_t* p, std::uint64_t& v0,
                                         std::uint64_t& v1) {
  asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];" : "=l"(v0), "=l"(v1) : "l"(p) : "memory");
}

__device__ __forceinline__ void store_128(std::uint64_t* p, std::uint64_t v0, std::uint64_t v1) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" ::"l"(p), "l"(v0), "l"(v1) : "memory");
}

// Spins between two looks at the clock and the abort flag: the clock read is not free, and a
// spinning thread must still notice an abort within microseconds.
inline constexpr std::uint32_t kSpinsPerCheck = 256;

// Who waits and where, for the error report.
struct WaitSite {
  std::int32_t rank;
  std::int32_t threadblock;
  std::int32_t ir_step;
  std::int32_t flat_step;
  std::int32_t peer;
  std::int32_t channel;
  std::int32_t part;
  std::uint64_t tile;
  std::uint64_t launch;
};

// Records the first failure of the communicator (later ones only raise the abort flag).
inline __device__ __noinline__ void report_failure(const LaunchArgs& args, const WaitSite& site,
                                                   WaitKind kind, std::int32_t dep_threadblock,
                                                   std::int32_t dep_step, std::int32_t dep_ir_step,
                                                   std::uint64_t expected, std::uint64_t observed,
                                                   std::uint64_t waited_ns) {
  if (atomicCAS(&args.control->claimed, 0u, 1u) == 0u) {
    volatile ErrorReport* r = args.report;
    r->kind = static_cast<std::uint32_t>(kind);
    r->rank = site.rank;
    r->threadblock = site.threadblock;
    r->ir_step = site.ir_step;
    r->flat_step = site.flat_step;
    r->peer = site.peer;
    r->channel = site.channel;
    r->dep_threadblock = dep_threadblock;
    r->dep_step = dep_step;
    r->dep_ir_step = dep_ir_step;
    r->part = site.part;
    r->tile = site.tile;
    r->launch = site.launch;
    r->expected = expected;
    r->observed = observed;
    r->waited_ns = waited_ns;
    __threadfence_system();
    r->valid = 1;
    __threadfence_system();
  }
  atomicExch(&args.control->abort, 1u);
}

// Tracks one wait's deadline. The clock starts at the first look, so a wait that succeeds at
// once costs no clock read.
class Deadline {
 public:
  __device__ explicit Deadline(std::uint64_t timeout_ns) : timeout_ns_(timeout_ns) {}

  // False when the wait must end: the timeout expired (expired() tells) or another thread of
  // the communicator failed.
  __device__ __forceinline__ bool keep_waiting(const LaunchArgs& args) {
    if (++spins_ % kSpinsPerCheck != 0) return true;
    if (load_relaxed_u32(&args.control->abort) != 0u) return false;
    const std::uint64_t now = global_timer_ns();
    if (start_ == 0) start_ = now;
    if (now - start_ > timeout_ns_) {
      expired_ = true;
      waited_ = now - start_;
      return false;
    }
    return true;
  }
  __device__ bool expired() const { return expired_; }
  __device__ std::uint64_t waited_ns() const { return waited_; }

 private:
  std::uint64_t timeout_ns_;
  std::uint64_t start_ = 0;
  std::uint64_t waited_ = 0;
  std::uint32_t spins_ = 0;
  bool expired_ = false;
};

}  // namespace weft::gpu::device
