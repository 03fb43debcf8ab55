// The communicator calls of NCCL's API: creation (forwarded to NCCL and then given a Weft side,
// or in standalone mode made by Weft alone), destruction, and the queries standalone mode
// answers itself.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "shim.h"
#include "shim_records.h"
#include "weft/plugin/standalone_id.h"

namespace weft::plugin {

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
  bool joined_before = false;
  {
    const std::lock_guard lock(mutex_);  // not held across fail(), which takes it too
    const std::pair<gpu::RendezvousSecret, int> use{secret, rank};
    joined_before = std::find(joined_ids_.begin(), joined_ids_.end(), use) != joined_ids_.end();
    if (!joined_before) joined_ids_.push_back(use);
  }
  if (joined_before) {
    return fail(ncclInvalidUsage,
                fmt::format("{}: rank {} already joined a communicator with this unique id; an id "
                            "serves one communicator: make a fresh one with ncclGetUniqueId",
                            api, rank));
  }
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

}  // namespace weft::plugin
