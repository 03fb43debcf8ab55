// The interpreter kernel (docs/architecture.md §5): one CTA per threadblock of every local rank,
// each replaying its flat step list once per tile (§2.3). Per step:
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
//
// The parts, one file each (as NCCL splits its primitives): cta_shared.cuh (step kinds, the CTA's
// shared state, piece addresses), protocol_simple.cuh (Simple and local steps),
// protocol_words.cuh (what LL and LL128 share), protocol_ll.cuh, protocol_ll128.cuh,
// wait_post.cuh (the wait and post phases), overlap_step.cuh (the overlap step's warp roles),
// scaling.cuh (avg's premultiplication); this file starts the CTA and runs the full and lean
// steps' loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cta_shared.cuh"
#include "overlap_step.cuh"
#include "portability.h"
#include "primitives.cuh"
#include "protocol_ll.cuh"
#include "protocol_ll128.cuh"
#include "protocol_simple.cuh"
#include "wait_post.cuh"
#include "weft/program/device_abi.h"
#include "weft/program/options.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

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

// The full and lean steps (and LL and LL128 under the overlap step): every thread moves data;
// thread 0 waits and posts between CTA barriers. False when the CTA stopped on a failure
// (reported). Simple's slices are the overlap step's (overlap_step.cuh): here a message is a
// tile's, as the kernel was measured.
//
// Lean steps (RuntimeOptions::step) leave out the barrier after a wait phase that waits for
// nothing and the one before a post phase that posts nothing. Every thread decides alike (from
// the step, the protocol and its counters), and never leaves out both around one data phase
// boundary: two consecutive data phases always have a barrier between them, so that a step
// reads what the step before it wrote, whichever threads wrote it. Neither left-out barrier can
// carry a failure: a phase with nothing to wait for cannot time out, and only a receiving LL or
// LL128 step's data phase can, which always posts (its acknowledgement).
template <class Type, class Op, int kProtocol>
__device__ __forceinline__ bool lean_steps(const LaunchArgs& args, CtaShared& cs, Counters& c) {
  const bool lean = args.lean_steps != 0;
  bool barrier_since_data = true;  // the start's barrier
  const std::int32_t steps = cs.descriptor->step_count;
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
        const bool waits = !lean || step_waits(*step, kProtocol, part == 0, c, args.fifo_depth);
        int fail = 0;
        if (threadIdx.x == 0 && waits) {
          // Only the wait phase reports from cs.site (data phases build theirs: site_of).
          cs.site.ir_step = step->ir_step;
          cs.site.flat_step = f;
          cs.site.part = static_cast<std::int32_t>(part);
          cs.site.tile = tile;
          fail = wait_phase(args, cs, c, step, tile, tile, kProtocol, part == 0, 0) ? 0 : 1;
        }
        if (waits || !barrier_since_data) {
          if (__syncthreads_or(fail)) {
            failed = true;
            break;
          }
        }
        if (kProtocol == kSimple) {
          bulk_step<Type, Op>(args, cs, c, *step, tile, len, first, n, cs.extra[0], whole_cta());
        } else if (local) {
          local_step<Type, Op>(args, cs, step, tile, len, first, n);
        } else if (kProtocol == kLL) {
          fail = ll_step<Type, Op>(args, cs, c, StepPlace{f, part}, *step, tile, len, first, n) ? 0
                                                                                                : 1;
        } else {
          fail = ll128_step<Type, Op>(args, cs, c, StepPlace{f, part}, *step, tile, len, first, n)
                     ? 0
                     : 1;
        }
        // A merged reduce's sources (cs.extra) are rewritten by the next reduce's wait phase.
        barrier_since_data = !lean ||
                             step_posts(*step, kProtocol, part + 1 == parts,
                                        cs.descriptor->send_descriptors != nullptr) ||
                             type == kReduce;
        if (barrier_since_data) {
          if (__syncthreads_or(fail)) {
            failed = true;
            break;
          }
        }
        if (threadIdx.x == 0) {
          post_phase(args, cs, c, *step, tile, tile, f, kProtocol, part + 1 == parts, part);
        }
        if (step_receives(type)) ++c.received;
        if (step_sends(type)) ++c.sent;
      }
    }
  }
  return !failed;
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
    cs.start.sent = start.sent;
    cs.start.received = start.received;
    cs.head_seen = 0;
    cs.tail_seen = 0;
    cs.stop = 0;
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

  Counters c = cs.start;
  bool failed = false;
  if constexpr (kProtocol == kSimple) {
    // The overlap step's poster is a warp of its own: a one-warp CTA runs the lean step.
    failed = args.overlap_steps != 0 && blockDim.x >= 64
                 ? !overlap_steps<Type, Op>(args, cs, c)
                 : !lean_steps<Type, Op, kProtocol>(args, cs, c);
  } else {
    failed = !lean_steps<Type, Op, kProtocol>(args, cs, c);
  }
  // After a failure the state stays behind: the host refuses further calls on this communicator.
  if (!failed && threadIdx.x == 0) {
    ThreadblockState end;
    end.launches = cs.launch;
    end.sent = c.sent;
    end.received = c.received;
    *descriptor->state = end;
  }
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
