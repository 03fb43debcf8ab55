// The interpreter kernel (DESIGN.md §5): one CTA per threadblock of every local rank, each
// replaying its flat step list once per tile (§2.3). Per step:
//   1. wait   (thread 0): dependencies (progress flags of the rank's other threadblocks), a free
//             slot on the send connection (head counter), and for Simple the next message on
//             the receive connection (tail counter); every wait has a deadline;
//   2. data   (all threads): move and reduce the step's pieces of this tile;
//   3. post   (thread 0): acknowledge the received message (the sender's head), publish a Simple
//             message (the receiver's tail), publish this step's completion if someone waits.
// A __syncthreads_or between the phases makes a failure in any thread everyone's failure at the
// same point, so the CTA leaves its loop together.
//
// What is the same for every thread of the CTA (its buffers, counters, the current step's wait
// site and merged-reduce sources) lives in shared memory, written by thread 0 before a barrier:
// nothing the threads share is addressed through the stack, so nothing spills to local memory.
//
// Counters are monotone across launches (see ThreadblockState), so consecutive launches and CUDA
// graph replays need no reset: message k of a connection uses slot k mod depth, LL flag
// ll_flag(k) (never 0), LL128 flag k + 1, and a dependency waits for
// dependency_flag(launch, tile, steps, step).
#pragma once

#include <cstdint>

#include "device_abi.h"
#include "element_types.cuh"
#include "message_layout.h"
#include "portability.h"
#include "primitives.cuh"
#include "weft/runtime/gpu/options.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

__device__ __forceinline__ bool step_receives(std::uint8_t t) {
  return t >= kRecv && t <= kRecvReduceCopySend;
}
__device__ __forceinline__ bool step_sends(std::uint8_t t) {
  return t == kSend || t == kRecvCopySend || t == kRecvReduceSend || t == kRecvReduceCopySend;
}
// Combines the received message with the local source (rrs, rrc, rrcs).
__device__ __forceinline__ bool step_reduces_message(std::uint8_t t) {
  return t == kRecvReduceSend || t == kRecvReduceCopy || t == kRecvReduceCopySend;
}
__device__ __forceinline__ bool step_writes_destination(std::uint8_t t) {
  return t == kRecv || t == kRecvCopySend || t == kRecvReduceCopy || t == kRecvReduceCopySend ||
         t == kCopy || t == kReduce;
}
__device__ __forceinline__ bool step_reads_source(std::uint8_t t) {
  return !step_receives(t) || step_reduces_message(t);
}

// Steps a threadblock may have for its list to be kept in shared memory (36 bytes each); longer
// lists are read from global memory.
inline constexpr std::int32_t kSharedSteps = 256;

// The CTA's shared state (thread 0 writes it before a barrier, every thread reads it after).
struct CtaShared {
  // The descriptor, pointing at the copy below, or the one in global memory (see
  // copy_descriptor).
  const CtaDescriptor* descriptor;
  // Raw copies of the descriptor and of its step list (plain bytes: a __shared__ variable
  // cannot have the structs' default member initializers).
  alignas(CtaDescriptor) unsigned char descriptor_copy[sizeof(CtaDescriptor)];
  alignas(DeviceStep) unsigned char steps_copy[kSharedSteps * sizeof(DeviceStep)];
  char* input;
  char* output;
  char* scratch;
  std::uint64_t launch;
  std::uint64_t sent;      // messages sent on the send connection before the current one
  std::uint64_t received;  // messages received on the receive connection before the current one
  WaitSite site;           // where the current wait is, for the error report
  // Merged re: the further sources of the current step, at piece 0 of the current tile.
  const char* extra[kMaxReduceSources - 1];
};

__device__ __forceinline__ char* buffer_base(const CtaShared& cs, DeviceBuffer buffer) {
  return buffer == DeviceBuffer::Input    ? cs.input
         : buffer == DeviceBuffer::Output ? cs.output
                                          : cs.scratch;
}

// The bytes of piece j of a step's chunk range, in tile `tile`.
template <class S>
__device__ __forceinline__ char* piece_pointer(const LaunchArgs& args, const CtaShared& cs,
                                               DeviceBuffer buffer, std::int32_t offset,
                                               std::uint32_t j, std::uint64_t tile) {
  const std::uint64_t element =
      (static_cast<std::uint64_t>(offset) + j) * args.chunk_elements + tile * args.tile_elements;
  return buffer_base(cs, buffer) + element * sizeof(S);
}

// ---- Simple and local steps: bulk element-wise work on one piece -------------------------------

// out1[i] = out2[i] = a[i] ⊕ b[i] ⊕ extra[0][i] ⊕ ... for the first `packs` vectors of V (b,
// extras, out2 optional; extra[k] + extra_offset is extra source k's piece). Every operand is read
// before the element's results are written, by the same thread, so out1 == a (re's destination)
// is safe.
template <class Type, class Op, class V>
__device__ __forceinline__ void process_vectors(std::uint64_t packs, const char* a, const char* b,
                                                const char* const* extra,
                                                std::uint64_t extra_offset, int extras, char* out1,
                                                char* out2) {
  // Two vectors in flight per thread: four would not fit the 128 registers every half,
  // bfloat16 and 8-bit instantiation may use at 512 threads without spilling.
  constexpr int kUnroll = 2;
  const std::uint32_t tid = threadIdx.x;
  const std::uint32_t nthreads = blockDim.x;
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
                                             int extras, char* out1, char* out2) {
  using S = typename Type::Storage;
  std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) |
                        reinterpret_cast<std::uintptr_t>(out1) |
                        reinterpret_cast<std::uintptr_t>(out2);
  for (int k = 0; k < extras; ++k)
    bits |= reinterpret_cast<std::uintptr_t>(extra[k] + extra_offset);
  std::uint64_t done = 0;
  if ((bits & 15u) == 0) {
    constexpr std::uint64_t kPer = 16 / sizeof(S);
    process_vectors<Type, Op, uint4>(n / kPer, a, b, extra, extra_offset, extras, out1, out2);
    done = n / kPer * kPer;
  } else if ((bits & 7u) == 0) {
    constexpr std::uint64_t kPer = 8 / sizeof(S);
    process_vectors<Type, Op, uint2>(n / kPer, a, b, extra, extra_offset, extras, out1, out2);
    done = n / kPer * kPer;
  } else if constexpr (sizeof(S) <= 4) {
    if ((bits & 3u) == 0) {
      constexpr std::uint64_t kPer = 4 / sizeof(S);
      process_vectors<Type, Op, unsigned>(n / kPer, a, b, extra, extra_offset, extras, out1, out2);
      done = n / kPer * kPer;
    }
  }
  const S* sa = reinterpret_cast<const S*>(a);
  const S* sb = reinterpret_cast<const S*>(b);
  S* so1 = reinterpret_cast<S*>(out1);
  S* so2 = reinterpret_cast<S*>(out2);
  for (std::uint64_t i = done + threadIdx.x; i < n; i += blockDim.x) {
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
// the step sends or receives): each piece through process_span.
template <class Type, class Op>
__device__ __forceinline__ void bulk_step(const LaunchArgs& args, const CtaShared& cs,
                                          const DeviceStep& step, std::uint64_t tile,
                                          std::uint64_t len, std::uint32_t first, std::uint32_t n) {
  using S = typename Type::Storage;
  const std::uint8_t type = step.type;
  const CtaDescriptor& d = *cs.descriptor;
  const char* in = step_receives(type)
                       ? d.recv_fifo + (cs.received % args.fifo_depth) * args.slot_bytes
                       : nullptr;
  char* out =
      step_sends(type) ? d.send_fifo + (cs.sent % args.fifo_depth) * args.slot_bytes : nullptr;
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
        process_span<Type, Op>(len, src, nullptr, cs.extra, 0, 0, slot_out, nullptr);
        break;
      case kRecv:
        process_span<Type, Op>(len, slot_in, nullptr, cs.extra, 0, 0, dst, nullptr);
        break;
      case kRecvCopySend:
        process_span<Type, Op>(len, slot_in, nullptr, cs.extra, 0, 0, dst, slot_out);
        break;
      case kRecvReduceSend:
        process_span<Type, Op>(len, slot_in, src, cs.extra, 0, 0, slot_out, nullptr);
        break;
      case kRecvReduceCopy:
        process_span<Type, Op>(len, slot_in, src, cs.extra, 0, 0, dst, nullptr);
        break;
      case kRecvReduceCopySend:
        process_span<Type, Op>(len, slot_in, src, cs.extra, 0, 0, dst, slot_out);
        break;
      case kCopy:
        process_span<Type, Op>(len, src, nullptr, cs.extra, 0, 0, dst, nullptr);
        break;
      case kReduce:
        process_span<Type, Op>(len, dst, src, cs.extra, extra_offset, extras, dst, nullptr);
        break;
      default:
        break;
    }
    // Shifted overlap between what this piece writes and a later piece reads.
    if ((step.flags & kStepSerialPieces) != 0 && q + 1 < n) {
      __syncthreads();
    }
  }
}

// A local step (cpy, re) in the LL and LL128 kernels: out of line, so that the bulk code's
// registers do not add to the word loops'.
template <class Type, class Op>
__device__ WEFT_NOINLINE void local_step(const LaunchArgs& args, const CtaShared& cs,
                                         const DeviceStep* step, std::uint64_t tile,
                                         std::uint64_t len, std::uint32_t first, std::uint32_t n) {
  bulk_step<Type, Op>(args, cs, *step, tile, len, first, n);
}

// ---- LL and LL128: 8-byte words of payload, each element-aligned inside one piece --------------

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

// The slow path of an LL receive: polls `p` until both flags are `flag` and returns that line, or
// until the wait ends (reported) and returns the last line seen, whose flags are then not both
// `flag`. Out of line, and given nothing by reference, so that the fast path keeps its line in
// registers (a line passed by reference would live in local memory, a store on every receive).
inline __device__ WEFT_NOINLINE LLLine wait_ll_line(const LaunchArgs& args, const CtaShared& cs,
                                                    const LLLine* p, std::uint32_t flag) {
  const CtaDescriptor& d = *cs.descriptor;
  Deadline deadline;
  LLLine line{};
  do {
    if (!deadline.keep_waiting(args, d, cs.launch)) {
      report_wait(args, deadline, cs.site, d.recv_peer, WaitKind::LineFlag, -1, -1, -1, flag,
                  line.flag0 != flag ? line.flag0 : line.flag1);
      return line;
    }
    line = load_ll_line(p);
  } while (line.flag0 != flag || line.flag1 != flag);
  return line;
}

// The lines of an LL slot that message of n pieces of `words` words each leaves alone (each
// piece's tail up to the stride, and everything after the last piece), written with `flag`.
inline __device__ WEFT_NOINLINE void rewrite_ll_padding(const LaunchArgs& args, LLLine* out,
                                                        std::uint32_t n, std::uint64_t words,
                                                        std::uint64_t stride_lines,
                                                        std::uint32_t flag) {
  const std::uint64_t slot_lines = args.slot_bytes / sizeof(LLLine);
  for (std::uint32_t q = 0; q <= n; ++q) {
    const std::uint64_t begin = q * stride_lines + (q < n ? words : 0);
    const std::uint64_t end = q < n ? (q + 1) * stride_lines : slot_lines;
    for (std::uint64_t line = begin + threadIdx.x; line < end; line += blockDim.x) {
      store_ll_line(out + line, 0, flag);
    }
  }
}

template <class Type, class Op>
__device__ bool ll_step(const LaunchArgs& args, const CtaShared& cs, const DeviceStep& step,
                        std::uint64_t tile, std::uint64_t len, std::uint32_t first,
                        std::uint32_t n) {
  using S = typename Type::Storage;
  constexpr std::uint64_t kPerWord = 8 / sizeof(S);
  const std::uint8_t type = step.type;
  const bool receiving = step_receives(type);
  const bool sending = step_sends(type);
  const CtaDescriptor& d = *cs.descriptor;
  const LLLine* in = receiving
                         ? reinterpret_cast<const LLLine*>(
                               d.recv_fifo + (cs.received % args.fifo_depth) * args.slot_bytes)
                         : nullptr;
  LLLine* out =
      sending
          ? reinterpret_cast<LLLine*>(d.send_fifo + (cs.sent % args.fifo_depth) * args.slot_bytes)
          : nullptr;
  const std::uint32_t flag_in = ll_flag(cs.received);
  const std::uint32_t flag_out = ll_flag(cs.sent);
  const std::uint64_t words = piece_words(len, sizeof(S));
  const std::uint64_t stride_lines = args.piece_stride_bytes / 8;
  for (std::uint32_t q = 0; q < n; ++q) {
    const char* src = word_source<S>(args, cs, step, first + q, tile);
    char* dst = word_destination<S>(args, cs, step, first + q, tile);
    const std::uint64_t first_line = q * stride_lines;
    for (std::uint64_t w = threadIdx.x; w < words; w += blockDim.x) {
      std::uint64_t data = 0;
      if (receiving) {
        LLLine line = load_ll_line(in + first_line + w);
        if (line.flag0 != flag_in || line.flag1 != flag_in) {
          line = wait_ll_line(args, cs, in + first_line + w, flag_in);
          if (line.flag0 != flag_in || line.flag1 != flag_in) return false;
        }
        data =
            static_cast<std::uint64_t>(line.data0) | (static_cast<std::uint64_t>(line.data1) << 32);
      }
      const std::uint64_t e = w * kPerWord;
      const std::uint64_t result =
          word_op<Type, Op>(type, src, dst, e, word_count<Type, Op>(e, len), data);
      if (sending) store_ll_line(out + first_line + w, result, flag_out);
    }
  }
  // Every slot is rewritten whole now and then, padding lines too (see kLLCleanPeriod), so that
  // no line the receiver may read is older than the flags can tell apart.
  if (sending && cs.sent % kLLCleanPeriod < args.fifo_depth) {
    rewrite_ll_padding(args, out, n, words, stride_lines, flag_out);
  }
  return true;
}

// LL128: 8 lanes move a 128-byte line, lane 7 carrying the flag in its second word, so one
// warp-wide 16-byte access covers 4 whole lines (NVLink and one device's memory keep a 128-byte
// line's store together). Each lane keeps kLines of its warp's lines in flight.
inline constexpr int kLL128LinesPerLane = 2;

template <class Type, class Op>
__device__ __forceinline__ void ll128_lane(std::uint8_t type, const char* src, char* dst,
                                           std::uint64_t e, std::uint64_t len, bool flag_lane,
                                           std::uint64_t v0, std::uint64_t v1, std::uint64_t& o0,
                                           std::uint64_t& o1) {
  using S = typename Type::Storage;
  constexpr std::uint64_t kPerWord = 8 / sizeof(S);
  // A data lane's 16 bytes are one vector of the user's elements when they are all there and
  // both sides are 16-byte aligned.
  const bool whole = !flag_lane && e + 2 * kPerWord <= len;
  const char* s = src != nullptr ? src + e * sizeof(S) : nullptr;
  char* t = dst != nullptr ? dst + e * sizeof(S) : nullptr;
  if (whole &&
      ((reinterpret_cast<std::uintptr_t>(s) | reinterpret_cast<std::uintptr_t>(t)) & 15u) == 0) {
    uint4 in;
    memcpy(&in, &v0, 8);
    memcpy(reinterpret_cast<char*>(&in) + 8, &v1, 8);
    uint4 v = in;
    if (step_reads_source(type)) {
      const uint4 local = __ldcg(reinterpret_cast<const uint4*>(s));
      v = step_receives(type) ? reduce_vector<Type, Op>(in, local) : local;
    }
    if (step_writes_destination(type)) *reinterpret_cast<uint4*>(t) = v;
    memcpy(&o0, &v, 8);
    memcpy(&o1, reinterpret_cast<const char*>(&v) + 8, 8);
    return;
  }
  o0 = word_op<Type, Op>(type, src, dst, e, word_count<Type, Op>(e, len), v0);
  if (!flag_lane) {
    o1 = word_op<Type, Op>(type, src, dst, e + kPerWord, word_count<Type, Op>(e + kPerWord, len),
                           v1);
  }
}

template <class Type, class Op>
__device__ bool ll128_step(const LaunchArgs& args, const CtaShared& cs, const DeviceStep& step,
                           std::uint64_t tile, std::uint64_t len, std::uint32_t first,
                           std::uint32_t n) {
  using S = typename Type::Storage;
  constexpr std::uint64_t kPerWord = 8 / sizeof(S);
  constexpr int kU = kLL128LinesPerLane;
  const std::uint8_t type = step.type;
  const bool receiving = step_receives(type);
  const bool sending = step_sends(type);
  const CtaDescriptor& d = *cs.descriptor;
  const std::uint64_t* in =
      receiving ? reinterpret_cast<const std::uint64_t*>(
                      d.recv_fifo + (cs.received % args.fifo_depth) * args.slot_bytes)
                : nullptr;
  std::uint64_t* out = sending ? reinterpret_cast<std::uint64_t*>(
                                     d.send_fifo + (cs.sent % args.fifo_depth) * args.slot_bytes)
                               : nullptr;
  const std::uint64_t flag_in = cs.received + 1;
  const std::uint64_t flag_out = cs.sent + 1;
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t warp = threadIdx.x / 32;
  const std::uint32_t warps = blockDim.x / 32;
  const std::uint32_t group = lane / 8;  // which of the warp's 4 lines
  const std::uint32_t part = lane % 8;   // which 16 bytes of it
  const bool flag_lane = part == 7;
  const std::uint64_t lines = ll128_piece_lines(len, sizeof(S));
  const std::uint64_t stride_lines = args.piece_stride_bytes / kLL128LinePayload;
  for (std::uint32_t q = 0; q < n; ++q) {
    const char* src = word_source<S>(args, cs, step, first + q, tile);
    char* dst = word_destination<S>(args, cs, step, first + q, tile);
    const std::uint64_t first_line = q * stride_lines;
    // Whole warps iterate together (the loop bound is uniform within a warp) so that the
    // warp-wide votes and line accesses below see every lane.
    for (std::uint64_t base = static_cast<std::uint64_t>(warp) * 4 * kU; base < lines;
         base += static_cast<std::uint64_t>(warps) * 4 * kU) {
      std::uint64_t v0[kU], v1[kU];
      WEFT_UNROLL
      for (int u = 0; u < kU; ++u) v0[u] = v1[u] = 0;
      if (receiving) {
        // The warp is converged around its loads (after divergent word work, a lane could
        // otherwise load its part of a line before the flag lane sees that line's flag).
        __syncwarp();
        Deadline deadline;
        for (;;) {
          bool stale = false;
          WEFT_UNROLL
          for (int u = 0; u < kU; ++u) {
            const std::uint64_t line = base + 4 * u + group;
            load_ll128_part(in + (first_line + line) * kLL128LineWords + part * 2, v0[u], v1[u],
                            line < lines, flag_lane);
            stale = stale || (line < lines && flag_lane && v1[u] != flag_in);
          }
          if (!__any_sync(0xffffffffu, stale)) break;
          const bool stop = !deadline.keep_waiting(args, d, cs.launch);
          if (__any_sync(0xffffffffu, stop)) {
            // The whole warp leaves; exactly one lane reports, preferably one whose line is
            // still stale.
            const unsigned stopped = __ballot_sync(0xffffffffu, stop);
            const unsigned stale_lanes = __ballot_sync(0xffffffffu, stale);
            const int reporter = __ffs(stale_lanes != 0u ? stale_lanes : stopped) - 1;
            if (static_cast<int>(lane) == reporter) {
              report_wait(args, deadline, cs.site, d.recv_peer, WaitKind::LineFlag, -1, -1, -1,
                          flag_in, v1[0]);
            }
            return false;
          }
        }
        // Every flag of these lines has arrived: load them again and use only these values, so
        // that no lane works with bytes read before its line's flag was seen.
        __syncwarp();
        WEFT_UNROLL
        for (int u = 0; u < kU; ++u) {
          const std::uint64_t line = base + 4 * u + group;
          load_ll128_part(in + (first_line + line) * kLL128LineWords + part * 2, v0[u], v1[u],
                          line < lines, flag_lane);
        }
      }
      WEFT_UNROLL
      for (int u = 0; u < kU; ++u) {
        const std::uint64_t line = base + 4 * u + group;
        const bool active = line < lines;
        std::uint64_t o0 = 0, o1 = 0;
        if (active) {
          ll128_lane<Type, Op>(type, src, dst, ll128_payload_word(line, part, 0) * kPerWord, len,
                               flag_lane, v0[u], v1[u], o0, o1);
        }
        if (sending) {
          if (flag_lane) o1 = flag_out;
          store_ll128_part(out + (first_line + line) * kLL128LineWords + part * 2, o0, o1, active,
                           flag_lane);
        }
      }
    }
  }
  return true;
}

// ---- the wait and post phases (thread 0) -------------------------------------------------------

// Waits until a FIFO counter (the send connection's head, the receive connection's tail) reaches
// `target`: relaxed polls, then one acquire fence. False when the wait ended (reported).
__device__ __forceinline__ bool wait_counter(const LaunchArgs& args, const CtaShared& cs,
                                             const std::uint64_t* counter, std::uint64_t target,
                                             bool system, std::int32_t peer, WaitKind kind) {
  std::uint64_t seen = load_poll(counter, system);
  if (seen < target) {
    Deadline deadline;
    do {
      if (!deadline.keep_waiting(args, *cs.descriptor, cs.launch)) {
        report_wait(args, deadline, cs.site, peer, kind, -1, -1, -1, target, seen);
        return false;
      }
    } while ((seen = load_poll(counter, system)) < target);
  }
  fence_after_poll(system);
  return true;
}

// Dependencies are waited for before the first message of a step only. Polls are relaxed, then
// one acquire fence (fence_after_poll) makes what the awaited side published visible.
inline __device__ WEFT_NOINLINE bool wait_phase(const LaunchArgs& args, CtaShared& cs,
                                                const DeviceStep* step, std::uint64_t tile,
                                                int protocol, bool first_part) {
  const CtaDescriptor& d = *cs.descriptor;
  const bool system = args.system_scope != 0;
  for (std::int32_t k = 0; first_part && k < step->dependency_count; ++k) {
    const DeviceDependency dep = d.dependencies[step->first_dependency + k];
    const std::uint64_t* flag =
        d.flags + static_cast<std::uint64_t>(dep.threadblock) * kFlagStrideWords;
    const std::uint64_t target =
        dependency_flag(cs.launch, tile, static_cast<std::uint64_t>(dep.steps),
                        static_cast<std::uint64_t>(dep.step));
    std::uint64_t seen = load_poll(flag, false);
    if (!flag_reached(seen, target)) {
      Deadline deadline;
      do {
        if (!deadline.keep_waiting(args, d, cs.launch)) {
          report_wait(args, deadline, cs.site, -1, WaitKind::Dependency, dep.threadblock, dep.step,
                      dep.ir_step, target, seen);
          return false;
        }
      } while (!flag_reached(seen = load_poll(flag, false), target));
    }
    fence_after_poll(false);
  }
  if (step_sends(step->type) && cs.sent + 1 > args.fifo_depth &&
      !wait_counter(args, cs, d.send_head, cs.sent + 1 - args.fifo_depth, system, d.send_peer,
                    WaitKind::Space)) {
    return false;
  }
  if (protocol == kSimple && step_receives(step->type) &&
      !wait_counter(args, cs, d.recv_tail, cs.received + 1, system, d.recv_peer,
                    WaitKind::Message)) {
    return false;
  }
  // Merged re: its further sources at piece 0 of this tile, for every thread (after the barrier).
  if (step->type == kReduce) {
    for (std::int32_t k = 0; k < step->source_count; ++k) {
      const DeviceSource source = d.sources[step->first_source + k];
      cs.extra[k] = buffer_base(cs, source.buffer) +
                    (static_cast<std::uint64_t>(source.offset) * args.chunk_elements +
                     tile * args.tile_elements) *
                        args.element_bytes;
    }
  }
  return true;
}

// Completion is published after the last message of a step only: one release fence, cumulative
// through the barrier before it (every thread's payload stores and slot reads are done), then
// relaxed stores of every counter the step advances (NCCL's postPeer).
__device__ __forceinline__ void post_phase(const LaunchArgs& args, const CtaShared& cs,
                                           const DeviceStep& step, std::uint64_t tile,
                                           std::int32_t flat_step, int protocol, bool last_part) {
  const CtaDescriptor& d = *cs.descriptor;
  const bool acknowledge = step_receives(step.type);
  const bool post = protocol == kSimple && step_sends(step.type);
  const bool publish = last_part && (step.flags & kStepPublishes) != 0;
  if (!acknowledge && !post && !publish) return;
  // A peer may be another GPU whenever the step talks to one; the progress flag is read only by
  // this rank's threadblocks, on this device.
  const bool system = args.system_scope != 0 && (acknowledge || post);
  fence_before_post(system);
  if (acknowledge) store_post(d.recv_head, cs.received + 1, system);
  if (post) store_post(d.send_tail, cs.sent + 1, system);
  if (publish) {
    store_post(d.flags + static_cast<std::uint64_t>(d.threadblock) * kFlagStrideWords,
               dependency_flag(cs.launch, tile, static_cast<std::uint64_t>(d.step_count),
                               static_cast<std::uint64_t>(flat_step)),
               false);
  }
}

// Thread 0, when the launch begins: this rank has arrived, in every rank's arrival table.
__device__ __forceinline__ void announce_arrival(const CtaDescriptor& d, std::uint64_t launch) {
  for (std::int32_t p = 0; p < d.nranks; ++p) {
    store_arrival(
        reinterpret_cast<std::uint64_t*>(d.peer_regions[p] + kArrivalTableOffset) + d.rank, launch);
  }
}

// Every thread: copies the descriptor and (when it fits) its step list into shared memory, so
// that the loads of each step's fields are shared-memory loads. In global memory they would be
// L1 hits only until the first fence: on sm_70 and later an acquire fence invalidates L1, and
// each step has one or two, so every step would wait for a chain of L2 round trips (measured
// on an H100: about 5 us a step). cs.descriptor is set after the next barrier.
__device__ __forceinline__ void copy_descriptor(CtaShared& cs, const CtaDescriptor* descriptor) {
  const auto* from = reinterpret_cast<const std::uint32_t*>(descriptor);
  auto* to = reinterpret_cast<std::uint32_t*>(cs.descriptor_copy);
  for (std::uint32_t i = threadIdx.x; i < sizeof(CtaDescriptor) / 4; i += blockDim.x) {
    to[i] = from[i];
  }
  const std::int32_t count = descriptor->step_count;
  if (count <= kSharedSteps) {
    const auto* steps = reinterpret_cast<const std::uint32_t*>(descriptor->steps);
    auto* steps_to = reinterpret_cast<std::uint32_t*>(cs.steps_copy);
    const auto words =
        static_cast<std::uint32_t>(static_cast<std::size_t>(count) * sizeof(DeviceStep) / 4);
    for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) steps_to[i] = steps[i];
  }
}

static_assert(sizeof(CtaDescriptor) % 4 == 0 && sizeof(DeviceStep) % 4 == 0,
              "copy_descriptor copies whole 32-bit words");

// Thread 0, after copy_descriptor and a barrier: the copy's step list points at the shared one.
__device__ __forceinline__ const CtaDescriptor* shared_descriptor(CtaShared& cs) {
  auto* copy = reinterpret_cast<CtaDescriptor*>(cs.descriptor_copy);
  if (copy->step_count <= kSharedSteps) {
    copy->steps = reinterpret_cast<const DeviceStep*>(cs.steps_copy);
  }
  return copy;
}

// ---- the kernel ---------------------------------------------------------------------------------

template <class Type, class Op, int kProtocol>
__global__ void __launch_bounds__(kMaxThreads, 1)
    interpreter_kernel(const __grid_constant__ LaunchArgs args) {
  WEFT_CTA_SHARED(CtaShared, cs);
  const CtaDescriptor* descriptor = args.ctas + blockIdx.x;
  copy_descriptor(cs, descriptor);
  __syncthreads();
  int stop = 0;
  if (threadIdx.x == 0) {
    const ThreadblockState start = *descriptor->state;
    const RankPointers& pointers = args.buffers[descriptor->local_index];
    cs.descriptor = shared_descriptor(cs);
    cs.input = pointers.input;
    cs.output = pointers.output;
    cs.scratch = pointers.scratch;
    cs.launch = start.launches + 1;
    cs.sent = start.sent;
    cs.received = start.received;
    cs.site.rank = descriptor->rank;
    cs.site.threadblock = descriptor->threadblock;
    cs.site.channel = descriptor->channel;
    cs.site.launch = cs.launch;
    cs.site.ir_step = cs.site.flat_step = cs.site.part = 0;
    cs.site.tile = 0;
    if (failed_before(args)) {
      // A graph replayed after a failure: leave at once, touching nothing, and say so.
      report_failure(args, cs.site, -1, WaitKind::Aborted, -1, -1, -1, 0, 0, 0);
      stop = 1;
    } else {
      announce_arrival(*descriptor, cs.launch);
    }
  }
  if (__syncthreads_or(stop)) return;

  const std::int32_t steps = descriptor->step_count;
  bool failed = false;
  for (std::uint64_t tile = 0; tile < args.tiles && !failed; ++tile) {
    const std::uint64_t tile_start = tile * args.tile_elements;
    const std::uint64_t len = args.chunk_elements - tile_start < args.tile_elements
                                  ? args.chunk_elements - tile_start
                                  : args.tile_elements;
    for (std::int32_t f = 0; f < steps && !failed; ++f) {
      // The step stays in shared memory (copy_descriptor): each phase loads the fields it needs,
      // so that no copy of it occupies registers across the whole step (nor does the list's
      // pointer across the loop: kept in a register, it made the LL min/max kernels spill).
      const DeviceStep* step = cs.descriptor->steps + f;
      const std::uint8_t type = step->type;
      const bool local = !step_receives(type) && !step_sends(type);
      const std::uint32_t count = static_cast<std::uint32_t>(step->count);
      // A step with more pieces than a slot holds sends them as several messages.
      const std::uint32_t per_message = local ? count : args.pieces_per_message;
      const std::uint32_t parts = (count + per_message - 1) / per_message;
      for (std::uint32_t part = 0; part < parts; ++part) {
        const std::uint32_t first = part * per_message;
        const std::uint32_t n = count - first < per_message ? count - first : per_message;
        int fail = 0;
        if (threadIdx.x == 0) {
          cs.site.ir_step = step->ir_step;
          cs.site.flat_step = f;
          cs.site.part = static_cast<std::int32_t>(part);
          cs.site.tile = tile;
          fail = wait_phase(args, cs, step, tile, kProtocol, part == 0) ? 0 : 1;
        }
        if (__syncthreads_or(fail)) {
          failed = true;
          break;
        }
        if (kProtocol == kSimple) {
          bulk_step<Type, Op>(args, cs, *step, tile, len, first, n);
        } else if (local) {
          local_step<Type, Op>(args, cs, step, tile, len, first, n);
        } else if (kProtocol == kLL) {
          fail = ll_step<Type, Op>(args, cs, *step, tile, len, first, n) ? 0 : 1;
        } else {
          fail = ll128_step<Type, Op>(args, cs, *step, tile, len, first, n) ? 0 : 1;
        }
        if (__syncthreads_or(fail)) {
          failed = true;
          break;
        }
        if (threadIdx.x == 0) {
          post_phase(args, cs, *step, tile, f, kProtocol, part + 1 == parts);
          if (step_receives(type)) ++cs.received;
          if (step_sends(type)) ++cs.sent;
        }
      }
    }
  }
  // After a failure the state stays behind: the host refuses further calls on this communicator.
  if (!failed && threadIdx.x == 0) {
    ThreadblockState end;
    end.launches = cs.launch;
    end.sent = cs.sent;
    end.received = cs.received;
    *descriptor->state = end;
  }
}

// Avg's premultiplication (NCCL's PreMulSum, as the CPU reference does it): every input element
// times 1/ngpus, rounded to the type, before the algorithm's sums.
template <class Type>
__global__ void scale_kernel(const ScaleArgs args) {
  using S = typename Type::Storage;
  using C = typename Type::Compute;
  const S* source = reinterpret_cast<const S*>(args.source);
  S* destination = reinterpret_cast<S*>(args.destination);
  const C factor = static_cast<C>(args.factor);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < args.elements; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    destination[i] = Type::encode(Type::decode(source[i]) * factor);
  }
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
