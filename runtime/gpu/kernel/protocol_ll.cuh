// LL (NCCL's prims_ll.h): each 8-byte payload word travels in a 16-byte line with the message's
// 32-bit flag twice (ll_flag, device_abi.h), data and flags in one store, so the receiver polls
// the lines themselves and no counter announces a message (message_layout.h: where words sit).
#pragma once

#include <cstdint>

#include "cta_shared.cuh"
#include "portability.h"
#include "primitives.cuh"
#include "protocol_words.cuh"
#include "weft/program/device_abi.h"
#include "weft/program/message_layout.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// The slow path of an LL receive: polls `p` until both flags are `flag` and returns that line, or
// until the wait ends (reported) and returns the last line seen, whose flags are then not both
// `flag`. Out of line, and given nothing by reference, so that the fast path keeps its line in
// registers (a line passed by reference would live in local memory, a store on every receive).
inline __device__ WEFT_NOINLINE LLLine wait_ll_line(const LaunchArgs& args, const CtaShared& cs,
                                                    const LLLine* p, std::uint32_t flag,
                                                    const DeviceStep* step, StepPlace place,
                                                    std::uint64_t tile) {
  const CtaDescriptor& d = *cs.descriptor;
  Deadline deadline;
  LLLine line{};
  do {
    if (!deadline.keep_waiting(args, d, cs.launch)) {
      report_wait(args, deadline, site_of(cs, *step, place, tile), d.recv_peer, WaitKind::LineFlag,
                  -1, -1, -1, flag, line.flag0 != flag ? line.flag0 : line.flag1);
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
__device__ bool ll_step(const LaunchArgs& args, const CtaShared& cs, Counters c, StepPlace place,
                        const DeviceStep& step, std::uint64_t tile, std::uint64_t len,
                        std::uint32_t first, std::uint32_t n) {
  using S = typename Type::Storage;
  constexpr std::uint64_t kPerWord = 8 / sizeof(S);
  const std::uint8_t type = step.type;
  const bool receiving = step_receives(type);
  const bool sending = step_sends(type);
  const CtaDescriptor& d = *cs.descriptor;
  const LLLine* in = receiving ? reinterpret_cast<const LLLine*>(
                                     d.recv_fifo + (c.received % args.fifo_depth) * args.slot_bytes)
                               : nullptr;
  LLLine* out =
      sending
          ? reinterpret_cast<LLLine*>(d.send_fifo + (c.sent % args.fifo_depth) * args.slot_bytes)
          : nullptr;
  const std::uint32_t flag_in = ll_flag(c.received);
  const std::uint32_t flag_out = ll_flag(c.sent);
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
          line = wait_ll_line(args, cs, in + first_line + w, flag_in, &step, place, tile);
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
  if (sending && c.sent % kLLCleanPeriod < args.fifo_depth) {
    rewrite_ll_padding(args, out, n, words, stride_lines, flag_out);
  }
  return true;
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
