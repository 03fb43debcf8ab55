// ---- the overlap step (Simple): warp roles, the post off the data path -------------------------
//
// RuntimeOptions::step == Overlap, Simple only (LL and LL128 run the lean step). The CTA's last
// warp is the poster: it moves no data; every other warp is a worker. Per message:
//
//   thread 0 (a worker)  the message's wait phase (wait_post.cuh), then the ready barrier;
//   workers              ready barrier (sync) → data phase → done barrier (arrive only: no worker
//                        waits for another here) → the next message's ready barrier;
//   poster warp          done barrier (sync) → ready barrier of the next message (arrive) → its
//                        lane 0 posts: acknowledgement, message, completion (post_phase).
//
// So the post's release fence and stores run while the workers already move the next message,
// and thread 0 begins the next wait as soon as its own data is moved, while the post is in
// flight. Nothing waits for the post: the next wait cannot depend on it being seen (the FIFO
// holds two messages a step, and a peer's next message never needs this one's acknowledgement),
// and the poster issues it whatever thread 0 waits for.
//
// Orders (the lean step's, with named barriers in place of __syncthreads):
//  - a wait's acquire (thread 0) → ready barrier → the workers' reads of the slot and sources;
//  - the workers' writes and slot reads → done barrier → the poster's release fence → its
//    relaxed stores (NCCL's postPeer);
//  - two data phases always have the ready barrier of every worker between them;
//  - named barriers are not reused before their round ended: a worker's next arrival at done
//    comes after the next ready, which needs the poster's arrival, which it makes only after
//    done's round; the poster arrives at ready once per round, after the done of the message
//    before it.
// A failed wait (thread 0) sets cs.stop to its message's number + 1 before the ready barrier; the
// workers then arrive at done once more and leave, and the poster, which waits there, reads it
// and leaves too. Each reads it for its own message only (stopped()): thread 0 may already be
// failing the next message's wait while a slow worker or the poster still reads for this one.
#pragma once

#include <cstdint>

#include "cta_shared.cuh"
#include "portability.h"
#include "primitives.cuh"
#include "protocol_simple.cuh"
#include "wait_post.cuh"
#include "weft/program/device_abi.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

__device__ __forceinline__ bool stopped(const CtaShared& cs, std::uint64_t message) {
  const std::uint64_t stop = load_cta_word(&cs.stop);
  return stop != 0 && stop <= message + 1;
}

// Runs every message of the launch; false when the CTA stopped on a failure (reported). `c`: the
// counters, advanced as the lean step advances them. Out of line, called once a launch: inline
// beside the lean loop, the two loops' registers together made the 32-bit integer Simple
// kernels spill (scripts/kernel-report.sh).
template <class Type, class Op>
__device__ WEFT_NOINLINE bool overlap_steps(const LaunchArgs& args, CtaShared& cs, Counters& c) {
  const std::uint32_t threads = blockDim.x;
  const std::uint32_t worker_threads = threads - 32;
  const bool poster = threadIdx.x >= worker_threads;
  const Workers workers{threadIdx.x, worker_threads, true};
  const std::uint32_t slices = args.slices;
  const std::uint64_t groups = (args.tiles + slices - 1) / slices;
  const std::int32_t steps = cs.descriptor->step_count;
  std::uint64_t message = 0;
  bool failed = false;
  if (poster) named_barrier_arrive(kReadyBarrier, threads);  // the first message may begin
  for (std::uint64_t group = 0; group < groups && !failed; ++group) {
    for (std::int32_t f = 0; f < steps && !failed; ++f) {
      const DeviceStep* step = cs.descriptor->steps + f;
      const std::uint8_t type = step->type;
      const bool local = !step_receives(type) && !step_sends(type);
      const auto count = static_cast<std::uint32_t>(step->count);
      const std::uint32_t per_message = local ? count : args.pieces_per_message;
      const std::uint32_t parts = (count + per_message - 1) / per_message;
      for (std::uint32_t part = 0; part < parts && !failed; ++part) {
        const std::uint32_t first = part * per_message;
        const std::uint32_t n = count - first < per_message ? count - first : per_message;
        for (std::uint32_t slice = 0; slice < slices; ++slice, ++message) {
          const std::uint64_t tile = group * slices + slice;
          if (tile >= args.tiles) break;
          const bool first_message = part == 0 && slice == 0;
          const bool last_message =
              part + 1 == parts && (slice + 1 == slices || tile + 1 == args.tiles);
          const auto set = static_cast<std::uint32_t>(message & 1u);
          if (!poster) {
            if (threadIdx.x == 0 && step_waits(*step, kSimple, first_message, c, args.fifo_depth)) {
              cs.site.ir_step = step->ir_step;
              cs.site.flat_step = f;
              cs.site.part = static_cast<std::int32_t>(part);
              cs.site.tile = tile;
              if (!wait_phase(args, cs, c, step, tile, group, kSimple, first_message, set)) {
                store_cta_word(&cs.stop, message + 1);
              }
            }
            named_barrier_sync(kReadyBarrier, threads);
            if (stopped(cs, message)) {
              named_barrier_arrive(kDoneBarrier, threads);  // the poster waits there
              failed = true;
              break;
            }
            const std::uint64_t tile_start = tile * args.tile_elements;
            const std::uint64_t len = args.chunk_elements - tile_start < args.tile_elements
                                          ? args.chunk_elements - tile_start
                                          : args.tile_elements;
            bulk_step<Type, Op>(args, cs, c, *step, tile, len, first, n, cs.extra[set], workers);
            named_barrier_arrive(kDoneBarrier, threads);
          } else {
            named_barrier_sync(kDoneBarrier, threads);
            if (stopped(cs, message)) {
              failed = true;
              break;
            }
            named_barrier_arrive(kReadyBarrier, threads);  // the next message may begin
            if (threadIdx.x == worker_threads) {
              post_phase(args, cs, c, *step, tile, group, f, kSimple, last_message, part);
            }
          }
          if (step_receives(type)) ++c.received;
          if (step_sends(type)) ++c.sent;
        }
      }
    }
  }
  // The poster's last arrival at ready (after the last message) ends its round here, so that no
  // barrier is left half-arrived when the CTA leaves.
  if (!failed && !poster) named_barrier_sync(kReadyBarrier, threads);
  return !failed;
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
