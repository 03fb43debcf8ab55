// ---- the wait and post phases (thread 0) -------------------------------------------------------
//
// Around each step's data phase (interpreter.cuh): the waits for the dependencies (progress
// flags of the rank's other threadblocks), a free slot (the send connection's head) and a Simple
// message (the receive connection's tail); then the posts that acknowledge the received message,
// publish a Simple message and publish the step's completion. Every ordering is primitives.cuh's.
#pragma once

#include <cstdint>

#include "cta_shared.cuh"
#include "portability.h"
#include "primitives.cuh"
#include "weft/program/device_abi.h"
#include "weft/program/message_layout.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// Waits until a FIFO counter (the send connection's head, the receive connection's tail) reaches
// `target`: relaxed polls, then one acquire fence, or in a lean step one acquire load whose value
// is kept in `seen_before`. A lean step whose target that value already reaches neither polls
// nor acquires: the acquire that read it was followed by a CTA barrier (every step that waits
// has one), which ordered every thread's later accesses after the peer's. False when the wait
// ended (reported).
__device__ __forceinline__ bool wait_counter(const LaunchArgs& args, const CtaShared& cs,
                                             const std::uint64_t* counter, std::uint64_t target,
                                             bool system, std::int32_t peer, WaitKind kind,
                                             bool lean, std::uint64_t& seen_before) {
  if (lean && seen_before >= target) return true;
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
  if (lean) {
    seen_before = load_acquire(counter, system);
  } else {
    fence_after_poll(system);
  }
  return true;
}

// Whether a step's wait phase has anything to wait for, decided alike by every thread from what
// they all know (the step, the protocol, their counters): dependencies (first message only), a
// free slot once the FIFO has been round, a Simple message, a merged reduce's sources. Lean
// steps skip the barrier after a wait phase that has none.
__device__ __forceinline__ bool step_waits(const DeviceStep& step, int protocol, bool first_part,
                                           Counters c, std::uint32_t fifo_depth) {
  return (first_part && step.dependency_count > 0) ||
         (step_sends(step.type) && c.sent + 1 > fifo_depth) ||
         (protocol == kSimple && step_receives(step.type)) || step.type == kReduce;
}

// Whether a step's post phase has anything to post: an acknowledgement, a message (Simple; and
// every protocol's towards a proxy, `proxied`, which learns of an LL or LL128 message only from
// its tail), a completion someone waits for. Lean steps skip the barrier before a post phase that
// has none.
__device__ __forceinline__ bool step_posts(const DeviceStep& step, int protocol, bool last_part,
                                           bool proxied) {
  return step_receives(step.type) || ((protocol == kSimple || proxied) && step_sends(step.type)) ||
         (last_part && (step.flags & kStepPublishes) != 0);
}

// Dependencies are waited for before the first message of a step only. Polls are relaxed, then
// one acquire fence (fence_after_poll) makes what the awaited side published visible.
// `tile` is the message's tile, `group` the tiles a step moves before the next (slices,
// LaunchArgs::slices): dependencies are per group. `extra_set`: which of cs.extra's two sets a
// merged reduce's sources go to.
inline __device__ WEFT_NOINLINE bool wait_phase(const LaunchArgs& args, CtaShared& cs, Counters c,
                                                const DeviceStep* step, std::uint64_t tile,
                                                std::uint64_t group, int protocol, bool first_part,
                                                std::uint32_t extra_set) {
  const CtaDescriptor& d = *cs.descriptor;
  const bool system = args.system_scope != 0;
  const bool lean = args.lean_steps != 0;
  for (std::int32_t k = 0; first_part && k < step->dependency_count; ++k) {
    const DeviceDependency dep = d.dependencies[step->first_dependency + k];
    const std::uint64_t* flag =
        d.flags + static_cast<std::uint64_t>(dep.threadblock) * kFlagStrideWords;
    const std::uint64_t target =
        dependency_flag(cs.launch, group, static_cast<std::uint64_t>(dep.steps),
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
    if (lean) {
      load_acquire(flag, false);
    } else {
      fence_after_poll(false);
    }
  }
  if (step_sends(step->type) && c.sent + 1 > args.fifo_depth &&
      !wait_counter(args, cs, d.send_head, c.sent + 1 - args.fifo_depth, system, d.send_peer,
                    WaitKind::Space, lean, cs.head_seen)) {
    return false;
  }
  if (protocol == kSimple && step_receives(step->type) &&
      !wait_counter(args, cs, d.recv_tail, c.received + 1, system, d.recv_peer, WaitKind::Message,
                    lean, cs.tail_seen)) {
    return false;
  }
  // Merged re: its further sources at piece 0 of this tile, for every thread (after the barrier).
  if (step->type == kReduce) {
    for (std::int32_t k = 0; k < step->source_count; ++k) {
      const DeviceSource source = d.sources[step->first_source + k];
      cs.extra[extra_set][k] = buffer_base(cs, source.buffer) +
                               (static_cast<std::uint64_t>(source.offset) * args.chunk_elements +
                                tile * args.tile_elements) *
                                   args.element_bytes;
    }
  }
  return true;
}

// A message towards a proxy: its size in the descriptor ring. Out of line: only connections to
// other hosts take it, and inline its arithmetic added registers to every kernel's step loop
// (12 of the 120 instantiations spilled, scripts/kernel-report.sh).
// The message's pieces and tile length are worked out again here, from the step, the part and
// the tile, rather than kept live in registers across the data phase for it.
inline __device__ WEFT_NOINLINE void post_message_size(const LaunchArgs& args,
                                                       const DeviceStep& step, std::uint64_t* ring,
                                                       std::uint64_t sent, int protocol,
                                                       std::uint32_t part, std::uint64_t tile) {
  const std::uint64_t tile_start = tile * args.tile_elements;
  const std::uint64_t len = args.chunk_elements - tile_start < args.tile_elements
                                ? args.chunk_elements - tile_start
                                : args.tile_elements;
  const auto count = static_cast<std::uint32_t>(step.count);
  const std::uint32_t first = part * args.pieces_per_message;
  const std::uint32_t n =
      count - first < args.pieces_per_message ? count - first : args.pieces_per_message;
  ring[sent % args.fifo_depth] =
      message_bytes(protocol, n, args.piece_stride_bytes, len, args.element_bytes, args.slot_bytes,
                    protocol == kLL && sent % kLLCleanPeriod < args.fifo_depth);
}

// Completion is published after the last message of a step (its last part and slice) only: one
// release fence, cumulative through the barrier before it (every thread's payload stores and slot
// reads are done), then relaxed stores of every counter the step advances (NCCL's postPeer). A
// message towards a proxy (d.send_descriptors) first leaves its size in the proxy's descriptor ring
// (message `part` of the step), which the same fence orders before the tail the proxy polls.
__device__ __forceinline__ void post_phase(const LaunchArgs& args, const CtaShared& cs, Counters c,
                                           const DeviceStep& step, std::uint64_t tile,
                                           std::uint64_t group, std::int32_t flat_step,
                                           int protocol, bool last_part, std::uint32_t part) {
  const CtaDescriptor& d = *cs.descriptor;
  const bool acknowledge = step_receives(step.type);
  const bool proxied = d.send_descriptors != nullptr;
  const bool post = (protocol == kSimple || proxied) && step_sends(step.type);
  const bool publish = last_part && (step.flags & kStepPublishes) != 0;
  if (!acknowledge && !post && !publish) return;
  if (post && proxied)
    post_message_size(args, step, d.send_descriptors, c.sent, protocol, part, tile);
  // A peer may be another GPU whenever the step talks to one; the progress flag is read only by
  // this rank's threadblocks, on this device.
  const bool system = args.system_scope != 0 && (acknowledge || post);
  fence_before_post(system);
  if (acknowledge) store_post(d.recv_head, c.received + 1, system);
  if (post) store_post(d.send_tail, c.sent + 1, system);
  if (publish) {
    store_post(d.flags + static_cast<std::uint64_t>(d.threadblock) * kFlagStrideWords,
               dependency_flag(cs.launch, group, static_cast<std::uint64_t>(d.step_count),
                               static_cast<std::uint64_t>(flat_step)),
               false);
  }
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
