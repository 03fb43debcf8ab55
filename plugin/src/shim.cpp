#include "shim.h"

#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "weft/ir/nccl_version.h"
#include "weft/plugin/standalone_id.h"
#include "weft/version.h"

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

struct Shim::PendingCollective {
  const char* api = "";
  CollectiveCall call;
  cudaStream_t stream = nullptr;
  Replay replay;
  std::shared_ptr<CommRecord> record;
  Selection selection;
};

// What NCCL keeps per thread: the open group and the last error message.
struct Shim::ThreadState {
  int group_depth = 0;
  std::vector<PendingCollective> collectives;
  std::string nccl_only_reason;  // the group holds an operation only NCCL runs
  std::vector<std::function<ncclResult_t()>> deferred;  // communicator completions
  std::string last_error;
};

ncclResult_t to_nccl_result(gpu::ErrorCode code) {
  switch (code) {
    case gpu::ErrorCode::Success:
      return ncclSuccess;
    case gpu::ErrorCode::InvalidArgument:
      return ncclInvalidArgument;
    case gpu::ErrorCode::CudaError:
      return ncclUnhandledCudaError;
    case gpu::ErrorCode::SystemError:
      return ncclSystemError;
    case gpu::ErrorCode::Timeout:
      return ncclRemoteError;  // a peer did not do its part in time
    case gpu::ErrorCode::InternalError:
      return ncclInternalError;
    case gpu::ErrorCode::InvalidAlgorithm:
    case gpu::ErrorCode::NotApplicable:
    case gpu::ErrorCode::NotResident:
    case gpu::ErrorCode::InvalidUsage:
    case gpu::ErrorCode::Mismatch:
      return ncclInvalidUsage;
  }
  return ncclInternalError;
}

namespace {

const char* own_error_string(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with WEFT_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with WEFT_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the Weft developers";
    case ncclInvalidArgument:
      return "invalid argument (run with WEFT_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with WEFT_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

// Every rank contributes flags[k] ∈ {0, 1}; afterwards flags[k] is 1 only where it was 1 on
// every rank. A failed exchange clears every flag: better no Weft than ranks that disagree.
void agree(gpu::Bootstrap& bootstrap, std::vector<std::uint8_t>& flags) {
  if (flags.empty()) return;
  const std::size_t per_rank = flags.size();
  std::vector<std::byte> records(per_rank * static_cast<std::size_t>(bootstrap.size()));
  std::memcpy(records.data() + per_rank * static_cast<std::size_t>(bootstrap.rank()), flags.data(),
              per_rank);
  if (!bootstrap.allgather(records, per_rank).ok()) {
    std::fill(flags.begin(), flags.end(), std::uint8_t{0});
    return;
  }
  for (int r = 0; r < bootstrap.size(); ++r) {
    for (std::size_t k = 0; k < per_rank; ++k) {
      if (records[static_cast<std::size_t>(r) * per_rank + k] == std::byte{0}) flags[k] = 0;
    }
  }
}

}  // namespace

Shim::Shim(ShimConfig config, NcclLibrary nccl, std::unique_ptr<WeftBackend> backend,
           Logger::Sink log_sink)
    : config_(std::move(config)),
      logger_(config_.debug, std::move(log_sink)),
      nccl_(std::move(nccl)),
      backend_(std::move(backend)) {
  if (backend_) {
    logger_.set_device_probe([backend = backend_.get()] {
      auto device = backend->current_device();
      return device.ok() ? device.value() : -1;
    });
  }
  logger_.info("Weft {}, built against NCCL {}", WEFT_VERSION_STRING,
               ir::nccl_version_text(NCCL_VERSION_CODE));
  for (const std::string& problem : config_.problems) logger_.warn("{}", problem);
  if (config_.disabled) {
    if (config_.standalone) logger_.warn("WEFT_DISABLE=1 overrides WEFT_STANDALONE=1");
    config_.standalone = false;
    logger_.info("WEFT_DISABLE=1: every NCCL call goes to {} unchanged", nccl_.origin);
    if (!nccl_.found) logger_.warn("{}", nccl_.error);
    return;
  }
  if (config_.standalone) {
    logger_.info(
        "standalone mode (WEFT_STANDALONE=1): no NCCL; collectives without a loaded "
        "algorithm fail");
  } else if (nccl_.found) {
    // The NCCL found at run time may differ from the headers the shim was built with. Asked only
    // for the log, so that without it the shim calls NCCL only when the application does.
    if (logger_.enabled(LogLevel::Info)) {
      int code = 0;
      const bool known = nccl_.functions.GetVersion(&code) == ncclSuccess;
      logger_.info(
          "forwarding to {}: NCCL {}", nccl_.origin,
          known ? ir::nccl_version_text(code) : "of unknown version (ncclGetVersion failed)");
    }
  } else {
    logger_.warn("{}", nccl_.error);
  }
  catalog_ = load_catalog(config_);
  for (const std::string& skipped : catalog_.skipped) logger_.warn("{}", skipped);
  for (const std::string& ignored : catalog_.ignored) logger_.info("{}", ignored);
  logger_.info("{} algorithm{} loaded", catalog_.entries.size(),
               catalog_.entries.size() == 1 ? "" : "s");
  for (std::size_t k = 0; k < catalog_.entries.size(); ++k) {
    const ir::Algorithm& algo = catalog_.entries[k].algorithm;
    logger_.info("  [{}] '{}': {} on {} ranks, {}{}{}, {} ({})", k, algo.name,
                 ir::to_string(algo.collective), algo.ngpus, algo.inplace ? "in-place" : "",
                 algo.inplace && algo.outofplace ? "/" : "", algo.outofplace ? "out-of-place" : "",
                 ir::to_string(algo.protocol), catalog_.entries[k].path);
  }
}

Shim::~Shim() = default;

// ---- Bookkeeping ------------------------------------------------------------------------

Shim::ThreadState& Shim::thread_state() {
  std::lock_guard lock(mutex_);
  auto& state = threads_[std::this_thread::get_id()];
  if (!state) state = std::make_unique<ThreadState>();
  return *state;  // stable: the map holds it by pointer and only its own thread uses it
}

std::shared_ptr<Shim::CommRecord> Shim::find(ncclComm_t comm) const {
  std::lock_guard lock(mutex_);
  const auto it = comms_.find(comm);
  return it == comms_.end() ? nullptr : it->second;
}

void Shim::insert(std::shared_ptr<CommRecord> record) {
  std::lock_guard lock(mutex_);
  comms_[record->handle] = std::move(record);
}

std::shared_ptr<Shim::CommRecord> Shim::erase(ncclComm_t comm) {
  std::lock_guard lock(mutex_);
  const auto it = comms_.find(comm);
  if (it == comms_.end()) return nullptr;
  auto record = std::move(it->second);
  comms_.erase(it);
  return record;
}

ncclResult_t Shim::fail(ncclResult_t code, std::string message) {
  logger_.warn("{}", message);
  thread_state().last_error = std::move(message);
  return code;
}

ncclResult_t Shim::report_exception(const char* api, const char* what, ncclResult_t code) {
  return fail(code, fmt::format("{}: {} (caught at the API boundary; the call did nothing more)",
                                api, what));
}

std::optional<ncclResult_t> Shim::refuse_unforwardable(const char* api) {
  if (config_.standalone) {
    return fail(ncclInvalidUsage,
                fmt::format("{} is not available in standalone mode (WEFT_STANDALONE=1): the shim "
                            "serves communicator set-up, queries, groups and collectives that "
                            "have a loaded algorithm, and forwards nothing",
                            api));
  }
  if (!nccl_.found) return fail(ncclSystemError, fmt::format("{}: {}", api, nccl_.error));
  return std::nullopt;
}

std::optional<ncclResult_t> Shim::refuse_without(const char* api, const void* function) {
  if (function != nullptr) return std::nullopt;
  return fail(ncclInternalError,
              fmt::format("{}: {} does not define p{}; it is older than the nccl.h the shim was "
                          "built with",
                          api, nccl_.origin, api));
}

void Shim::note_group_member_for_nccl(const char* api) {
  ThreadState& state = thread_state();
  if (state.group_depth > 0 && state.nccl_only_reason.empty()) {
    state.nccl_only_reason = fmt::format("the group contains {}, which only NCCL runs", api);
  }
}

// ---- Versions, ids, errors ----------------------------------------------------------------

ncclResult_t Shim::get_version(int* version) {
  if (config_.standalone) {
    if (version == nullptr) return fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
    *version = NCCL_VERSION_CODE;  // the API this shim implements
    return ncclSuccess;
  }
  return forward("ncclGetVersion", &NcclFunctions::GetVersion, version);
}

ncclResult_t Shim::get_unique_id(ncclUniqueId* id) {
  if (!config_.standalone) return forward("ncclGetUniqueId", &NcclFunctions::GetUniqueId, id);
  if (id == nullptr) return fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  // A fresh local socket name and the job's secret; WEFT_STANDALONE_ADDR replaces the name.
  auto fresh = gpu::make_local_rendezvous();
  if (!fresh.ok()) {
    return fail(ncclSystemError, fmt::format("ncclGetUniqueId: {}", fresh.status().str()));
  }
  StandaloneId standalone;
  standalone.address = config_.standalone_address.empty() ? gpu::to_string(fresh.value().address)
                                                          : config_.standalone_address;
  standalone.secret = fresh.value().secret;
  // Checked here, where the user can still fix it, not later on every rank.
  auto parsed = gpu::parse_socket_address(standalone.address);
  if (!parsed.ok()) {
    return fail(ncclInvalidArgument,
                fmt::format("ncclGetUniqueId: WEFT_STANDALONE_ADDR: {}", parsed.status().str()));
  }
  if (parsed.value().local_name.empty()) {
    logger_.warn(
        "ncclGetUniqueId: WEFT_STANDALONE_ADDR={} is a TCP rendezvous: the ranks still prove "
        "the job's secret, but rank 0 shows it to whoever connects first; without "
        "WEFT_STANDALONE_ADDR a local socket is used, which only this user's processes can reach",
        standalone.address);
    if (gpu::listens_on_every_interface(parsed.value())) {
      logger_.warn(
          "ncclGetUniqueId: WEFT_STANDALONE_ADDR={} listens on every interface, so "
          "other hosts can reach it; name 127.0.0.1 or one interface's address",
          standalone.address);
    }
  }
  const auto encoded = encode_standalone_id(standalone);
  if (!encoded) {
    return fail(ncclInvalidArgument,
                fmt::format("ncclGetUniqueId: WEFT_STANDALONE_ADDR '{}' does not fit in an id",
                            standalone.address));
  }
  static_assert(sizeof(ncclUniqueId) == kUniqueIdBytes);
  std::memcpy(id, encoded->data(), kUniqueIdBytes);
  logger_.info("ncclGetUniqueId: standalone rendezvous at {}", standalone.address);
  return ncclSuccess;
}

const char* Shim::get_error_string(ncclResult_t result) {
  if (!config_.standalone && nccl_.found && nccl_.functions.GetErrorString != nullptr) {
    return nccl_.functions.GetErrorString(result);
  }
  return own_error_string(result);
}

const char* Shim::get_last_error(ncclComm_t comm) {
  ThreadState& state = thread_state();
  if (!state.last_error.empty()) return state.last_error.c_str();
  if (!config_.standalone && nccl_.found && nccl_.functions.GetLastError != nullptr) {
    return nccl_.functions.GetLastError(comm);
  }
  return "";
}

void Shim::reset_debug_init() {
  if (!config_.standalone && nccl_.found && nccl_.functions.ResetDebugInit != nullptr) {
    nccl_.functions.ResetDebugInit();
  }
}

// ---- Communicators ---------------------------------------------------------------------------

ncclResult_t Shim::run_deferred(std::vector<std::function<ncclResult_t()>> tasks) {
  if (tasks.empty()) return ncclSuccess;
  if (tasks.size() == 1) return tasks.front()();
  std::vector<ncclResult_t> results(tasks.size(), ncclSuccess);
  std::vector<std::thread> threads;
  threads.reserve(tasks.size());
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    threads.emplace_back([&, k] { results[k] = tasks[k](); });
  }
  for (std::thread& thread : threads) thread.join();
  for (ncclResult_t result : results) {
    if (result != ncclSuccess) return result;
  }
  return ncclSuccess;
}

ncclResult_t Shim::complete_or_defer(std::function<ncclResult_t()> task) {
  ThreadState& state = thread_state();
  if (state.group_depth > 0) {
    // NCCL finishes communicators created inside a group at ncclGroupEnd; so do we.
    state.deferred.push_back(std::move(task));
    return ncclSuccess;
  }
  return task();
}

void Shim::attach_weft(CommRecord& record, std::shared_ptr<gpu::Bootstrap> bootstrap) {
  std::vector<const ir::Algorithm*> candidates;
  for (const CatalogEntry& entry : catalog_.entries) {
    if (entry.algorithm.ngpus == record.nranks) candidates.push_back(&entry.algorithm);
  }
  const std::string who = fmt::format("communicator {} rank {}/{}", fmt::ptr(record.handle),
                                      record.rank, record.nranks);
  if (candidates.empty()) {
    record.no_weft_reason = fmt::format("no loaded algorithm is for {} ranks", record.nranks);
    logger_.info("{}: {}; its collectives go to NCCL", who, record.no_weft_reason);
    return;
  }
  if (!bootstrap) {
    record.no_weft_reason = "the bootstrap for its Weft side could not be made";
    return;
  }
  auto side = backend_->create(bootstrap, record.nranks, record.rank, record.device);
  std::vector<std::uint8_t> created{static_cast<std::uint8_t>(side.ok() ? 1 : 0)};
  if (!side.ok()) logger_.warn("{}: Weft communicator not created: {}", who, side.status().str());
  agree(*bootstrap, created);
  if (created[0] == 0) {
    record.no_weft_reason = "the Weft communicator could not be created on every rank";
    logger_.warn("{}: {}; its collectives go to NCCL", who, record.no_weft_reason);
    return;
  }
  std::unique_ptr<WeftSide> weft = std::move(side).value();
  std::vector<int> handles(candidates.size(), -1);
  std::vector<std::uint8_t> loaded(candidates.size(), 0);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    auto handle = weft->load(*candidates[k]);
    if (handle.ok()) {
      handles[k] = handle.value();
      loaded[k] = 1;
    } else {
      logger_.warn("{}: algorithm '{}' ({}) not loaded: {}", who, candidates[k]->name,
                   candidates[k]->source, handle.status().str());
    }
  }
  agree(*bootstrap, loaded);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (loaded[k] == 0) continue;
    record.algorithms.push_back(candidates[k]);
    record.handles.push_back(handles[k]);
    logger_.info("{}: algorithm '{}' ({}) ready", who, candidates[k]->name, candidates[k]->source);
  }
  if (record.algorithms.empty()) {
    record.no_weft_reason =
        fmt::format("none of the {} algorithms for {} ranks loaded on every rank",
                    candidates.size(), record.nranks);
    return;
  }
  record.bootstrap = std::move(bootstrap);
  record.weft = std::move(weft);
}

ncclResult_t Shim::attach_forwarded(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;  // ncclCommSplit with NCCL_SPLIT_NOCOLOR
  const NcclFunctions& nccl = nccl_.functions;
  // A non-blocking communicator is usable once its asynchronous initialisation is over.
  if (nccl.CommGetAsyncError != nullptr) {
    ncclResult_t state = ncclInProgress;
    while (true) {
      const ncclResult_t query = nccl.CommGetAsyncError(comm, &state);
      if (query != ncclSuccess) return query;
      if (state != ncclInProgress) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (state != ncclSuccess) return state;
  }
  auto record = std::make_shared<CommRecord>();
  record->handle = comm;
  if (nccl.CommCount == nullptr || nccl.CommUserRank == nullptr || nccl.CommCuDevice == nullptr) {
    return fail(ncclInternalError,
                fmt::format("{} lacks ncclCommCount/UserRank/CuDevice", nccl_.origin));
  }
  if (auto r = nccl.CommCount(comm, &record->nranks); r != ncclSuccess) return r;
  if (auto r = nccl.CommUserRank(comm, &record->rank); r != ncclSuccess) return r;
  if (auto r = nccl.CommCuDevice(comm, &record->device); r != ncclSuccess) return r;
  const bool any_fits =
      std::any_of(catalog_.entries.begin(), catalog_.entries.end(),
                  [&](const CatalogEntry& e) { return e.algorithm.ngpus == record->nranks; });
  std::shared_ptr<gpu::Bootstrap> bootstrap;
  if (any_fits) {
    if (nccl.AllGather == nullptr) {
      return fail(ncclInternalError, fmt::format("{} lacks pncclAllGather", nccl_.origin));
    }
    auto made = backend_->nccl_bootstrap(comm, record->rank, record->nranks, record->device, nccl);
    if (made.ok()) {
      bootstrap = std::move(made).value();
    } else {
      // Every rank fails here alike (it involves no peer), so no rank is left waiting.
      logger_.warn("communicator {} rank {}: no Weft side: {}", fmt::ptr(comm), record->rank,
                   made.status().str());
    }
  }
  attach_weft(*record, std::move(bootstrap));
  insert(std::move(record));
  return ncclSuccess;
}

ncclResult_t Shim::create_standalone(ncclComm_t* comm, int nranks, int rank,
                                     std::shared_ptr<gpu::Bootstrap> bootstrap, int device) {
  auto record = std::make_shared<CommRecord>();
  record->standalone = true;
  record->rank = rank;
  record->nranks = nranks;
  record->device = device;
  // The record's address is the handle: unique while it lives, and never a real NCCL comm.
  record->handle = reinterpret_cast<ncclComm_t>(record.get());
  record->bootstrap = bootstrap;
  attach_weft(*record, std::move(bootstrap));
  if (!record->weft) {
    logger_.warn("standalone communicator rank {}/{}: {}; every collective on it will fail", rank,
                 nranks, record->no_weft_reason);
  }
  *comm = record->handle;
  insert(std::move(record));
  return ncclSuccess;
}

ncclResult_t Shim::comm_init_rank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                  ncclConfig_t* config, bool with_config) {
  const char* api = with_config ? "ncclCommInitRankConfig" : "ncclCommInitRank";
  thread_state().last_error.clear();
  if (!config_.standalone) {
    if (auto refused = refuse_unforwardable(api)) return *refused;
    const auto function = with_config
                              ? reinterpret_cast<const void*>(nccl_.functions.CommInitRankConfig)
                              : reinterpret_cast<const void*>(nccl_.functions.CommInitRank);
    if (auto refused = refuse_without(api, function)) return *refused;
    const ncclResult_t result =
        with_config ? nccl_.functions.CommInitRankConfig(comm, nranks, id, rank, config)
                    : nccl_.functions.CommInitRank(comm, nranks, id, rank);
    if ((result != ncclSuccess && result != ncclInProgress) || config_.disabled) return result;
    const ncclResult_t attached =
        complete_or_defer([this, comm] { return attach_forwarded(*comm); });
    return attached != ncclSuccess ? attached : result;
  }
  if (comm == nullptr) return fail(ncclInvalidArgument, fmt::format("{}: comm is NULL", api));
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return fail(ncclInvalidArgument,
                fmt::format("{}: rank {} is not in [0, {})", api, rank, nranks));
  }
  // Checked before anything is allocated per rank.
  if (nranks > gpu::kMaxSocketParticipants) {
    return fail(ncclInvalidArgument,
                fmt::format("{}: {} ranks, more than the {} a standalone rendezvous takes (one "
                            "host)",
                            api, nranks, gpu::kMaxSocketParticipants));
  }
  UniqueIdBytes bytes;
  std::memcpy(bytes.data(), &id, kUniqueIdBytes);
  const std::optional<StandaloneId> standalone = decode_standalone_id(bytes);
  if (!standalone) {
    return fail(ncclInvalidArgument,
                fmt::format("{}: the unique id was not made by ncclGetUniqueId in standalone mode "
                            "(WEFT_STANDALONE=1 must be set in every process, the one calling "
                            "ncclGetUniqueId included)",
                            api));
  }
  auto device = backend_->current_device();
  if (!device.ok()) {
    return fail(to_nccl_result(device.status().code),
                fmt::format("{}: no CUDA device: {}", api, device.status().str()));
  }
  const int dev = device.value();
  const std::string root = standalone->address;
  const gpu::RendezvousSecret secret = standalone->secret;
  return complete_or_defer([this, api, comm, nranks, rank, root, secret, dev]() -> ncclResult_t {
    auto parsed = gpu::parse_socket_address(root);
    if (!parsed.ok())
      return fail(ncclInvalidArgument, fmt::format("{}: {}", api, parsed.status().str()));
    gpu::SocketBootstrapOptions options;
    options.root = parsed.value();
    options.rank = rank;
    options.size = nranks;
    options.secret = secret;
    options.timeout = config_.rendezvous_timeout;
    options.on_dropped = [this](const std::string& why) { logger_.warn("{}", why); };
    logger_.info("{}: rank {}/{} meets its peers at {}", api, rank, nranks, root);
    auto bootstrap = gpu::make_socket_bootstrap(options);
    if (!bootstrap.ok()) {
      return fail(
          to_nccl_result(bootstrap.status().code),
          fmt::format("{}: rendezvous at {} failed: {}", api, root, bootstrap.status().str()));
    }
    return create_standalone(comm, nranks, rank,
                             std::shared_ptr<gpu::Bootstrap>(std::move(bootstrap).value()), dev);
  });
}

ncclResult_t Shim::comm_init_rank_scalable(ncclComm_t* comm, int nranks, int rank, int nids,
                                           ncclUniqueId* ids, ncclConfig_t* config) {
  const char* api = "ncclCommInitRankScalable";
  thread_state().last_error.clear();
  if (config_.standalone) {
    if (nids < 1 || ids == nullptr) {
      return fail(ncclInvalidArgument, fmt::format("{}: no unique id given", api));
    }
    return comm_init_rank(comm, nranks, ids[0], rank, config, true);
  }
  if (auto refused = refuse_unforwardable(api)) return *refused;
  if (auto refused = refuse_without(
          api, reinterpret_cast<const void*>(nccl_.functions.CommInitRankScalable))) {
    return *refused;
  }
  const ncclResult_t result =
      nccl_.functions.CommInitRankScalable(comm, nranks, rank, nids, ids, config);
  if ((result != ncclSuccess && result != ncclInProgress) || config_.disabled) return result;
  const ncclResult_t attached = complete_or_defer([this, comm] { return attach_forwarded(*comm); });
  return attached != ncclSuccess ? attached : result;
}

ncclResult_t Shim::comm_init_all(ncclComm_t* comms, int ndev, const int* devlist) {
  const char* api = "ncclCommInitAll";
  thread_state().last_error.clear();
  if (comms == nullptr || ndev < 1) {
    return fail(ncclInvalidArgument, fmt::format("{}: comm is NULL or ndev {} < 1", api, ndev));
  }
  std::vector<std::function<ncclResult_t()>> tasks;
  if (!config_.standalone) {
    if (auto refused = refuse_unforwardable(api)) return *refused;
    if (auto refused =
            refuse_without(api, reinterpret_cast<const void*>(nccl_.functions.CommInitAll))) {
      return *refused;
    }
    const ncclResult_t result = nccl_.functions.CommInitAll(comms, ndev, devlist);
    if (result != ncclSuccess || config_.disabled) return result;
    for (int k = 0; k < ndev; ++k)
      tasks.push_back([this, comms, k] { return attach_forwarded(comms[k]); });
    return run_deferred(std::move(tasks));
  }
  // Standalone: the ranks are threads of this process and meet in memory.
  auto rendezvous = gpu::InProcessRendezvous::create(ndev);
  for (int k = 0; k < ndev; ++k) {
    const int device = devlist != nullptr ? devlist[k] : k;
    tasks.push_back([this, api, rendezvous, comms, ndev, k, device]() -> ncclResult_t {
      auto bootstrap = rendezvous->join(k);
      if (!bootstrap.ok()) {
        return fail(to_nccl_result(bootstrap.status().code),
                    fmt::format("{}: rank {}: {}", api, k, bootstrap.status().str()));
      }
      return create_standalone(&comms[k], ndev, k,
                               std::shared_ptr<gpu::Bootstrap>(std::move(bootstrap).value()),
                               device);
    });
  }
  return run_deferred(std::move(tasks));
}

ncclResult_t Shim::comm_split(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                              ncclConfig_t* config) {
  const char* api = "ncclCommSplit";
  thread_state().last_error.clear();
  if (auto refused = refuse_unforwardable(api)) return *refused;
  if (auto refused = refuse_without(api, reinterpret_cast<const void*>(nccl_.functions.CommSplit)))
    return *refused;
  const ncclResult_t result = nccl_.functions.CommSplit(comm, color, key, newcomm, config);
  if ((result != ncclSuccess && result != ncclInProgress) || config_.disabled) return result;
  const ncclResult_t attached =
      complete_or_defer([this, newcomm] { return attach_forwarded(*newcomm); });
  return attached != ncclSuccess ? attached : result;
}

ncclResult_t Shim::comm_shrink(ncclComm_t comm, int* exclude, int nexclude, ncclComm_t* newcomm,
                               ncclConfig_t* config, int flags) {
  const char* api = "ncclCommShrink";
  thread_state().last_error.clear();
  if (auto refused = refuse_unforwardable(api)) return *refused;
  if (auto refused = refuse_without(api, reinterpret_cast<const void*>(nccl_.functions.CommShrink)))
    return *refused;
  const ncclResult_t result =
      nccl_.functions.CommShrink(comm, exclude, nexclude, newcomm, config, flags);
  if ((result != ncclSuccess && result != ncclInProgress) || config_.disabled) return result;
  const ncclResult_t attached =
      complete_or_defer([this, newcomm] { return attach_forwarded(*newcomm); });
  return attached != ncclSuccess ? attached : result;
}

ncclResult_t Shim::comm_finalize(ncclComm_t comm) {
  if (config_.standalone) {
    if (!find(comm)) return fail(ncclInvalidArgument, "ncclCommFinalize: unknown communicator");
    return ncclSuccess;  // nothing is in flight that the stream does not already order
  }
  return forward("ncclCommFinalize", &NcclFunctions::CommFinalize, comm);
}

ncclResult_t Shim::comm_destroy(ncclComm_t comm) {
  // The Weft side goes first: it waits for its kernels, which may still use NCCL's memory.
  auto record = erase(comm);
  if (record) record->weft.reset();
  if (config_.standalone) {
    if (!record && comm != nullptr) {
      return fail(ncclInvalidArgument, "ncclCommDestroy: unknown communicator");
    }
    return ncclSuccess;
  }
  return forward("ncclCommDestroy", &NcclFunctions::CommDestroy, comm);
}

ncclResult_t Shim::comm_abort(ncclComm_t comm) {
  auto record = erase(comm);
  if (record) record->weft.reset();
  if (config_.standalone) {
    if (!record && comm != nullptr)
      return fail(ncclInvalidArgument, "ncclCommAbort: unknown communicator");
    return ncclSuccess;
  }
  return forward("ncclCommAbort", &NcclFunctions::CommAbort, comm);
}

ncclResult_t Shim::comm_count(ncclComm_t comm, int* count) {
  if (!config_.standalone) return forward("ncclCommCount", &NcclFunctions::CommCount, comm, count);
  auto record = find(comm);
  if (!record || count == nullptr)
    return fail(ncclInvalidArgument, "ncclCommCount: unknown communicator or NULL count");
  *count = record->nranks;
  return ncclSuccess;
}

ncclResult_t Shim::comm_cu_device(ncclComm_t comm, int* device) {
  if (!config_.standalone)
    return forward("ncclCommCuDevice", &NcclFunctions::CommCuDevice, comm, device);
  auto record = find(comm);
  if (!record || device == nullptr)
    return fail(ncclInvalidArgument, "ncclCommCuDevice: unknown communicator or NULL device");
  *device = record->device;
  return ncclSuccess;
}

ncclResult_t Shim::comm_user_rank(ncclComm_t comm, int* rank) {
  if (!config_.standalone)
    return forward("ncclCommUserRank", &NcclFunctions::CommUserRank, comm, rank);
  auto record = find(comm);
  if (!record || rank == nullptr)
    return fail(ncclInvalidArgument, "ncclCommUserRank: unknown communicator or NULL rank");
  *rank = record->rank;
  return ncclSuccess;
}

ncclResult_t Shim::comm_get_async_error(ncclComm_t comm, ncclResult_t* error) {
  auto record = find(comm);
  if (config_.standalone) {
    if (!record || error == nullptr)
      return fail(ncclInvalidArgument,
                  "ncclCommGetAsyncError: unknown communicator or NULL asyncError");
    *error = ncclSuccess;
  } else {
    const ncclResult_t result =
        forward("ncclCommGetAsyncError", &NcclFunctions::CommGetAsyncError, comm, error);
    if (result != ncclSuccess || error == nullptr || *error != ncclSuccess) return result;
  }
  if (record && record->weft) {
    const gpu::Status status = record->weft->async_error();
    if (!status.ok()) {
      *error = to_nccl_result(status.code);
      thread_state().last_error = status.str();
      logger_.warn("communicator {} rank {}: {}", fmt::ptr(comm), record->rank, status.str());
    }
  }
  return ncclSuccess;
}

// ---- Collectives and groups -------------------------------------------------------------

ncclResult_t Shim::run_on_weft(const char* api, CommRecord& record, const CollectiveCall& call,
                               const Selection& selection, cudaStream_t stream) {
  const auto index = static_cast<std::size_t>(selection.index);
  const ir::Algorithm& algo = *record.algorithms[index];
  logger_.info("{}: {} on {} ranks -> Weft '{}' ({})", api, describe(call), call.nranks, algo.name,
               algo.source);
  for (const std::string& rejection : selection.rejections) {
    logger_.trace("{}:   passed over {}", api, rejection);
  }
  const gpu::Status status = record.weft->run(record.handles[index], call, stream);
  if (!status.ok()) {
    // No fallback to NCCL here: the other ranks are running the Weft algorithm and wait for us.
    return fail(to_nccl_result(status.code),
                fmt::format("{}: Weft algorithm '{}' failed: {}", api, algo.name, status.str()));
  }
  return ncclSuccess;
}

ncclResult_t Shim::collective(const char* api, CollectiveCall call, ncclComm_t comm,
                              cudaStream_t stream, Replay replay) {
  if (config_.disabled) {
    if (auto refused = refuse_unforwardable(api)) return *refused;
    return replay(nccl_.functions);
  }
  ThreadState& state = thread_state();
  if (state.group_depth == 0) state.last_error.clear();
  auto record = find(comm);
  Selection selection;
  if (record) {
    call.rank = record->rank;
    call.nranks = record->nranks;
    if (record->weft) {
      const WeftSide& side = *record->weft;
      const std::vector<int>& handles = record->handles;
      selection = select_algorithm(record->algorithms, call,
                                   [&](std::size_t k, const gpu::CallShape& shape) {
                                     return side.applies(handles[k], shape);
                                   });
    } else {
      selection.reason = record->no_weft_reason;
    }
  } else {
    selection.reason = "the communicator was not created through the shim";
  }
  if (state.group_depth > 0) {
    logger_.trace("{}: {} recorded in the group", api, describe(call));
    state.collectives.push_back(
        {api, call, stream, std::move(replay), record, std::move(selection)});
    return ncclSuccess;
  }
  if (selection.found()) return run_on_weft(api, *record, call, selection, stream);
  if (config_.standalone) {
    if (!record) return fail(ncclInvalidArgument, fmt::format("{}: unknown communicator", api));
    return fail(ncclInvalidUsage,
                fmt::format("{}: {} on {} ranks has no Weft algorithm ({}); standalone mode has "
                            "no NCCL to fall back to",
                            api, describe(call), call.nranks, selection.reason));
  }
  logger_.info("{}: {} on {} ranks -> NCCL: {}", api, describe(call), call.nranks,
               selection.reason);
  for (const std::string& rejection : selection.rejections) {
    logger_.trace("{}:   {}", api, rejection);
  }
  if (auto refused = refuse_unforwardable(api)) return *refused;
  return replay(nccl_.functions);
}

ncclResult_t Shim::group_start() {
  if (config_.disabled) return forward("ncclGroupStart", &NcclFunctions::GroupStart);
  ThreadState& state = thread_state();
  if (state.group_depth == 0) state.last_error.clear();
  if (!config_.standalone) {
    if (auto refused = refuse_unforwardable("ncclGroupStart")) return *refused;
    // The real group opens now, so that whatever is forwarded inside it (sends, receives,
    // communicator creation) has NCCL's group meaning.
    const ncclResult_t result = nccl_.functions.GroupStart();
    if (result != ncclSuccess) return result;
  }
  ++state.group_depth;
  return ncclSuccess;
}

ncclResult_t Shim::group_end() {
  if (config_.disabled) return forward("ncclGroupEnd", &NcclFunctions::GroupEnd);
  ThreadState& state = thread_state();
  if (state.group_depth == 0) {
    if (config_.standalone) return fail(ncclInvalidUsage, "ncclGroupEnd: no group is open");
    return forward("ncclGroupEnd", &NcclFunctions::GroupEnd);  // NCCL reports it its own way
  }
  if (--state.group_depth > 0) {
    if (config_.standalone) return ncclSuccess;
    return nccl_.functions.GroupEnd();
  }
  std::vector<PendingCollective> pending = std::move(state.collectives);
  std::string nccl_only = std::move(state.nccl_only_reason);
  std::vector<std::function<ncclResult_t()>> deferred = std::move(state.deferred);
  state.collectives.clear();
  state.nccl_only_reason.clear();
  state.deferred.clear();

  std::vector<Selection> selections;
  for (const PendingCollective& p : pending) selections.push_back(p.selection);
  ncclResult_t result = ncclSuccess;
  if (nccl_only.empty() && group_runs_on_weft(selections)) {
    logger_.info("ncclGroupEnd: all {} collective{} of the group -> Weft", pending.size(),
                 pending.size() == 1 ? "" : "s");
    for (const PendingCollective& p : pending) {
      const ncclResult_t r = run_on_weft(p.api, *p.record, p.call, p.selection, p.stream);
      if (result == ncclSuccess) result = r;
    }
  } else if (!pending.empty()) {
    std::string why = nccl_only;
    if (why.empty()) {
      for (const PendingCollective& p : pending) {
        if (!p.selection.found()) {
          why = fmt::format("{} ({}) has no Weft algorithm: {}", p.api, describe(p.call),
                            p.selection.reason);
          break;
        }
      }
    }
    if (config_.standalone) {
      result = fail(ncclInvalidUsage,
                    fmt::format("ncclGroupEnd: the group's {} collectives cannot run: {}; "
                                "standalone mode has no NCCL to fall back to",
                                pending.size(), why));
    } else {
      logger_.info("ncclGroupEnd: all {} collective{} of the group -> NCCL: {}", pending.size(),
                   pending.size() == 1 ? "" : "s", why);
      for (const PendingCollective& p : pending) {
        const ncclResult_t r = p.replay(nccl_.functions);
        if (result == ncclSuccess) result = r;
      }
    }
  }
  if (!config_.standalone) {
    const ncclResult_t r = nccl_.functions.GroupEnd();
    if (result == ncclSuccess) result = r;
  }
  const ncclResult_t completed = run_deferred(std::move(deferred));
  return result != ncclSuccess ? result : completed;
}

ncclResult_t Shim::group_simulate_end(ncclSimInfo_t* info) {
  const char* api = "ncclGroupSimulateEnd";
  if (auto refused = refuse_unforwardable(api)) return *refused;
  if (auto refused =
          refuse_without(api, reinterpret_cast<const void*>(nccl_.functions.GroupSimulateEnd)))
    return *refused;
  ThreadState& state = thread_state();
  if (config_.disabled || state.group_depth == 0) return nccl_.functions.GroupSimulateEnd(info);
  if (--state.group_depth > 0) return nccl_.functions.GroupSimulateEnd(info);
  // NCCL's estimate is for NCCL running the group, so the group's collectives go to it.
  std::vector<PendingCollective> pending = std::move(state.collectives);
  std::vector<std::function<ncclResult_t()>> deferred = std::move(state.deferred);
  state.collectives.clear();
  state.deferred.clear();
  state.nccl_only_reason.clear();
  ncclResult_t result = ncclSuccess;
  for (const PendingCollective& p : pending) {
    const ncclResult_t r = p.replay(nccl_.functions);
    if (result == ncclSuccess) result = r;
  }
  const ncclResult_t r = nccl_.functions.GroupSimulateEnd(info);
  if (result == ncclSuccess) result = r;
  const ncclResult_t completed = run_deferred(std::move(deferred));
  return result != ncclSuccess ? result : completed;
}

}  // namespace weft::plugin
