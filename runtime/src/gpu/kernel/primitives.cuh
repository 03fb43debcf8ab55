// Memory-ordering primitives of the interpreter. Every cross-CTA or cross-GPU handshake goes
// through these few functions so that each ordering decision is made once:
//  - counters and flags other CTAs or GPUs read: release stores and acquire loads, at system
//    scope when the other side may be another GPU (FIFO tail/head), at GPU scope for the progress
//    flags of one rank's threadblocks (always on one device);
//  - data another CTA or GPU wrote: ld.global.cg (L2, never a stale L1 line);
//  - LL/LL128 lines: volatile vector accesses whose flag travels in the same store.
// The accesses themselves are in primitives_cuda.cuh (nvcc) and its host-mode twin
// primitives_host.h (std::atomic_ref with the same orders); what is built on them is here, once.
#pragma once

#include <cstdint>

#include "device_abi.h"
#include "portability.h"

#if defined(__CUDACC__)
#include "primitives_cuda.cuh"
#else
#include "primitives_host.h"
#endif

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// Spins between two looks at the clock and the abort flag: the clock read is not free, and a
// spinning thread must still notice an abort within microseconds.
inline constexpr std::uint32_t kSpinsPerCheck = 256;

// Who waits and where, for the error report.
struct WaitSite {
  std::int32_t rank;
  std::int32_t threadblock;
  std::int32_t ir_step;
  std::int32_t flat_step;
  std::int32_t peer;
  std::int32_t channel;
  std::int32_t part;
  std::uint64_t tile;
  std::uint64_t launch;
};

// Records the first failure of the communicator (later ones only raise the abort flag).
inline __device__ WEFT_NOINLINE void report_failure(const LaunchArgs& args, const WaitSite& site,
                                                   WaitKind kind, std::int32_t dep_threadblock,
                                                   std::int32_t dep_step, std::int32_t dep_ir_step,
                                                   std::uint64_t expected, std::uint64_t observed,
                                                   std::uint64_t waited_ns) {
  if (atomicCAS(&args.control->claimed, 0u, 1u) == 0u) {
    volatile ErrorReport* r = args.report;
    r->kind = static_cast<std::uint32_t>(kind);
    r->rank = site.rank;
    r->threadblock = site.threadblock;
    r->ir_step = site.ir_step;
    r->flat_step = site.flat_step;
    r->peer = site.peer;
    r->channel = site.channel;
    r->dep_threadblock = dep_threadblock;
    r->dep_step = dep_step;
    r->dep_ir_step = dep_ir_step;
    r->part = site.part;
    r->tile = site.tile;
    r->launch = site.launch;
    r->expected = expected;
    r->observed = observed;
    r->waited_ns = waited_ns;
    publish_report(args.report);
  }
  atomicExch(&args.control->abort, 1u);
}

// Tracks one wait's deadline. The clock starts at the first look, so a wait that succeeds at
// once costs no clock read.
class Deadline {
 public:
  __device__ explicit Deadline(std::uint64_t timeout_ns) : timeout_ns_(timeout_ns) {}

  // False when the wait must end: the timeout expired (expired() tells) or another thread of
  // the communicator failed.
  __device__ __forceinline__ bool keep_waiting(const LaunchArgs& args) {
    spin_pause();
    if (++spins_ % kSpinsPerCheck != 0) return true;
    if (load_relaxed_u32(&args.control->abort) != 0u) return false;
    const std::uint64_t now = global_timer_ns();
    if (start_ == 0) start_ = now;
    if (now - start_ > timeout_ns_) {
      expired_ = true;
      waited_ = now - start_;
      return false;
    }
    return true;
  }
  __device__ bool expired() const { return expired_; }
  __device__ std::uint64_t waited_ns() const { return waited_; }

 private:
  std::uint64_t timeout_ns_;
  std::uint64_t start_ = 0;
  std::uint64_t waited_ = 0;
  std::uint32_t spins_ = 0;
  bool expired_ = false;
};

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
