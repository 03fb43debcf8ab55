// What the Shim keeps between calls: the record of each communicator it knows, each thread's
// open group and last error, and the collectives a group holds until ncclGroupEnd. Private to
// the files that implement Shim (shim*.cpp).
#pragma once

#include <nccl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shim.h"

namespace weft::plugin {

struct Shim::CommRecord {
  ncclComm_t handle = nullptr;  // what the application holds
  bool standalone = false;      // the shim serves it alone; no NCCL communicator behind it
  int rank = 0;
  int nranks = 1;
  int device = -1;
  std::shared_ptr<gpu::Bootstrap> bootstrap;     // standalone: kept for the communicator's life
  std::unique_ptr<WeftSide> weft;                // null: every collective goes to NCCL
  std::vector<const ir::Algorithm*> algorithms;  // loaded on every rank, in catalog order
  std::vector<int> handles;                      // the runtime's handle for each of them
  std::string no_weft_reason;                    // why `weft` is null or has no algorithm
};

// Decided when the application makes the call, inside a group too, so that the runtime plans
// each call once.
struct Shim::Route {
  std::shared_ptr<CommRecord> record;    // null: a communicator the shim did not create
  Selection selection;                   // the algorithm chosen, or why none
  std::optional<gpu::PlannedCall> plan;  // the runtime's plan for the chosen algorithm
};

struct Shim::PendingCollective {
  const char* api = "";
  CollectiveCall call;
  cudaStream_t stream = nullptr;
  Replay replay;
  Route route;
};

// What NCCL keeps per thread: the open group and the last error message.
struct Shim::ThreadState {
  int group_depth = 0;
  std::vector<PendingCollective> collectives;
  std::string nccl_only_reason;  // the group holds an operation only NCCL runs
  // Standalone: why the open group failed (a call in it was refused). Its collectives are
  // dropped, later ones are refused with this reason until the outermost ncclGroupEnd, which
  // returns it: an application that leaves the group open after the error (PyTorch throws out
  // of it) gets errors, never collectives silently held in a group that will not end.
  std::string group_failure;
  std::vector<std::function<ncclResult_t()>> deferred;  // communicator completions
  std::string last_error;
};

}  // namespace weft::plugin
