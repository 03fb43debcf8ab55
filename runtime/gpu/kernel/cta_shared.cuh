// What every part of the interpreter kernel (interpreter.cuh) shares: what a flat step's type
// does (the types themselves are device_abi.h's, ir::StepType's values), the CTA's shared state,
// and where a step's pieces are in the rank's buffers.
#pragma once

#include <cstdint>

#include "portability.h"
#include "primitives.cuh"
#include "weft/program/device_abi.h"

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

// The messages a threadblock has sent and received on its connections before the current one.
// Every thread keeps its own copy and advances it alike after each step, so that thread 0 may
// post a step (lean steps, interpreter.cuh) while other threads still move its data.
struct Counters {
  std::uint64_t sent;
  std::uint64_t received;
};

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
  Counters start;  // the counters when the launch began
  // Lean steps only, thread 0 only: the send connection's head and the receive connection's
  // tail as last acquired (see wait_counter).
  std::uint64_t head_seen;
  std::uint64_t tail_seen;
  WaitSite site;  // where thread 0's wait phase is, for its reports (data phases: site_of)
  // Merged re: the further sources of the current step, at piece 0 of the current tile. Two
  // sets: the overlap step's thread 0 writes the next message's while the other workers may
  // still read the current one's (message parity); the other steps use set 0.
  const char* extra[2][kMaxReduceSources - 1];
  // The overlap step: 1 + the message whose wait failed (thread 0's), 0 while none has. Read by
  // the workers after that message's ready barrier and by the poster warp after its done
  // barrier; thread 0 may write it for a later message while they read it for an earlier one,
  // hence the message's number (load_cta_word / store_cta_word).
  std::uint64_t stop;
};

// Named barriers of the overlap step (overlap_step.cuh); 0 is __syncthreads'.
inline constexpr unsigned kReadyBarrier = 1;    // the workers wait for thread 0's wait phase
inline constexpr unsigned kDoneBarrier = 2;     // the poster warp waits for the workers' data
inline constexpr unsigned kWorkersBarrier = 3;  // the workers alone (a step's serial pieces)

// The threads that move a step's data: the whole CTA, or (the overlap step, Simple) every warp
// but the last, which posts.
struct Workers {
  std::uint32_t index;  // this thread among them
  std::uint32_t count;
  bool subset;  // not the whole CTA: they meet at kWorkersBarrier, not __syncthreads
};

__device__ __forceinline__ Workers whole_cta() {
  return Workers{threadIdx.x, blockDim.x, false};
}

// A barrier of the workers alone: every thread that moves data has finished what it did before.
__device__ __forceinline__ void workers_barrier(Workers workers) {
  if (workers.subset) {
    named_barrier_sync(kWorkersBarrier, workers.count);
  } else {
    __syncthreads();
  }
}

// Which step a thread is in, for the report of a wait in the data phase (LL and LL128 lines):
// built by the reporting thread itself, because thread 0's cs.site may already name the next
// step once a lean step has left a barrier out.
struct StepPlace {
  std::int32_t flat_step;
  std::uint32_t part;
};

__device__ __forceinline__ WaitSite site_of(const CtaShared& cs, const DeviceStep& step,
                                            StepPlace place, std::uint64_t tile) {
  const CtaDescriptor& d = *cs.descriptor;
  WaitSite site;
  site.rank = d.rank;
  site.threadblock = d.threadblock;
  site.ir_step = step.ir_step;
  site.flat_step = place.flat_step;
  site.channel = d.channel;
  site.part = static_cast<std::int32_t>(place.part);
  site.tile = tile;
  site.launch = cs.launch;
  return site;
}

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

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
