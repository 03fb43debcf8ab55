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
// Counters are monotone across launches (see ThreadblockState), so consecutive launches and CUDA
// graph replays need no reset: message k of a connection uses slot k mod depth, LL flag k + 1,
// and a dependency waits for dependency_flag(launch, tile, steps, step).
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

enum : int { kSimple = 0, kLL = 1, kLL128 = 2 };

// ir::StepType values, as the flat program stores them.
enum : std::uint8_t {
  kSend = 0,
  kRecv = 1,
  kRecvCopySend = 2,
  kRecvReduceSend = 3,
  kRecvReduceCopy = 4,
  kRecvReduceCopySend = 5,
  kCopy = 6,
  kReduce = 7,
};

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

// What a CTA keeps in registers.
struct Cta {
  const CtaDescriptor* descriptor;
  char* buffers[3];  // input, output, scratch of its rank
  std::uint64_t chunk_elements;
  std::uint64_t tile_elements;
  std::uint64_t piece_stride;
  std::uint64_t slot_bytes;
  std::uint32_t depth;
  std::uint64_t launch;
  std::uint64_t sent;
  std::uint64_t received;
};

// The bytes of piece j of a step's chunk range, in tile `tile`.
template <class S>
__device__ __forceinline__ char* piece_pointer(const Cta& c, DeviceBuffer buffer,
                                               std::int32_t offset, std::uint32_t j,
                                               std::uint64_t tile) {
  const std::uint64_t element =
      (static_cast<std::uint64_t>(offset) + j) * c.chunk_elements + tile * c.tile_elements;
  return c.buffers[static_cast<int>(buffer)] + element * sizeof(S);
}

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

// ---- Simple and local steps: bulk element-wise work on one piece -------------------------------

// out1[i] = out2[i] = a[i] ⊕ b[i] ⊕ extra[0][i] ⊕ ... for i < n (b, extras, out2 optional).
// Every operand is read before the element's results are written, by the same thread, so
// out1 == a (re's destination) is safe.
template <class Type, class Op>
__device__ __forceinline__ void process_span(std::uint64_t n, const char* a, const char* b,
                                             const char* const* extra, int extras, char* out1,
                                             char* out2) {
  using S = typename Type::Storage;
  constexpr int kPerPack = Pack<Type>::kElements;
  constexpr int kUnroll = 4;
  const std::uint32_t tid = threadIdx.x;
  const std::uint32_t nthreads = blockDim.x;

  bool vector = aligned16(a) && (b == nullptr || aligned16(b)) && aligned16(out1) &&
                (out2 == nullptr || aligned16(out2));
  for (int k = 0; k < extras; ++k) vector = vector && aligned16(extra[k]);

  std::uint64_t done = 0;
  if (vector) {
    const std::uint64_t packs = n / kPerPack;
    const uint4* va = reinterpret_cast<const uint4*>(a);
    const uint4* vb = reinterpret_cast<const uint4*>(b);
    uint4* vo1 = reinterpret_cast<uint4*>(out1);
    uint4* vo2 = reinterpret_cast<uint4*>(out2);
    std::uint64_t p = tid;
    // Several independent 16-byte loads in flight per thread before the first store.
    for (; p + (kUnroll - 1) * nthreads < packs; p += kUnroll * nthreads) {
      uint4 v[kUnroll];
WEFT_UNROLL
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(va + p + u * nthreads);
      if (b != nullptr) {
        uint4 w[kUnroll];
WEFT_UNROLL
        for (int u = 0; u < kUnroll; ++u) w[u] = __ldcg(vb + p + u * nthreads);
WEFT_UNROLL
        for (int u = 0; u < kUnroll; ++u) v[u] = reduce_pack<Type, Op>(v[u], w[u]);
      }
      for (int k = 0; k < extras; ++k) {
        const uint4* ve = reinterpret_cast<const uint4*>(extra[k]);
WEFT_UNROLL
        for (int u = 0; u < kUnroll; ++u)
          v[u] = reduce_pack<Type, Op>(v[u], __ldcg(ve + p + u * nthreads));
      }
WEFT_UNROLL
      for (int u = 0; u < kUnroll; ++u) {
        vo1[p + u * nthreads] = v[u];
        if (vo2 != nullptr) vo2[p + u * nthreads] = v[u];
      }
    }
    for (; p < packs; p += nthreads) {
      uint4 v = __ldcg(va + p);
      if (b != nullptr) v = reduce_pack<Type, Op>(v, __ldcg(vb + p));
      for (int k = 0; k < extras; ++k) {
        v = reduce_pack<Type, Op>(v, __ldcg(reinterpret_cast<const uint4*>(extra[k]) + p));
      }
      vo1[p] = v;
      if (vo2 != nullptr) vo2[p] = v;
    }
    done = packs * kPerPack;
  }
  const S* sa = reinterpret_cast<const S*>(a);
  const S* sb = reinterpret_cast<const S*>(b);
  S* so1 = reinterpret_cast<S*>(out1);
  S* so2 = reinterpret_cast<S*>(out2);
  for (std::uint64_t i = done + tid; i < n; i += nthreads) {
    S v = load_cg(sa + i);
    if (sb != nullptr) v = reduce<Type, Op>(v, load_cg(sb + i));
    for (int k = 0; k < extras; ++k) {
      v = reduce<Type, Op>(v, load_cg(reinterpret_cast<const S*>(extra[k]) + i));
    }
    so1[i] = v;
    if (so2 != nullptr) so2[i] = v;
  }
}

// Pieces [first, first + n) of a Simple, cpy or re step in one tile (one message's worth when
// the step sends or receives): each piece through process_span.
template <class Type, class Op>
__device__ void bulk_step(const Cta& c, const DeviceStep& step, std::uint64_t tile,
                          std::uint64_t len, std::uint32_t first, std::uint32_t n) {
  using S = typename Type::Storage;
  const std::uint8_t type = step.type;
  const char* in = step_receives(type)
                       ? c.descriptor->recv_fifo + (c.received % c.depth) * c.slot_bytes
                       : nullptr;
  char* out =
      step_sends(type) ? c.descriptor->send_fifo + (c.sent % c.depth) * c.slot_bytes : nullptr;
  const char* extra[kMaxReduceSources - 1];
  const int extras = type == kReduce ? step.source_count : 0;
  // The loader picks the order that reads every shared piece before overwriting it (only local
  // steps are ever reversed, so the slot layout of a message is untouched).
  const bool reverse = (step.flags & kStepReversePieces) != 0;
  for (std::uint32_t q = 0; q < n; ++q) {
    const std::uint32_t j = reverse ? first + n - 1 - q : first + q;
    const char* src = step.srcbuf != DeviceBuffer::None
                          ? piece_pointer<S>(c, step.srcbuf, step.srcoff, j, tile)
                          : nullptr;
    char* dst = step.dstbuf != DeviceBuffer::None
                    ? piece_pointer<S>(c, step.dstbuf, step.dstoff, j, tile)
                    : nullptr;
    const char* slot_in = in != nullptr ? in + (j - first) * c.piece_stride : nullptr;
    char* slot_out = out != nullptr ? out + (j - first) * c.piece_stride : nullptr;
    for (int k = 0; k < extras; ++k) {
      const DeviceSource source = c.descriptor->sources[step.first_source + k];
      extra[k] = piece_pointer<S>(c, source.buffer, source.offset, j, tile);
    }
    switch (type) {
      case kSend:
        process_span<Type, Op>(len, src, nullptr, extra, 0, slot_out, nullptr);
        break;
      case kRecv:
        process_span<Type, Op>(len, slot_in, nullptr, extra, 0, dst, nullptr);
        break;
      case kRecvCopySend:
        process_span<Type, Op>(len, slot_in, nullptr, extra, 0, dst, slot_out);
        break;
      case kRecvReduceSend:
        process_span<Type, Op>(len, slot_in, src, extra, 0, slot_out, nullptr);
        break;
      case kRecvReduceCopy:
        process_span<Type, Op>(len, slot_in, src, extra, 0, dst, nullptr);
        break;
      case kRecvReduceCopySend:
        process_span<Type, Op>(len, slot_in, src, extra, 0, dst, slot_out);
        break;
      case kCopy:
        process_span<Type, Op>(len, src, nullptr, extra, 0, dst, nullptr);
        break;
      case kReduce:
        process_span<Type, Op>(len, dst, src, extra, extras, dst, nullptr);
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

// Word `word` of a message carrying pieces [first, first + n) (payload bytes [8·word, 8·word + 8)):
// the step's work on the elements it holds. `in` is the received word (when the step receives);
// returns the word to send.
template <class Type, class Op>
__device__ __forceinline__ std::uint64_t word_step(const Cta& c, const DeviceStep& step,
                                                   std::uint64_t tile, std::uint64_t len,
                                                   std::uint32_t first, std::uint32_t n_pieces,
                                                   std::uint64_t word, std::uint64_t in) {
  using S = typename Type::Storage;
  const WordContents w = word_contents(word, n_pieces, c.piece_stride, len, sizeof(S));
  if (w.count == 0) return 0;  // padding
  const std::uint32_t j = first + w.piece;
  const std::uint64_t i = w.element;
  const std::uint32_t n = w.count;
  const std::uint8_t type = step.type;
  std::uint64_t v = in;
  if (!step_receives(type) || step_reduces_message(type)) {
    const S* src =
        reinterpret_cast<const S*>(piece_pointer<S>(c, step.srcbuf, step.srcoff, j, tile)) + i;
    const std::uint64_t local = load_word(src, n);
    v = step_receives(type) ? reduce_word<Type, Op>(in, local) : local;
  }
  if (step_writes_destination(type)) {
    S* dst = reinterpret_cast<S*>(piece_pointer<S>(c, step.dstbuf, step.dstoff, j, tile)) + i;
    store_word(dst, v, n);
  }
  return v;
}

template <class Type, class Op>
__device__ bool ll_step(const LaunchArgs& args, const Cta& c, const DeviceStep& step,
                        std::uint64_t tile, std::uint64_t len, std::uint32_t first, std::uint32_t n,
                        const WaitSite& site) {
  using S = typename Type::Storage;
  const std::uint8_t type = step.type;
  const bool receiving = step_receives(type);
  const bool sending = step_sends(type);
  const std::uint64_t words = message_words(n, c.piece_stride, len, sizeof(S));
  const LLLine* in = receiving
                         ? reinterpret_cast<const LLLine*>(c.descriptor->recv_fifo +
                                                           (c.received % c.depth) * c.slot_bytes)
                         : nullptr;
  LLLine* out =
      sending
          ? reinterpret_cast<LLLine*>(c.descriptor->send_fifo + (c.sent % c.depth) * c.slot_bytes)
          : nullptr;
  const std::uint32_t flag_in = static_cast<std::uint32_t>(c.received + 1);
  const std::uint32_t flag_out = static_cast<std::uint32_t>(c.sent + 1);
  for (std::uint64_t w = threadIdx.x; w < words; w += blockDim.x) {
    std::uint64_t data = 0;
    if (receiving) {
      Deadline deadline(args.timeout_ns);
      LLLine line = load_ll_line(in + w);
      while (line.flag0 != flag_in || line.flag1 != flag_in) {
        if (!deadline.keep_waiting(args)) {
          if (deadline.expired()) {
            report_failure(args, site, WaitKind::LineFlag, -1, -1, -1, flag_in,
                           line.flag0 != flag_in ? line.flag0 : line.flag1, deadline.waited_ns());
          }
          return false;
        }
        line = load_ll_line(in + w);
      }
      data =
          static_cast<std::uint64_t>(line.data0) | (static_cast<std::uint64_t>(line.data1) << 32);
    }
    const std::uint64_t result = word_step<Type, Op>(c, step, tile, len, first, n, w, data);
    if (sending) store_ll_line(out + w, result, flag_out);
  }
  return true;
}

// LL128: 8 lanes move a 128-byte line, lane 7 carrying the flag in its second word, so one
// warp-wide 16-byte access covers 4 whole lines (NVLink and local memory keep a 128-byte line's
// store together).
template <class Type, class Op>
__device__ bool ll128_step(const LaunchArgs& args, const Cta& c, const DeviceStep& step,
                           std::uint64_t tile, std::uint64_t len, std::uint32_t first,
                           std::uint32_t n, const WaitSite& site) {
  using S = typename Type::Storage;
  const std::uint8_t type = step.type;
  const bool receiving = step_receives(type);
  const bool sending = step_sends(type);
  const std::uint64_t lines = ll128_lines(n, c.piece_stride, len, sizeof(S));
  const std::uint64_t* in =
      receiving ? reinterpret_cast<const std::uint64_t*>(c.descriptor->recv_fifo +
                                                         (c.received % c.depth) * c.slot_bytes)
                : nullptr;
  std::uint64_t* out = sending ? reinterpret_cast<std::uint64_t*>(c.descriptor->send_fifo +
                                                                  (c.sent % c.depth) * c.slot_bytes)
                               : nullptr;
  const std::uint64_t flag_in = c.received + 1;
  const std::uint64_t flag_out = c.sent + 1;
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t warp = threadIdx.x / 32;
  const std::uint32_t warps = blockDim.x / 32;
  const std::uint32_t group = lane / 8;  // which of the warp's 4 lines
  const std::uint32_t part = lane % 8;   // which 16 bytes of it
  const bool flag_lane = part == 7;
  // Whole warps iterate together (the loop bound is uniform within a warp) so that the
  // warp-wide votes and line accesses below see every lane.
  for (std::uint64_t base = static_cast<std::uint64_t>(warp) * 4; base < lines;
       base += static_cast<std::uint64_t>(warps) * 4) {
    const std::uint64_t line = base + group;
    const bool active = line < lines;
    std::uint64_t v0 = 0, v1 = 0;
    if (receiving) {
      Deadline deadline(args.timeout_ns);
      for (;;) {
        load_ll128_part(in + line * kLL128LineWords + part * 2, v0, v1, active, flag_lane);
        const bool stale = active && flag_lane && v1 != flag_in;
        if (!__any_sync(0xffffffffu, stale)) break;
        const bool stop = !deadline.keep_waiting(args);
        if (__any_sync(0xffffffffu, stop)) {
          // The whole warp leaves; if a deadline expired, exactly one lane reports, preferably
          // one whose line is still stale.
          const unsigned expired = __ballot_sync(0xffffffffu, deadline.expired());
          const unsigned stale_lanes = __ballot_sync(0xffffffffu, stale);
          if (expired != 0u) {
            const int reporter = __ffs(stale_lanes != 0u ? stale_lanes : expired) - 1;
            if (static_cast<int>(lane) == reporter) {
              report_failure(args, site, WaitKind::LineFlag, -1, -1, -1, flag_in, v1,
                             deadline.waited_ns());
            }
          }
          return false;
        }
      }
    }
    // Word indices of this lane's two words in the message payload.
    const std::uint64_t first_word = ll128_payload_word(line, part, 0);
    std::uint64_t o0 = 0, o1 = 0;
    if (active) {
      o0 = word_step<Type, Op>(c, step, tile, len, first, n, first_word, v0);
      if (!flag_lane) o1 = word_step<Type, Op>(c, step, tile, len, first, n, first_word + 1, v1);
    }
    if (sending) {
      if (flag_lane) o1 = flag_out;
      store_ll128_part(out + line * kLL128LineWords + part * 2, o0, o1, active, flag_lane);
    }
  }
  return true;
}

// ---- the wait and post phases (thread 0) -------------------------------------------------------

// Dependencies are waited for before the first message of a step only.
inline __device__ WEFT_NOINLINE bool wait_phase(const LaunchArgs& args, const Cta& c,
                                               const DeviceStep& step, std::uint64_t tile,
                                               const WaitSite& site, int protocol,
                                               bool first_part) {
  const CtaDescriptor& d = *c.descriptor;
  for (std::int32_t k = 0; first_part && k < step.dependency_count; ++k) {
    const DeviceDependency dep = d.dependencies[step.first_dependency + k];
    const std::uint64_t* flag =
        d.flags + static_cast<std::uint64_t>(dep.threadblock) * kFlagStrideWords;
    const std::uint64_t target =
        dependency_flag(c.launch, tile, static_cast<std::uint64_t>(dep.steps),
                        static_cast<std::uint64_t>(dep.step));
    Deadline deadline(args.timeout_ns);
    std::uint64_t seen;
    while (!flag_reached(seen = load_acquire_gpu(flag), target)) {
      if (!deadline.keep_waiting(args)) {
        if (deadline.expired()) {
          report_failure(args, site, WaitKind::Dependency, dep.threadblock, dep.step, dep.ir_step,
                         target, seen, deadline.waited_ns());
        }
        return false;
      }
    }
  }
  if (step_sends(step.type) && c.sent + 1 > c.depth) {
    const std::uint64_t target = c.sent + 1 - c.depth;  // messages the receiver must have consumed
    Deadline deadline(args.timeout_ns);
    std::uint64_t seen;
    while ((seen = load_acquire_sys(d.send_head)) < target) {
      if (!deadline.keep_waiting(args)) {
        if (deadline.expired()) {
          WaitSite at = site;
          at.peer = d.send_peer;
          report_failure(args, at, WaitKind::Space, -1, -1, -1, target, seen, deadline.waited_ns());
        }
        return false;
      }
    }
  }
  if (protocol == kSimple && step_receives(step.type)) {
    const std::uint64_t target = c.received + 1;
    Deadline deadline(args.timeout_ns);
    std::uint64_t seen;
    while ((seen = load_acquire_sys(d.recv_tail)) < target) {
      if (!deadline.keep_waiting(args)) {
        if (deadline.expired()) {
          WaitSite at = site;
          at.peer = d.recv_peer;
          report_failure(args, at, WaitKind::Message, -1, -1, -1, target, seen,
                         deadline.waited_ns());
        }
        return false;
      }
    }
  }
  return true;
}

// Completion is published after the last message of a step only.
__device__ __forceinline__ void post_phase(const Cta& c, const DeviceStep& step, std::uint64_t tile,
                                           std::int32_t flat_step, int protocol, bool last_part) {
  const CtaDescriptor& d = *c.descriptor;
  // Every thread's reads of the slot are done (the barrier before this): hand it back.
  if (step_receives(step.type)) store_release_sys(d.recv_head, c.received + 1);
  if (protocol == kSimple && step_sends(step.type)) {
    // Every thread's payload stores precede this store in causality order (the barrier before
    // it), and a release at system scope is cumulative: the receiver, even on another GPU, sees
    // the payload once its acquire sees the tail.
    store_release_sys(d.send_tail, c.sent + 1);
  }
  if (last_part && (step.flags & kStepPublishes) != 0) {
    // The same argument at GPU scope: the rank's threadblocks all run on this device.
    store_release_gpu(d.flags + static_cast<std::uint64_t>(d.threadblock) * kFlagStrideWords,
                      dependency_flag(c.launch, tile, static_cast<std::uint64_t>(d.step_count),
                                      static_cast<std::uint64_t>(flat_step)));
  }
}

// ---- the kernel ---------------------------------------------------------------------------------

template <class Type, class Op, int kProtocol>
__global__ void __launch_bounds__(kMaxThreads, 2)
    interpreter_kernel(const __grid_constant__ LaunchArgs args) {
  WEFT_CTA_SHARED(ThreadblockState, start);
  const CtaDescriptor* descriptor = args.ctas + blockIdx.x;
  if (threadIdx.x == 0) start = *descriptor->state;
  __syncthreads();

  Cta c;
  c.descriptor = descriptor;
  const RankPointers& pointers = args.buffers[descriptor->local_index];
  c.buffers[0] = pointers.input;
  c.buffers[1] = pointers.output;
  c.buffers[2] = pointers.scratch;
  c.chunk_elements = args.chunk_elements;
  c.tile_elements = args.tile_elements;
  c.piece_stride = args.piece_stride_bytes;
  c.slot_bytes = args.slot_bytes;
  c.depth = args.fifo_depth;
  c.launch = start.launches + 1;
  c.sent = start.sent;
  c.received = start.received;

  WaitSite site;
  site.rank = descriptor->rank;
  site.threadblock = descriptor->threadblock;
  site.channel = descriptor->channel;
  site.peer = -1;
  site.part = 0;
  site.launch = c.launch;

  const std::int32_t steps = descriptor->step_count;
  bool failed = false;
  for (std::uint64_t tile = 0; tile < args.tiles && !failed; ++tile) {
    const std::uint64_t tile_start = tile * args.tile_elements;
    const std::uint64_t len = args.chunk_elements - tile_start < args.tile_elements
                                  ? args.chunk_elements - tile_start
                                  : args.tile_elements;
    site.tile = tile;
    for (std::int32_t f = 0; f < steps && !failed; ++f) {
      const DeviceStep step = descriptor->steps[f];
      site.ir_step = step.ir_step;
      site.flat_step = f;
      site.peer = step_receives(step.type) ? descriptor->recv_peer : descriptor->send_peer;
      const bool local = !step_receives(step.type) && !step_sends(step.type);
      const std::uint32_t count = static_cast<std::uint32_t>(step.count);
      // A step with more pieces than a slot holds sends them as several messages.
      const std::uint32_t per_message = local ? count : args.pieces_per_message;
      const std::uint32_t parts = (count + per_message - 1) / per_message;
      for (std::uint32_t part = 0; part < parts; ++part) {
        const std::uint32_t first = part * per_message;
        const std::uint32_t n = count - first < per_message ? count - first : per_message;
        site.part = static_cast<std::int32_t>(part);
        int fail = 0;
        if (threadIdx.x == 0) {
          fail = wait_phase(args, c, step, tile, site, kProtocol, part == 0) ? 0 : 1;
        }
        if (__syncthreads_or(fail)) {
          failed = true;
          break;
        }
        if (kProtocol == kSimple || local) {
          bulk_step<Type, Op>(c, step, tile, len, first, n);
        } else if (kProtocol == kLL) {
          fail = ll_step<Type, Op>(args, c, step, tile, len, first, n, site) ? 0 : 1;
        } else {
          fail = ll128_step<Type, Op>(args, c, step, tile, len, first, n, site) ? 0 : 1;
        }
        if (__syncthreads_or(fail)) {
          failed = true;
          break;
        }
        if (threadIdx.x == 0) post_phase(c, step, tile, f, kProtocol, part + 1 == parts);
        if (step_receives(step.type)) ++c.received;
        if (step_sends(step.type)) ++c.sent;
      }
    }
  }
  // After a failure the state stays behind: the host refuses further calls on this communicator.
  if (!failed && threadIdx.x == 0) {
    ThreadblockState end;
    end.launches = c.launch;
    end.sent = c.sent;
    end.received = c.received;
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
