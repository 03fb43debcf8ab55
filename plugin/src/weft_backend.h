// The shim's access to the Weft GPU runtime, behind an interface so that the shim's decisions
// (selection, groups, forwarding, communicator bookkeeping) can be tested on a machine without a
// GPU, with a stand-in backend that records what would have run.
#pragma once

#include <nccl.h>

#include <memory>
#include <string>

#include "nccl_functions.h"
#include "weft/communicator/bootstrap.h"
#include "weft/communicator/communicator.h"
#include "weft/ir/ir.h"
#include "weft/plugin/call_selection.h"
#include "weft/program/selection.h"
#include "weft/program/status.h"

namespace weft::plugin {

// The Weft communicator beside (or, standalone, instead of) one NCCL communicator: one rank,
// on one device.
class WeftSide {
 public:
  virtual ~WeftSide() = default;
  // Collective over the communicator's ranks, in the same order everywhere. Returns the handle
  // the runtime gave the algorithm.
  virtual gpu::Result<int> load(const ir::Algorithm& algorithm) = 0;
  // Whether the runtime would run `call` with `handle` (its plan and FIFO depth fit), and if so
  // its plan, which run() launches as it is; asked only for calls that passed check_applicable.
  virtual gpu::Result<gpu::PlannedCall> plan(int handle, const gpu::CallShape& call) const = 0;
  // Enqueues a call plan() accepted on `stream`, on the application's buffers in `call`.
  virtual gpu::Status run(const gpu::PlannedCall& planned, const CollectiveCall& call,
                          cudaStream_t stream) = 0;
  // The first failure inside a kernel (a wait that timed out); success while there is none.
  virtual gpu::Status async_error() const = 0;
  // What carries the calls to ranks on other hosts ("UCX 1.13.1 over tcp"); empty when every
  // rank shares this one.
  virtual std::string network() const { return {}; }
};

class WeftBackend {
 public:
  virtual ~WeftBackend() = default;
  // The CUDA device current on the calling thread (NCCL binds a communicator to it).
  virtual gpu::Result<int> current_device() = 0;
  // A bootstrap whose allgather is the real NCCL's ncclAllGather on `comm` (through `nccl`).
  virtual gpu::Result<std::shared_ptr<gpu::Bootstrap>> nccl_bootstrap(
      ncclComm_t comm, int rank, int nranks, int device, const NcclFunctions& nccl) = 0;
  // Collective: the Weft communicator of `rank` among `nranks`, sharing memory with the ranks
  // of its host (CUDA IPC, handles exchanged over `bootstrap`) and reaching those of other hosts
  // through the proxy (docs/architecture.md §6). `host` is this process's host id.
  virtual gpu::Result<std::unique_ptr<WeftSide>> create(std::shared_ptr<gpu::Bootstrap> bootstrap,
                                                        int nranks, int rank, int device,
                                                        const std::string& host) = 0;
};

// The real one, on weft::gpu::Communicator (built only with CUDA).
std::unique_ptr<WeftBackend> make_cuda_backend();
// Host mode (standalone with WEFT_DEVICE=host): the application's buffers are host memory, the
// kernels run on CPU threads, and every other process is reached through the proxy.
std::unique_ptr<WeftBackend> make_host_backend();

}  // namespace weft::plugin
