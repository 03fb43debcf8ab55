// Memory-ordering primitives of the interpreter. Every cross-CTA or cross-GPU handshake goes
// through these few functions so that each ordering decision is made once:
//  - counters and flags other CTAs or GPUs read: relaxed polls then one acquire fence, one
//    release fence then relaxed stores (NCCL's pattern), at system scope when the other side may
//    be another GPU (FIFO tail/head), at GPU scope for the progress flags of one rank's
//    threadblocks (always on one device);
//  - data another CTA or GPU wrote: ld.global.cg (L2, never a stale L1 line);
//  - LL/LL128 lines: volatile vector accesses whose flag travels in the same store.
// The accesses themselves are in primitives_cuda.cuh (nvcc) and its host-mode twin
// primitives_host.h (std::atomic_ref with the same orders); what is built on them is here, once.
#pragma once

#include <cstdint>

#include "portability.h"
#include "weft/program/device_abi.h"

#if defined(__CUDACC__)
#include "primitives_cuda.cuh"
#else
#include "primitives_host.h"
#endif

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// Spins between two looks at the clock: the clock read is not free.
inline constexpr std::uint32_t kSpinsPerCheck = 256;
// The abort word is in host memory, so each look crosses PCIe, and in LL every thread of every
// CTA may be waiting at once (tens of thousands): looks that often saturate the bus and slow
// every wait down (on an H100, LL all-pairs at 8 ranks took 41 ms for 1 MB; docs/performance.md).
// A wait therefore looks at it only once it has lasted this long, and then at this interval; a
// healthy call's waits end before the first look, and an abort still ends every wait within
// about a millisecond, far inside any timeout.
inline constexpr std::uint64_t kAbortCheckNs = 1'000'000;

// Who waits and where, for the error report.
struct WaitSite {
  std::int32_t rank;
  std::int32_t threadblock;
  std::int32_t ir_step;
  std::int32_t flat_step;
  std::int32_t channel;
  std::int32_t part;
  std::uint64_t tile;
  std::uint64_t launch;
};

// Records the first failure of the communicator (later ones only find the report claimed), and
// raises the process's abort word so that every wait of every communicator of the process gives
// up instead of waiting out its own timeout.
inline __device__ WEFT_NOINLINE void report_failure(const LaunchArgs& args, const WaitSite& site,
                                                    std::int32_t peer, WaitKind kind,
                                                    std::int32_t dep_threadblock,
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
    r->peer = peer;
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
  if (kind != WaitKind::Aborted) store_abort_word(args.abort, args.abort_epoch + 1u);
}

__device__ __forceinline__ bool aborted(const LaunchArgs& args) {
  return load_abort_word(args.abort) != args.abort_epoch;
}

// Whether a launch of this communicator has failed before (its control word stays claimed: the
// host accepts no further call on it, so only a replayed CUDA graph launches again). Checked at
// every launch's start instead of the process's abort word: that one is in host memory, and the
// reads of one host word by every CTA of a launch cross PCIe one after another (on an H100 the
// start cost grew by about 1 us per CTA: 120 CTAs for all-pairs at 8 emulated ranks).
__device__ __forceinline__ bool failed_before(const LaunchArgs& args) {
  return load_claimed(&args.control->claimed) != 0;
}

// The first rank that has not yet entered launch `launch` (its word of the arrival table is
// older), or −1 when all have.
__device__ __forceinline__ std::int32_t missing_rank(const CtaDescriptor& d, std::uint64_t launch) {
  const auto* table =
      reinterpret_cast<const std::uint64_t*>(d.peer_regions[d.rank] + kArrivalTableOffset);
  for (std::int32_t p = 0; p < d.nranks; ++p) {
    if (load_arrival(table + p) < launch) return p;
  }
  return -1;
}

// Tracks one wait. Its clock starts at the first look (a wait that succeeds at once reads no
// clock). Until every rank has entered the launch, the arrival limit applies (a rank may be late
// for reasons of its own); from then on the timeout, which therefore measures a deadlock or a
// stopped peer, not start-up skew. The process's abort word ends every wait (kAbortCheckNs). It
// holds only its clock readings (a few registers); what it checks against is passed in each time.
class Deadline {
 public:
  enum Outcome : std::uint32_t { kWaiting = 0, kExpired = 1, kLate = 2, kAborted = 3 };

  // False when the wait must end; outcome() says why.
  __device__ __forceinline__ bool keep_waiting(const LaunchArgs& args, const CtaDescriptor& d,
                                               std::uint64_t launch) {
    spin_pause();
    if (++spins_ % kSpinsPerCheck != 0) return true;
    const std::uint64_t now = global_timer_ns();
    if (start_ == 0) start_ = abort_check_at_ = now;
    if (now - abort_check_at_ >= kAbortCheckNs) {
      abort_check_at_ = now;
      if (aborted(args)) {
        outcome_ = kAborted;
        return false;
      }
    }
    if (armed_at_ == 0) {
      late_rank_ = missing_rank(d, launch);
      if (late_rank_ < 0) {
        armed_at_ = now;
      } else if (now - start_ > args.arrival_timeout_ns) {
        outcome_ = kLate;
        waited_ = now - start_;
        return false;
      }
    }
    if (armed_at_ != 0 && now - armed_at_ > args.timeout_ns) {
      outcome_ = kExpired;
      waited_ = now - armed_at_;
      return false;
    }
    return true;
  }
  __device__ Outcome outcome() const { return static_cast<Outcome>(outcome_); }
  __device__ std::uint64_t waited_ns() const { return waited_; }
  __device__ std::int32_t late_rank() const { return late_rank_; }

 private:
  std::uint64_t start_ = 0;
  std::uint64_t armed_at_ = 0;
  std::uint64_t waited_ = 0;
  std::uint64_t abort_check_at_ = 0;  // the last look at the abort word (or the wait's start)
  std::uint32_t spins_ = 0;
  std::uint32_t outcome_ = kWaiting;
  std::int32_t late_rank_ = -1;
};

// Reports why `deadline` ended a wait of kind `kind` at `site`: the wait's own timeout (with the
// values awaited and seen), a rank that never entered the launch, or the process's abort.
__device__ __forceinline__ void report_wait(const LaunchArgs& args, const Deadline& deadline,
                                            const WaitSite& site, std::int32_t peer, WaitKind kind,
                                            std::int32_t dep_threadblock, std::int32_t dep_step,
                                            std::int32_t dep_ir_step, std::uint64_t expected,
                                            std::uint64_t observed) {
  switch (deadline.outcome()) {
    case Deadline::kExpired:
      report_failure(args, site, peer, kind, dep_threadblock, dep_step, dep_ir_step, expected,
                     observed, deadline.waited_ns());
      break;
    case Deadline::kLate:
      report_failure(args, site, deadline.late_rank(), WaitKind::Arrival, -1, -1, -1, site.launch,
                     0, deadline.waited_ns());
      break;
    case Deadline::kAborted:
      report_failure(args, site, peer, WaitKind::Aborted, -1, -1, -1, 0, 0, 0);
      break;
    case Deadline::kWaiting:
      break;
  }
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
