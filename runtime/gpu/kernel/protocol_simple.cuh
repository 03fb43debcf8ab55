// ---- Simple and local steps: bulk element-wise work on one piece -------------------------------
//
// Simple (NCCL's prims_simple.h): a message is plain data in a FIFO slot; whether it has arrived
// and whether the slot is free are the counters of the wait and post phases (wait_post.cuh), so
// the data phase here only moves and reduces. The local steps (cpy, re) of every protocol are
// the same bulk work (local_step for the LL and LL128 kernels).
#pragma once

#include <cstdint>

#include "cta_shared.cuh"
#include "element_types.cuh"
#include "portability.h"
#include "weft/program/device_abi.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// out1[i] = out2[i] = a[i] ⊕ b[i] ⊕ extra[0][i] ⊕ ... for the first `packs` vectors of V (b,
// extras, out2 optional; extra[k] + extra_offset is extra source k's piece). Every operand is read
// before the element's results are written, by the same thread, so out1 == a (re's destination)
// is safe.
template <class Type, class Op, class V>
__device__ __forceinline__ void process_vectors(std::uint64_t packs, const char* a, const char* b,
                                                const char* const* extra,
                                                std::uint64_t extra_offset, int extras, char* out1,
                                                char* out2, Workers workers) {
  // Two vectors in flight per thread: four would not fit the 128 registers every half,
  // bfloat16 and 8-bit instantiation may use at 512 threads without spilling.
  constexpr int kUnroll = 2;
  const std::uint32_t tid = workers.index;
  const std::uint32_t nthreads = workers.count;
  const V* va = reinterpret_cast<const V*>(a);
  const V* vb = reinterpret_cast<const V*>(b);
  V* vo1 = reinterpret_cast<V*>(out1);
  V* vo2 = reinterpret_cast<V*>(out2);
  std::uint64_t p = tid;
  // Several independent loads in flight per thread before the first store.
  for (; p + (kUnroll - 1) * nthreads < packs; p += kUnroll * nthreads) {
    V v[kUnroll];
    WEFT_UNROLL
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(va + p + u * nthreads);
    if (b != nullptr) {
      V w[kUnroll];
      WEFT_UNROLL
      for (int u = 0; u < kUnroll; ++u) w[u] = __ldcg(vb + p + u * nthreads);
      WEFT_UNROLL
      for (int u = 0; u < kUnroll; ++u) v[u] = reduce_vector<Type, Op>(v[u], w[u]);
    }
    for (int k = 0; k < extras; ++k) {
      const V* ve = reinterpret_cast<const V*>(extra[k] + extra_offset);
      WEFT_UNROLL
      for (int u = 0; u < kUnroll; ++u) {
        v[u] = reduce_vector<Type, Op>(v[u], __ldcg(ve + p + u * nthreads));
      }
    }
    WEFT_UNROLL
    for (int u = 0; u < kUnroll; ++u) {
      vo1[p + u * nthreads] = v[u];
      if (vo2 != nullptr) vo2[p + u * nthreads] = v[u];
    }
  }
  for (; p < packs; p += nthreads) {
    V v = __ldcg(va + p);
    if (b != nullptr) v = reduce_vector<Type, Op>(v, __ldcg(vb + p));
    for (int k = 0; k < extras; ++k) {
      v = reduce_vector<Type, Op>(v,
                                  __ldcg(reinterpret_cast<const V*>(extra[k] + extra_offset) + p));
    }
    vo1[p] = v;
    if (vo2 != nullptr) vo2[p] = v;
  }
}

// The same for n elements: in vectors as wide as every pointer's alignment allows (16, 8 or 4
// bytes), the rest one element at a time.
template <class Type, class Op>
__device__ __forceinline__ void process_span(std::uint64_t n, const char* a, const char* b,
                                             const char* const* extra, std::uint64_t extra_offset,
                                             int extras, char* out1, char* out2, Workers workers) {
  using S = typename Type::Storage;
  std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) |
                        reinterpret_cast<std::uintptr_t>(out1) |
                        reinterpret_cast<std::uintptr_t>(out2);
  for (int k = 0; k < extras; ++k)
    bits |= reinterpret_cast<std::uintptr_t>(extra[k] + extra_offset);
  std::uint64_t done = 0;
  if ((bits & 15u) == 0) {
    constexpr std::uint64_t kPer = 16 / sizeof(S);
    process_vectors<Type, Op, uint4>(n / kPer, a, b, extra, extra_offset, extras, out1, out2,
                                     workers);
    done = n / kPer * kPer;
  } else if ((bits & 7u) == 0) {
    constexpr std::uint64_t kPer = 8 / sizeof(S);
    process_vectors<Type, Op, uint2>(n / kPer, a, b, extra, extra_offset, extras, out1, out2,
                                     workers);
    done = n / kPer * kPer;
  } else if constexpr (sizeof(S) <= 4) {
    if ((bits & 3u) == 0) {
      constexpr std::uint64_t kPer = 4 / sizeof(S);
      process_vectors<Type, Op, unsigned>(n / kPer, a, b, extra, extra_offset, extras, out1, out2,
                                          workers);
      done = n / kPer * kPer;
    }
  }
  const S* sa = reinterpret_cast<const S*>(a);
  const S* sb = reinterpret_cast<const S*>(b);
  S* so1 = reinterpret_cast<S*>(out1);
  S* so2 = reinterpret_cast<S*>(out2);
  for (std::uint64_t i = done + workers.index; i < n; i += workers.count) {
    S v = load_cg(sa + i);
    if (sb != nullptr) v = reduce<Type, Op>(v, load_cg(sb + i));
    for (int k = 0; k < extras; ++k) {
      v = reduce<Type, Op>(v, load_cg(reinterpret_cast<const S*>(extra[k] + extra_offset) + i));
    }
    so1[i] = v;
    if (so2 != nullptr) so2[i] = v;
  }
}

// Pieces [first, first + n) of a Simple, cpy or re step in one tile (one message's worth when
// the step sends or receives): each piece through process_span, by `workers` (the whole CTA,
// or in the overlap step every warp but the poster's). `extra`: a merged reduce's further
// sources at piece 0 of the tile (wait_phase's).
template <class Type, class Op>
__device__ __forceinline__ void bulk_step(const LaunchArgs& args, const CtaShared& cs, Counters c,
                                          const DeviceStep& step, std::uint64_t tile,
                                          std::uint64_t len, std::uint32_t first, std::uint32_t n,
                                          const char* const* extra, Workers workers) {
  using S = typename Type::Storage;
  const std::uint8_t type = step.type;
  const CtaDescriptor& d = *cs.descriptor;
  const char* in = step_receives(type)
                       ? d.recv_fifo + (c.received % args.fifo_depth) * args.slot_bytes
                       : nullptr;
  char* out =
      step_sends(type) ? d.send_fifo + (c.sent % args.fifo_depth) * args.slot_bytes : nullptr;
  const int extras = type == kReduce ? step.source_count : 0;
  // The loader picks the order that reads every shared piece before overwriting it (only local
  // steps are ever reversed, so the slot layout of a message is untouched).
  const bool reverse = (step.flags & kStepReversePieces) != 0;
  for (std::uint32_t q = 0; q < n; ++q) {
    const std::uint32_t j = reverse ? first + n - 1 - q : first + q;
    const char* src = step.srcbuf != DeviceBuffer::None
                          ? piece_pointer<S>(args, cs, step.srcbuf, step.srcoff, j, tile)
                          : nullptr;
    char* dst = step.dstbuf != DeviceBuffer::None
                    ? piece_pointer<S>(args, cs, step.dstbuf, step.dstoff, j, tile)
                    : nullptr;
    const char* slot_in = in != nullptr ? in + (j - first) * args.piece_stride_bytes : nullptr;
    char* slot_out = out != nullptr ? out + (j - first) * args.piece_stride_bytes : nullptr;
    const std::uint64_t extra_offset =
        static_cast<std::uint64_t>(j) * args.chunk_elements * sizeof(S);
    switch (type) {
      case kSend:
        process_span<Type, Op>(len, src, nullptr, extra, 0, 0, slot_out, nullptr, workers);
        break;
      case kRecv:
        process_span<Type, Op>(len, slot_in, nullptr, extra, 0, 0, dst, nullptr, workers);
        break;
      case kRecvCopySend:
        process_span<Type, Op>(len, slot_in, nullptr, extra, 0, 0, dst, slot_out, workers);
        break;
      case kRecvReduceSend:
        process_span<Type, Op>(len, slot_in, src, extra, 0, 0, slot_out, nullptr, workers);
        break;
      case kRecvReduceCopy:
        process_span<Type, Op>(len, slot_in, src, extra, 0, 0, dst, nullptr, workers);
        break;
      case kRecvReduceCopySend:
        process_span<Type, Op>(len, slot_in, src, extra, 0, 0, dst, slot_out, workers);
        break;
      case kCopy:
        process_span<Type, Op>(len, src, nullptr, extra, 0, 0, dst, nullptr, workers);
        break;
      case kReduce:
        process_span<Type, Op>(len, dst, src, extra, extra_offset, extras, dst, nullptr, workers);
        break;
      default:
        break;
    }
    // Shifted overlap between what this piece writes and a later piece reads.
    if ((step.flags & kStepSerialPieces) != 0 && q + 1 < n) workers_barrier(workers);
  }
}

// A local step (cpy, re) in the LL and LL128 kernels: out of line, so that the bulk code's
// registers do not add to the word loops'.
template <class Type, class Op>
__device__ WEFT_NOINLINE void local_step(const LaunchArgs& args, const CtaShared& cs,
                                         const DeviceStep* step, std::uint64_t tile,
                                         std::uint64_t len, std::uint32_t first, std::uint32_t n) {
  // No FIFO: counters unused.
  bulk_step<Type, Op>(args, cs, cs.start, *step, tile, len, first, n, cs.extra[0], whole_cta());
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
