// ---- LL and LL128: 8-byte words of payload, each element-aligned inside one piece --------------
//
// What both flag protocols (protocol_ll.cuh, protocol_ll128.cuh) do with one word of a piece:
// load and store it in the user's buffers, apply the step to it, and find the piece's bytes.
#pragma once

#include <cstdint>

#include "cta_shared.cuh"
#include "element_types.cuh"
#include "portability.h"
#include "weft/program/device_abi.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

template <class S>
__device__ __forceinline__ std::uint64_t load_word(const S* p, std::uint32_t n) {
  constexpr std::uint32_t kPerWord = 8 / sizeof(S);
  if (n == kPerWord && (reinterpret_cast<std::uintptr_t>(p) & 7u) == 0) {
    return __ldcg(reinterpret_cast<const unsigned long long*>(p));
  }
  S v[kPerWord];
  WEFT_UNROLL
  for (std::uint32_t q = 0; q < kPerWord; ++q) v[q] = q < n ? load_cg(p + q) : S{};
  std::uint64_t w;
  memcpy(&w, v, 8);
  return w;
}

template <class S>
__device__ __forceinline__ void store_word(S* p, std::uint64_t w, std::uint32_t n) {
  constexpr std::uint32_t kPerWord = 8 / sizeof(S);
  if (n == kPerWord && (reinterpret_cast<std::uintptr_t>(p) & 7u) == 0) {
    *reinterpret_cast<std::uint64_t*>(p) = w;
    return;
  }
  S v[kPerWord];
  memcpy(v, &w, 8);
  WEFT_UNROLL
  for (std::uint32_t q = 0; q < kPerWord; ++q) {
    if (q < n) p[q] = v[q];
  }
}

// The step's work on `count` elements at element `e` of a piece (src and dst are the piece's
// bytes, null where the step has none), `in` the received word: returns the word to send.
template <class Type, class Op>
__device__ __forceinline__ std::uint64_t word_op(std::uint8_t type, const char* src, char* dst,
                                                 std::uint64_t e, std::uint32_t count,
                                                 std::uint64_t in) {
  using S = typename Type::Storage;
  if (count == 0) return 0;  // padding
  std::uint64_t v = in;
  if (step_reads_source(type)) {
    const std::uint64_t local = load_word(reinterpret_cast<const S*>(src) + e, count);
    v = step_receives(type) ? reduce_word<Type, Op>(in, local) : local;
  }
  if (step_writes_destination(type)) store_word(reinterpret_cast<S*>(dst) + e, v, count);
  return v;
}

// Piece j's source and destination bytes for a word step, null where the step has none.
template <class S>
__device__ __forceinline__ const char* word_source(const LaunchArgs& args, const CtaShared& cs,
                                                   const DeviceStep& step, std::uint32_t j,
                                                   std::uint64_t tile) {
  return step_reads_source(step.type)
             ? piece_pointer<S>(args, cs, step.srcbuf, step.srcoff, j, tile)
             : nullptr;
}
template <class S>
__device__ __forceinline__ char* word_destination(const LaunchArgs& args, const CtaShared& cs,
                                                  const DeviceStep& step, std::uint32_t j,
                                                  std::uint64_t tile) {
  return step_writes_destination(step.type)
             ? piece_pointer<S>(args, cs, step.dstbuf, step.dstoff, j, tile)
             : nullptr;
}

template <class Type, class Op>
__device__ __forceinline__ std::uint32_t word_count(std::uint64_t e, std::uint64_t len) {
  using S = typename Type::Storage;
  constexpr std::uint64_t kPerWord = 8 / sizeof(S);
  return e >= len ? 0u : static_cast<std::uint32_t>(len - e < kPerWord ? len - e : kPerWord);
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
