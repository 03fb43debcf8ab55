// The C++ face of the GPU runtime (docs/architecture.md §5).
//
//   auto transport = weft::gpu::make_emulation_transport(8, /*device=*/0);
//   auto comm = weft::gpu::Communicator::create(transport.value(), {});
//   auto algo = comm.value()->load("allreduce_ring.xml");           // validated, flattened
//   comm.value()->run(algo.value(), calls, count, DataType::Float, ReduceOp::Sum, -1, stream);
//   cudaStreamSynchronize(stream);
//   weft::gpu::Status s = comm.value()->async_error();               // timeouts surface here
//
// Calls are stream-ordered and can be captured in a CUDA graph; nothing is reset by the host
// between calls (the device keeps monotone counters). Loading and unloading are collective over
// the participants of the transport, in the same order everywhere. Calls on one communicator
// must be ordered (one stream, or streams ordered by events), as with NCCL.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "weft/communicator/device_runtime.h"
#include "weft/communicator/transport.h"
#include "weft/ir/ir.h"
#include "weft/ir/types.h"
#include "weft/program/call_plan.h"
#include "weft/program/options.h"
#include "weft/program/selection.h"
#include "weft/program/status.h"

namespace weft::gpu {

// One loaded algorithm of a communicator (like MSCCL's mscclAlgoHandle_t). Ids are never reused
// within a communicator, so a stale handle is reported instead of running something else.
struct AlgorithmHandle {
  int id = -1;
  bool valid() const { return id >= 0; }
  auto operator<=>(const AlgorithmHandle&) const = default;
};

// One local rank's buffers for a call. In-place calls alias them as NCCL does
// (docs/architecture.md §2.2): allreduce/broadcast/reduce sendbuf == recvbuf, allgather
// sendbuf == recvbuf + rank·count, reducescatter recvbuf == sendbuf + rank·count.
struct RankBuffers {
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
};

class Communicator;

// A call that Communicator::plan accepted for one algorithm, with its plan, so that choosing an
// algorithm (the NCCL shim asks several) and launching the chosen one plan the call once. Valid
// for the communicator that made it for as long as the algorithm stays loaded.
struct PlannedCall {
  AlgorithmHandle handle;
  CallShape shape;
  CallPlan plan;
  const Communicator* planner = nullptr;  // run() refuses a call another communicator planned
};

class Communicator {
 public:
  // `transport` fixes the ranks and the device; options come from runtime_options_from_env or
  // the caller. Not collective.
  static Result<std::unique_ptr<Communicator>> create(std::shared_ptr<Transport> transport,
                                                      RuntimeOptions options);
  virtual ~Communicator() = default;

  virtual int nranks() const = 0;
  virtual std::span<const int> local_ranks() const = 0;
  virtual int device() const = 0;
  // A CUDA device, or the host (make_host_transport): there run() finishes the call before it
  // returns, and the stream is not used.
  virtual DeviceKind device_kind() const = 0;
  virtual const RuntimeOptions& options() const = 0;

  // Collective. Reads and validates (limits profile `weft`) and flattens every local rank's part;
  // allocates FIFOs and exchanges them with the peers. A bad file fails with InvalidAlgorithm
  // and every finding (file:line, gpu/tb/step, reason).
  virtual Result<AlgorithmHandle> load(const std::string& xml_path) = 0;
  virtual Result<AlgorithmHandle> load(const ir::Algorithm& algorithm) = 0;
  // Collective. Waits for the device to finish with the algorithm, then frees it.
  virtual Status unload(AlgorithmHandle handle) = 0;
  // The IR behind a handle; nullptr for an unknown handle.
  virtual const ir::Algorithm* algorithm(AlgorithmHandle handle) const = 0;

  // Whether `handle` can run this call (check_applicable, and whether its plan fits: tile/step
  // encoding, FIFO depth for split steps), and if so its plan for run(). Fails with the reason,
  // so that a caller choosing among algorithms falls back instead of choosing one run() rejects.
  virtual Result<PlannedCall> plan(AlgorithmHandle handle, const CallShape& call) const = 0;
  // plan() for callers that need only the verdict.
  Applicability applies(AlgorithmHandle handle, const CallShape& call) const;

  // Enqueues one collective call on `stream` for every local rank at once (`calls` holds one
  // entry per local rank, in local_ranks() order). `root` is the broadcast/reduce root, −1 for
  // the others. Returns once the kernel is enqueued; a timeout inside the kernel is reported by
  // async_error() after the stream has synchronised, and by every later run().
  // In-place calls: as in MSCCL, an algorithm may use the whole aliased buffer, so the parts of
  // it outside the call's result (other ranks' blocks of a reducescatter, a non-root rank's
  // buffer of a reduce) hold unspecified values afterwards; with avg they are at least scaled by
  // 1/nranks, which is applied to the input in place.
  virtual Status run(AlgorithmHandle handle, std::span<const RankBuffers> calls, std::size_t count,
                     DataType dtype, ReduceOp op, int root, StreamHandle stream) = 0;
  // The same for a communicator with exactly one local rank.
  Status run(AlgorithmHandle handle, const void* sendbuf, void* recvbuf, std::size_t count,
             DataType dtype, ReduceOp op, int root, StreamHandle stream) {
    const RankBuffers call{sendbuf, recvbuf};
    return run(handle, std::span<const RankBuffers>(&call, 1), count, dtype, op, root, stream);
  }
  // run() for a call plan() accepted: `calls` must be buffers of that shape (in-place exactly
  // when the shape is).
  virtual Status run(const PlannedCall& call, std::span<const RankBuffers> calls,
                     StreamHandle stream) = 0;
  Status run(const PlannedCall& call, const void* sendbuf, void* recvbuf, StreamHandle stream) {
    const RankBuffers buffers{sendbuf, recvbuf};
    return run(call, std::span<const RankBuffers>(&buffers, 1), stream);
  }

  // Grows the runtime-owned scratch so that calls up to `max_count` elements of `dtype` need no
  // allocation; needed before capturing such a call in a CUDA graph.
  virtual Status reserve_scratch(AlgorithmHandle handle, std::size_t max_count, DataType dtype) = 0;

  // The first device-side failure (a wait that timed out), with rank, threadblock, step, tile and
  // what was awaited; success while none happened. Reads host-mapped memory: call it after
  // synchronising the stream to be sure to see a failure of the calls enqueued so far. After a
  // failure the communicator refuses further calls: create a new one.
  virtual Status async_error() const = 0;
};

}  // namespace weft::gpu
