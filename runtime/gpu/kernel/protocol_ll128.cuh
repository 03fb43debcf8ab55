// LL128 (NCCL's prims_ll128.h): 128-byte lines of 15 payload words and a 64-bit flag (the
// message number + 1), moved by whole warps (message_layout.h: where words sit).
#pragma once

#include <cstdint>

#include "cta_shared.cuh"
#include "element_types.cuh"
#include "portability.h"
#include "primitives.cuh"
#include "protocol_words.cuh"
#include "weft/program/device_abi.h"
#include "weft/program/message_layout.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

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
__device__ bool ll128_step(const LaunchArgs& args, const CtaShared& cs, Counters c, StepPlace place,
                           const DeviceStep& step, std::uint64_t tile, std::uint64_t len,
                           std::uint32_t first, std::uint32_t n) {
  using S = typename Type::Storage;
  constexpr std::uint64_t kPerWord = 8 / sizeof(S);
  constexpr int kU = kLL128LinesPerLane;
  const std::uint8_t type = step.type;
  const bool receiving = step_receives(type);
  const bool sending = step_sends(type);
  const CtaDescriptor& d = *cs.descriptor;
  const std::uint64_t* in =
      receiving ? reinterpret_cast<const std::uint64_t*>(
                      d.recv_fifo + (c.received % args.fifo_depth) * args.slot_bytes)
                : nullptr;
  std::uint64_t* out = sending ? reinterpret_cast<std::uint64_t*>(
                                     d.send_fifo + (c.sent % args.fifo_depth) * args.slot_bytes)
                               : nullptr;
  const std::uint64_t flag_in = c.received + 1;
  const std::uint64_t flag_out = c.sent + 1;
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
              report_wait(args, deadline, site_of(cs, step, place, tile), d.recv_peer,
                          WaitKind::LineFlag, -1, -1, -1, flag_in, v1[0]);
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

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
