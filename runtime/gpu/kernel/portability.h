// What the interpreter kernel uses of CUDA C++, for its two builds (docs/architecture.md §5):
//  - nvcc: CUDA itself, and the kernel's code goes in namespace device::cuda;
//  - the host C++ compiler (host mode): the same source runs on OS threads that the host launcher
//    starts (host_thread.h), and the code goes in namespace device::host, so that both builds can
//    sit in one program without their instantiations colliding.
// Only this file and primitives.cuh's twin (primitives_host.h) differ between the builds; the
// interpreter's logic is one copy. Memory ordering is never decided here: every access that
// another thread or GPU observes goes through primitives.cuh.
#pragma once

#if defined(__CUDACC__)

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define WEFT_KERNEL_BUILD cuda
#define WEFT_NOINLINE __noinline__
#define WEFT_UNROLL _Pragma("unroll")
// A variable shared by the threads of a CTA.
#define WEFT_CTA_SHARED(type, name) __shared__ type name

#else  // host mode

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "host_thread.h"
#include "weft/ir/half_float.h"

#define WEFT_KERNEL_BUILD host
#define WEFT_NOINLINE __attribute__((noinline))
#define WEFT_UNROLL _Pragma("GCC unroll 8")
#define WEFT_CTA_SHARED(type, name)      \
  static constexpr char name##_site = 0; \
  type& name = ::weft::gpu::host::cta_shared<type>(&name##_site)

// Function and parameter qualifiers: meaningless on the host.
#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__

// The built-in index variables, from the thread's context.
#define threadIdx (::weft::gpu::host::this_thread().thread_index)
#define blockIdx (::weft::gpu::host::this_thread().block_index)
#define blockDim (::weft::gpu::host::this_thread().block_dim)
#define gridDim (::weft::gpu::host::this_thread().grid_dim)

struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};

// Barriers and warp votes: every thread of the CTA (of the warp) must reach them, as on a GPU.
inline void __syncthreads() {
  ::weft::gpu::host::this_thread().cta->block().arrive_and_wait(0);
}
inline int __syncthreads_or(int predicate) {
  return ::weft::gpu::host::this_thread().cta->block().arrive_and_wait(predicate != 0 ? 1u : 0u) !=
                 0
             ? 1
             : 0;
}
inline void __syncwarp(unsigned /*mask*/ = 0xffffffffu) {
  const auto& self = ::weft::gpu::host::this_thread();
  self.cta->warp(self.thread_index.x).arrive_and_wait(0);
}
inline unsigned __ballot_sync(unsigned /*mask*/, int predicate) {
  const auto& self = ::weft::gpu::host::this_thread();
  const unsigned lane = self.thread_index.x % ::weft::gpu::host::kWarpSize;
  return self.cta->warp(self.thread_index.x).arrive_and_wait(predicate != 0 ? 1u << lane : 0u);
}
inline int __any_sync(unsigned mask, int predicate) {
  return __ballot_sync(mask, predicate) != 0 ? 1 : 0;
}
inline int __ffs(unsigned x) {
  return __builtin_ffs(static_cast<int>(x));
}

// Atomics on device memory (the kernel's claim of the error report and its abort word).
inline unsigned atomicCAS(unsigned* address, unsigned compare, unsigned value) {
  std::atomic_ref<unsigned>(*address).compare_exchange_strong(compare, value,
                                                              std::memory_order_acq_rel);
  return compare;
}
inline unsigned atomicExch(unsigned* address, unsigned value) {
  return std::atomic_ref<unsigned>(*address).exchange(value, std::memory_order_acq_rel);
}
inline void __threadfence_system() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

// An L2 load: on the host, an ordinary load (what makes the data visible is the acquire that
// precedes it, as on the GPU).
template <class T>
inline T __ldcg(const T* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// half and bfloat16 as CUDA's conversion intrinsics see them, converted as the CPU reference
// executor converts (round to nearest even).
struct __half {
  std::uint16_t bits;
};
struct __nv_bfloat16 {
  std::uint16_t bits;
};
inline __half __ushort_as_half(unsigned short bits) {
  return {bits};
}
inline unsigned short __half_as_ushort(__half h) {
  return h.bits;
}
inline float __half2float(__half h) {
  return ::weft::cpu::half_to_float(h.bits);
}
inline __half __float2half_rn(float f) {
  return {::weft::cpu::float_to_half(f)};
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) {
  return {bits};
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) {
  return b.bits;
}
inline float __bfloat162float(__nv_bfloat16 b) {
  return ::weft::cpu::bfloat16_to_float(b.bits);
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  return {::weft::cpu::float_to_bfloat16(f)};
}

// Their two-wide arithmetic, one correctly rounded operation per lane as sm_80+ does it (min and
// max return NaN when either operand is NaN), so that host mode runs the kernel's packed path.
// A pair is its 32 bits (lane 0 in the low half), as CUDA lays it out in memory.
struct __half2 {
  std::uint32_t bits;
};
struct __nv_bfloat162 {
  std::uint32_t bits;
};

namespace weft::gpu::host {
inline float lane_value(__half2, std::uint16_t bits) {
  return ::weft::cpu::half_to_float(bits);
}
inline float lane_value(__nv_bfloat162, std::uint16_t bits) {
  return ::weft::cpu::bfloat16_to_float(bits);
}
inline std::uint16_t lane_bits(__half2, float f) {
  return ::weft::cpu::float_to_half(f);
}
inline std::uint16_t lane_bits(__nv_bfloat162, float f) {
  return ::weft::cpu::float_to_bfloat16(f);
}
inline float add(float a, float b) {
  return a + b;
}
inline float multiply(float a, float b) {
  return a * b;
}
inline float max_nan(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? std::nanf("") : (a < b ? b : a);
}
inline float min_nan(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? std::nanf("") : (b < a ? b : a);
}
template <class Pair>
inline Pair lanewise(Pair a, Pair b, float (*operation)(float, float)) {
  const auto lane = [&](int shift) -> std::uint32_t {
    const auto x = static_cast<std::uint16_t>(a.bits >> shift);
    const auto y = static_cast<std::uint16_t>(b.bits >> shift);
    return static_cast<std::uint32_t>(lane_bits(a, operation(lane_value(a, x), lane_value(a, y))))
           << shift;
  };
  return Pair{lane(0) | lane(16)};
}
}  // namespace weft::gpu::host

#define WEFT_HOST_PAIR_OPS(Pair)                                           \
  inline Pair __hadd2(Pair a, Pair b) {                                    \
    return ::weft::gpu::host::lanewise(a, b, ::weft::gpu::host::add);      \
  }                                                                        \
  inline Pair __hmul2(Pair a, Pair b) {                                    \
    return ::weft::gpu::host::lanewise(a, b, ::weft::gpu::host::multiply); \
  }                                                                        \
  inline Pair __hmax2_nan(Pair a, Pair b) {                                \
    return ::weft::gpu::host::lanewise(a, b, ::weft::gpu::host::max_nan);  \
  }                                                                        \
  inline Pair __hmin2_nan(Pair a, Pair b) {                                \
    return ::weft::gpu::host::lanewise(a, b, ::weft::gpu::host::min_nan);  \
  }
WEFT_HOST_PAIR_OPS(__half2)
WEFT_HOST_PAIR_OPS(__nv_bfloat162)
#undef WEFT_HOST_PAIR_OPS

namespace weft::gpu::device {
using std::isnan;
}  // namespace weft::gpu::device

#endif
