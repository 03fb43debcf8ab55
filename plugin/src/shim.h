// The shim's one process-wide object. An LD_PRELOADed library receives plain C calls with no
// context argument but the communicator, so whatever it must remember between calls (the real
// NCCL's entry points, the loaded algorithms, the Weft side of each communicator, each thread's
// open group) has to be reachable from a function with no parameters. Rather than scatter that
// over several globals, it is all in this class: Shim::process() creates the one instance on
// first use from the environment, and tests create their own instances with their own
// configuration and backend, side by side.
//
// The class is implemented by job: shim.cpp (start-up, library-wide calls), shim_registry.cpp
// (the communicators and threads it knows), shim_errors.cpp, shim_unique_id.cpp,
// shim_communicators.cpp, shim_weft_side.cpp (a communicator's Weft algorithms),
// shim_routing.cpp (Weft or NCCL, per call) and shim_groups.cpp; shim_records.h holds what
// they share.
#pragma once

#include <nccl.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "nccl_functions.h"
#include "weft/plugin/algorithm_catalog.h"
#include "weft/plugin/call_selection.h"
#include "weft/plugin/debug_log.h"
#include "weft/plugin/shim_config.h"
#include "weft_backend.h"

namespace weft::plugin {

// Calls the real NCCL with a collective's original arguments.
using Replay = std::function<ncclResult_t(const NcclFunctions&)>;

class Shim {
 public:
  // `nccl` is resolved by the caller (resolve_nccl) so that tests can hand in a stand-in.
  Shim(ShimConfig config, NcclLibrary nccl, std::unique_ptr<WeftBackend> backend,
       Logger::Sink log_sink = {});
  ~Shim();
  Shim(const Shim&) = delete;
  Shim& operator=(const Shim&) = delete;

  // The instance behind the exported ncclX functions, created on first use.
  static Shim& process();

  const ShimConfig& config() const { return config_; }
  const Catalog& catalog() const { return catalog_; }
  const Logger& logger() const { return logger_; }

  // ---- The NCCL API: the functions with logic of their own ---------------------------------
  ncclResult_t get_version(int* version);
  ncclResult_t get_unique_id(ncclUniqueId* id);
  // `with_config`: ncclCommInitRankConfig (whose config may be NULL) rather than ncclCommInitRank.
  ncclResult_t comm_init_rank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                              ncclConfig_t* config, bool with_config);
  ncclResult_t comm_init_rank_scalable(ncclComm_t* comm, int nranks, int rank, int nids,
                                       ncclUniqueId* ids, ncclConfig_t* config);
  ncclResult_t comm_init_all(ncclComm_t* comms, int ndev, const int* devlist);
  ncclResult_t comm_split(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                          ncclConfig_t* config);
  ncclResult_t comm_shrink(ncclComm_t comm, int* exclude, int nexclude, ncclComm_t* newcomm,
                           ncclConfig_t* config, int flags);
  ncclResult_t comm_finalize(ncclComm_t comm);
  ncclResult_t comm_destroy(ncclComm_t comm);
  ncclResult_t comm_abort(ncclComm_t comm);
  ncclResult_t comm_count(ncclComm_t comm, int* count);
  ncclResult_t comm_cu_device(ncclComm_t comm, int* device);
  ncclResult_t comm_user_rank(ncclComm_t comm, int* rank);
  ncclResult_t comm_get_async_error(ncclComm_t comm, ncclResult_t* error);
  const char* get_error_string(ncclResult_t result);
  const char* get_last_error(ncclComm_t comm);
  void reset_debug_init();

  // One of the six collectives Weft can take. `api` names the NCCL function for messages;
  // `replay` makes the same call on the real NCCL. call.rank and call.nranks are filled in here.
  ncclResult_t collective(const char* api, CollectiveCall call, ncclComm_t comm,
                          cudaStream_t stream, Replay replay);
  ncclResult_t group_start();
  ncclResult_t group_end();
  ncclResult_t group_simulate_end(ncclSimInfo_t* info);

  // Everything else goes unchanged to the real NCCL (refused in standalone mode). Inside a
  // group it also sends the group's collectives to NCCL: the shim never splits a group.
  template <class Member, class... Args>
  ncclResult_t forward(const char* api, Member NcclFunctions::*function, Args... args) {
    if (auto refused = refuse_unforwardable(api)) return *refused;
    const auto target = nccl_.functions.*function;
    if (auto refused = refuse_without(api, reinterpret_cast<const void*>(target))) return *refused;
    return target(args...);
  }
  // The same for an operation that NCCL runs inside a group (send, receive, gather, scatter):
  // a group holding one goes to NCCL whole.
  template <class Member, class... Args>
  ncclResult_t forward_operation(const char* api, Member NcclFunctions::*function, Args... args) {
    if (auto refused = refuse_unforwardable(api)) return *refused;
    note_group_member_for_nccl(api);
    return forward(api, function, args...);
  }

  // An exception that reached the API boundary (api_guard.h): logged at WARN and kept as this
  // thread's ncclGetLastError message; returns `code`.
  ncclResult_t report_exception(const char* api, const char* what, ncclResult_t code);

 private:
  struct CommRecord;
  struct Route;
  struct PendingCollective;
  struct ThreadState;

  // nullopt when the call may go to the real NCCL; otherwise the error to return (standalone,
  // no NCCL found, or the function missing from this libnccl), already logged.
  std::optional<ncclResult_t> refuse_unforwardable(const char* api);
  std::optional<ncclResult_t> refuse_without(const char* api, const void* function);
  void note_group_member_for_nccl(const char* api);
  ThreadState& thread_state();
  std::shared_ptr<CommRecord> find(ncclComm_t comm) const;
  void insert(std::shared_ptr<CommRecord> record);
  std::shared_ptr<CommRecord> erase(ncclComm_t comm);
  ncclResult_t fail(ncclResult_t code, std::string message);

  // Completes one communicator after NCCL (or standalone set-up) created it: its Weft side, if
  // any loaded algorithm fits its rank count. Runs outside any group.
  ncclResult_t attach_forwarded(ncclComm_t comm);
  ncclResult_t create_standalone(ncclComm_t* comm, int nranks, int rank,
                                 std::shared_ptr<gpu::Bootstrap> bootstrap, int device);
  // Loads the fitting algorithms into a new Weft side; every rank keeps the same ones.
  void attach_weft(CommRecord& record, std::shared_ptr<gpu::Bootstrap> bootstrap);
  // Runs deferred communicator completions, concurrently when there are several (they are
  // collectives of different communicators that may need each other's threads).
  ncclResult_t run_deferred(std::vector<std::function<ncclResult_t()>> tasks);
  // Either completes now or, inside a group, after the outermost ncclGroupEnd.
  ncclResult_t complete_or_defer(std::function<ncclResult_t()> task);
  // Where `call` on `comm` goes; fills in call.rank and call.nranks.
  Route route_call(CollectiveCall& call, ncclComm_t comm) const;
  ncclResult_t run_on_weft(const char* api, const CollectiveCall& call, const Route& route,
                           cudaStream_t stream);

  ShimConfig config_;
  Logger logger_;
  NcclLibrary nccl_;
  std::unique_ptr<WeftBackend> backend_;
  Catalog catalog_;

  mutable std::mutex mutex_;  // guards the members below, never held across a call into NCCL
  std::unordered_map<ncclComm_t, std::shared_ptr<CommRecord>> comms_;
  std::unordered_map<std::thread::id, std::unique_ptr<ThreadState>> threads_;
  // Standalone ids this process has joined with, and as which rank: an id serves one
  // communicator, so a rank joining again with it is refused (its secret may have been seen).
  std::vector<std::pair<gpu::RendezvousSecret, int>> joined_ids_;
  // Whether the failure to reach other hosts was already said at WARN (it is said once).
  std::atomic<bool> cross_host_warned_{false};
};

ncclResult_t to_nccl_result(gpu::ErrorCode code);

}  // namespace weft::plugin
