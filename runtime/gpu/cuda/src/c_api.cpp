// The C API (weft/weft.h) over weft::gpu::Communicator.
#include "weft/weft.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "weft/communicator/bootstrap.h"
#include "weft/communicator/communicator.h"
#include "weft/cuda/cuda_network.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"
#include "weft/proxy/participants.h"

struct weftComm {
  std::unique_ptr<weft::gpu::Communicator> communicator;
  std::string last_error;
};

namespace {

using weft::gpu::ErrorCode;
using weft::gpu::Status;

static_assert(static_cast<int>(ErrorCode::Mismatch) == weftMismatch);
static_assert(static_cast<int>(ErrorCode::Timeout) == weftTimeout);
static_assert(static_cast<int>(weft::DataType::Bfloat16) == weftBfloat16);
static_assert(static_cast<int>(weft::ReduceOp::Avg) == weftAvg);
static_assert(static_cast<int>(weft::ir::Collective::Custom) == weftCustom);

weftResult_t finish(weftComm* comm, const Status& status) {
  if (comm != nullptr) comm->last_error = status.ok() ? std::string() : status.str();
  return static_cast<weftResult_t>(status.code);
}

weftResult_t finish_init(const weftCommConfig_t* config, const Status& status) {
  if (config != nullptr && config->errorBuffer != nullptr && config->errorBufferSize > 0) {
    const std::string text = status.str();
    const std::size_t n = std::min(text.size(), config->errorBufferSize - 1);
    std::memcpy(config->errorBuffer, text.data(), n);
    config->errorBuffer[n] = '\0';
  }
  return static_cast<weftResult_t>(status.code);
}

// WEFT_DEBUG as the NCCL shim reads it: WARN, INFO or TRACE (any case) log warnings.
bool warnings_enabled() {
  const char* value = std::getenv("WEFT_DEBUG");
  if (value == nullptr) return false;
  std::string level(value);
  for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return level == "WARN" || level == "INFO" || level == "TRACE";
}

struct ConfigValues {
  int device = -1;
  weft::gpu::RuntimeOptions options;
  std::chrono::milliseconds bootstrap_timeout = std::chrono::seconds(60);
  std::string host;
};

// CUDA IPC within this host, the proxy to the others.
weft::gpu::Result<std::shared_ptr<weft::gpu::Transport>> make_transport(
    std::shared_ptr<weft::gpu::Bootstrap> bootstrap, int nranks, int rank,
    const ConfigValues& values);

weft::gpu::Result<ConfigValues> read_config(const weftCommConfig_t* config) {
  ConfigValues values;
  auto options = weft::gpu::runtime_options_from_env(weft::gpu::process_environment());
  if (!options.ok()) return options.status();
  values.options = options.value();
  if (config != nullptr) {
    if (config->size < offsetof(weftCommConfig_t, errorBufferSize) + sizeof(size_t)) {
      return Status::error(ErrorCode::InvalidArgument,
                           "weftCommConfig_t.size is too small; initialise the config with "
                           "WEFT_COMM_CONFIG_INITIALIZER");
    }
    values.device = config->device;
    if (config->timeoutSeconds > 0) values.options.timeout_s = config->timeoutSeconds;
  }
  // WEFT_HOSTID names this process's host (else the hostname): ranks on other hosts are reached
  // through the proxy (docs/architecture.md §6).
  auto host = weft::proxy::host_id(weft::gpu::process_environment());
  if (!host.ok()) return host.status();
  values.host = host.value();
  auto bootstrap_timeout = weft::gpu::bootstrap_timeout_from_env(weft::gpu::process_environment());
  if (!bootstrap_timeout.ok()) return bootstrap_timeout.status();
  if (bootstrap_timeout.value()) values.bootstrap_timeout = *bootstrap_timeout.value();
  // A config from before the field: its size stops short of it.
  if (config != nullptr &&
      config->size >= offsetof(weftCommConfig_t, bootstrapTimeoutSeconds) + sizeof(double) &&
      config->bootstrapTimeoutSeconds > 0) {
    if (!(config->bootstrapTimeoutSeconds <= 86400)) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("weftCommConfig_t.bootstrapTimeoutSeconds = {} is more "
                                       "than a day (86400 s)",
                                       config->bootstrapTimeoutSeconds));
    }
    values.bootstrap_timeout = std::chrono::milliseconds(
        static_cast<std::int64_t>(config->bootstrapTimeoutSeconds * 1000.0));
  }
  return values;
}

weft::gpu::Result<std::shared_ptr<weft::gpu::Transport>> make_transport(
    std::shared_ptr<weft::gpu::Bootstrap> bootstrap, int nranks, int rank,
    const ConfigValues& values) {
  weft::gpu::CudaNetworkOptions network;
  network.proxy = weft::proxy::proxy_options_from_env(weft::gpu::process_environment());
  network.host = values.host;
  network.proxy.setup_timeout = values.bootstrap_timeout;
  return weft::gpu::make_ipc_network_transport(std::move(bootstrap), nranks, {rank}, values.device,
                                               network);
}

weftResult_t create(weftComm_t* comm, const weftCommConfig_t* config,
                    weft::gpu::Result<std::shared_ptr<weft::gpu::Transport>> transport,
                    const weft::gpu::RuntimeOptions& options) {
  if (!transport.ok()) return finish_init(config, transport.status());
  auto communicator = weft::gpu::Communicator::create(std::move(transport.value()), options);
  if (!communicator.ok()) return finish_init(config, communicator.status());
  auto* created = new weftComm;
  created->communicator = std::move(communicator.value());
  *comm = created;
  return finish_init(config, Status::success());
}

// A weftBootstrap_t as a weft::gpu::Bootstrap.
class CallbackBootstrap final : public weft::gpu::Bootstrap {
 public:
  explicit CallbackBootstrap(const weftBootstrap_t& callbacks) : callbacks_(callbacks) {}
  int rank() const override { return callbacks_.rank; }
  int size() const override { return callbacks_.size; }
  Status allgather(std::span<std::byte> data, std::size_t bytes_per_rank) override {
    if (callbacks_.allgather(callbacks_.context, data.data(), bytes_per_rank) != 0) {
      return Status::error(ErrorCode::SystemError, "the caller's bootstrap allgather failed");
    }
    return {};
  }

 private:
  weftBootstrap_t callbacks_;
};

// No exception crosses the C ABI: each function's body runs through guarded(), which turns
// anything thrown (memory exhaustion included) into a result code and a message (the
// communicator's last error, or the config's error buffer for the init functions).
void note_exception(const char* api, const char* what, weftComm* comm,
                    const weftCommConfig_t* config) noexcept {
  try {
    const Status status = Status::error(
        ErrorCode::InternalError,
        fmt::format("{}: {} (caught at the API boundary; the call did nothing more)", api, what));
    if (comm != nullptr) comm->last_error = status.str();
    finish_init(config, status);
  } catch (...) {
    // Not even the message could be made: the code alone says it.
  }
}

template <class Body>
weftResult_t guarded(const char* api, weftComm* comm, const weftCommConfig_t* config,
                     Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    note_exception(api, "out of memory", comm, config);
    return weftSystemError;
  } catch (const std::exception& e) {
    note_exception(api, e.what(), comm, config);
    return weftInternalError;
  } catch (...) {
    note_exception(api, "an exception of unknown type", comm, config);
    return weftInternalError;
  }
}

Status bad_comm() {
  return Status::error(ErrorCode::InvalidArgument, "communicator is NULL");
}

}  // namespace

extern "C" {

weftResult_t weftMakeRendezvous(char* out, size_t capacity) {
  return guarded("weftMakeRendezvous", nullptr, nullptr, [&]() -> weftResult_t {
    if (out == nullptr) return weftInvalidArgument;
    auto fresh = weft::gpu::make_local_rendezvous();
    if (!fresh.ok()) return static_cast<weftResult_t>(fresh.status().code);
    const std::string text =
        weft::gpu::format_rendezvous(fresh.value().address, fresh.value().secret);
    if (text.size() + 1 > capacity) return weftInvalidArgument;
    std::memcpy(out, text.c_str(), text.size() + 1);
    return weftSuccess;
  });
}

weftResult_t weftGetVersion(int* version) {
  if (version == nullptr) return weftInvalidArgument;
  *version = WEFT_VERSION_CODE;
  return weftSuccess;
}

const char* weftGetErrorString(weftResult_t result) {
  switch (result) {
    case weftSuccess:
      return "weftSuccess: no error";
    case weftInvalidArgument:
      return "weftInvalidArgument: a pointer, count, type, operator, rank or option is invalid";
    case weftInvalidAlgorithm:
      return "weftInvalidAlgorithm: the algorithm failed to read or validate";
    case weftNotApplicable:
      return "weftNotApplicable: the algorithm does not apply to this call";
    case weftCudaError:
      return "weftCudaError: a CUDA runtime call failed";
    case weftSystemError:
      return "weftSystemError: a socket, file or bootstrap peer failed";
    case weftTimeout:
      return "weftTimeout: a wait inside the kernel timed out";
    case weftNotResident:
      return "weftNotResident: the device cannot hold all threadblocks at once";
    case weftInvalidUsage:
      return "weftInvalidUsage: the call is not allowed in this state";
    case weftInternalError:
      return "weftInternalError: a bug in Weft";
    case weftMismatch:
      return "weftMismatch: participants disagree";
    case weftNumResults:
      break;
  }
  return "unknown weftResult_t";
}

const char* weftGetLastError(weftComm_t comm) {
  return comm == nullptr ? "communicator is NULL" : comm->last_error.c_str();
}

weftResult_t weftCommInitEmulated(weftComm_t* comm, int nranks, const weftCommConfig_t* config) {
  return guarded("weftCommInitEmulated", nullptr, config, [&]() -> weftResult_t {
    if (comm == nullptr)
      return finish_init(config, Status::error(ErrorCode::InvalidArgument, "comm is NULL"));
    *comm = nullptr;
    auto values = read_config(config);
    if (!values.ok()) return finish_init(config, values.status());
    return create(comm, config, weft::gpu::make_emulation_transport(nranks, values.value().device),
                  values.value().options);
  });
}

weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, int rank, const char* rendezvous,
                              const weftCommConfig_t* config) {
  return guarded("weftCommInitRank", nullptr, config, [&]() -> weftResult_t {
    if (comm == nullptr || rendezvous == nullptr) {
      return finish_init(config,
                         Status::error(ErrorCode::InvalidArgument, "comm or rendezvous is NULL"));
    }
    *comm = nullptr;
    auto values = read_config(config);
    if (!values.ok()) return finish_init(config, values.status());
    auto target = weft::gpu::parse_rendezvous(rendezvous);
    if (!target.ok()) return finish_init(config, target.status());
    weft::gpu::SocketBootstrapOptions options;
    options.root = target.value().address;
    options.secret = target.value().secret;
    options.rank = rank;
    options.size = nranks;
    options.timeout = values.value().bootstrap_timeout;
    // As the shim logs them: a connection rank 0 dropped, at WEFT_DEBUG=WARN and above.
    if (warnings_enabled()) {
      options.on_dropped = [](const std::string& why) {
        std::fprintf(stderr, "%s\n", fmt::format("WEFT WARN weftCommInitRank: {}", why).c_str());
      };
    }
    auto bootstrap = weft::gpu::make_socket_bootstrap(options);
    if (!bootstrap.ok()) return finish_init(config, bootstrap.status());
    std::shared_ptr<weft::gpu::Bootstrap> shared = std::move(bootstrap.value());
    return create(comm, config, make_transport(shared, nranks, rank, values.value()),
                  values.value().options);
  });
}

weftResult_t weftCommInitWithBootstrap(weftComm_t* comm, int nranks, int rank,
                                       const weftBootstrap_t* bootstrap,
                                       const weftCommConfig_t* config) {
  return guarded("weftCommInitWithBootstrap", nullptr, config, [&]() -> weftResult_t {
    if (comm == nullptr || bootstrap == nullptr || bootstrap->allgather == nullptr) {
      return finish_init(config, Status::error(ErrorCode::InvalidArgument,
                                               "comm, bootstrap or its allgather is NULL"));
    }
    *comm = nullptr;
    if (bootstrap->rank != rank || bootstrap->size != nranks) {
      return finish_init(
          config, Status::error(ErrorCode::InvalidArgument,
                                fmt::format("the bootstrap is rank {} of {}, the call "
                                            "rank {} of {}",
                                            bootstrap->rank, bootstrap->size, rank, nranks)));
    }
    auto values = read_config(config);
    if (!values.ok()) return finish_init(config, values.status());
    auto shared = std::make_shared<CallbackBootstrap>(*bootstrap);
    return create(comm, config, make_transport(shared, nranks, rank, values.value()),
                  values.value().options);
  });
}

weftResult_t weftCommDestroy(weftComm_t comm) {
  return guarded("weftCommDestroy", comm, nullptr, [&]() -> weftResult_t {
    delete comm;
    return weftSuccess;
  });
}

weftResult_t weftCommCount(weftComm_t comm, int* nranks) {
  return guarded("weftCommCount", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    if (nranks == nullptr)
      return finish(comm, Status::error(ErrorCode::InvalidArgument, "nranks is NULL"));
    *nranks = comm->communicator->nranks();
    return finish(comm, Status::success());
  });
}

weftResult_t weftCommLocalRanks(weftComm_t comm, int* count, int* ranks, int capacity) {
  return guarded("weftCommLocalRanks", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    if (count == nullptr)
      return finish(comm, Status::error(ErrorCode::InvalidArgument, "count is NULL"));
    const auto local = comm->communicator->local_ranks();
    *count = static_cast<int>(local.size());
    if (ranks != nullptr) {
      for (int k = 0; k < std::min(capacity, *count); ++k)
        ranks[k] = local[static_cast<std::size_t>(k)];
    }
    return finish(comm, Status::success());
  });
}

weftResult_t weftLoadAlgo(weftComm_t comm, const char* xmlPath, weftAlgoHandle_t* handle) {
  return guarded("weftLoadAlgo", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    if (xmlPath == nullptr || handle == nullptr) {
      return finish(comm, Status::error(ErrorCode::InvalidArgument, "xmlPath or handle is NULL"));
    }
    auto loaded = comm->communicator->load(std::string(xmlPath));
    if (!loaded.ok()) return finish(comm, loaded.status());
    *handle = loaded.value().id;
    return finish(comm, Status::success());
  });
}

weftResult_t weftLoadAlgoFromString(weftComm_t comm, const char* xmlText,
                                    weftAlgoHandle_t* handle) {
  return guarded("weftLoadAlgoFromString", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    if (xmlText == nullptr || handle == nullptr) {
      return finish(comm, Status::error(ErrorCode::InvalidArgument, "xmlText or handle is NULL"));
    }
    weft::ir::LoadResult read =
        weft::ir::load_xml_string(xmlText, weft::ir::weft_limits(), "<string>");
    if (!read.ok()) {
      return finish(comm, Status::error(ErrorCode::InvalidAlgorithm,
                                        "the XML text failed to load:\n" + read.diagnostics.str()));
    }
    auto loaded = comm->communicator->load(*read.algorithm);
    if (!loaded.ok()) return finish(comm, loaded.status());
    *handle = loaded.value().id;
    return finish(comm, Status::success());
  });
}

weftResult_t weftUnloadAlgo(weftComm_t comm, weftAlgoHandle_t handle) {
  return guarded("weftUnloadAlgo", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    return finish(comm, comm->communicator->unload({handle}));
  });
}

weftResult_t weftAlgoApplies(weftComm_t comm, weftAlgoHandle_t handle, weftCollective_t coll,
                             size_t count, weftDataType_t datatype, weftRedOp_t op, int inPlace,
                             int root, int* applies) {
  return guarded("weftAlgoApplies", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    if (applies == nullptr)
      return finish(comm, Status::error(ErrorCode::InvalidArgument, "applies is NULL"));
    if (coll < weftAllReduce || coll > weftCustom || datatype < weftInt8 ||
        datatype > weftBfloat16 || op < weftSum || op > weftAvg) {
      return finish(comm, Status::error(ErrorCode::InvalidArgument,
                                        "collective, data type or operator out of range"));
    }
    weft::gpu::CallShape shape;
    shape.collective = static_cast<weft::ir::Collective>(coll);
    shape.nranks = comm->communicator->nranks();
    shape.count = count;
    shape.dtype = static_cast<weft::DataType>(datatype);
    shape.op = static_cast<weft::ReduceOp>(op);
    shape.in_place = inPlace != 0;
    shape.root = root;
    const weft::gpu::Applicability a = comm->communicator->applies({handle}, shape);
    *applies = a.applies ? 1 : 0;
    comm->last_error = a.reason;
    return weftSuccess;
  });
}

static weftResult_t run_checked(weftComm_t comm, weftAlgoHandle_t handle,
                                std::span<const weft::gpu::RankBuffers> calls, size_t count,
                                weftDataType_t datatype, weftRedOp_t op, int root,
                                weftStream_t stream) {
  if (datatype < weftInt8 || datatype > weftBfloat16 || op < weftSum || op > weftAvg) {
    return finish(comm,
                  Status::error(ErrorCode::InvalidArgument, "data type or operator out of range"));
  }
  return finish(
      comm, comm->communicator->run({handle}, calls, count, static_cast<weft::DataType>(datatype),
                                    static_cast<weft::ReduceOp>(op), root, stream));
}

weftResult_t weftRunAlgo(weftComm_t comm, weftAlgoHandle_t handle, const void* sendbuff,
                         void* recvbuff, size_t count, weftDataType_t datatype, weftRedOp_t op,
                         int root, weftStream_t stream) {
  return guarded("weftRunAlgo", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    const weft::gpu::RankBuffers call{sendbuff, recvbuff};
    return run_checked(comm, handle, std::span(&call, 1), count, datatype, op, root, stream);
  });
}

weftResult_t weftRunAlgoEmulated(weftComm_t comm, weftAlgoHandle_t handle,
                                 const void* const* sendbuffs, void* const* recvbuffs, size_t count,
                                 weftDataType_t datatype, weftRedOp_t op, int root,
                                 weftStream_t stream) {
  return guarded("weftRunAlgoEmulated", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    if (sendbuffs == nullptr || recvbuffs == nullptr) {
      return finish(comm, Status::error(ErrorCode::InvalidArgument, "buffer arrays are NULL"));
    }
    std::vector<weft::gpu::RankBuffers> calls(comm->communicator->local_ranks().size());
    for (std::size_t k = 0; k < calls.size(); ++k) calls[k] = {sendbuffs[k], recvbuffs[k]};
    return run_checked(comm, handle, calls, count, datatype, op, root, stream);
  });
}

weftResult_t weftReserveScratch(weftComm_t comm, weftAlgoHandle_t handle, size_t maxCount,
                                weftDataType_t datatype) {
  return guarded("weftReserveScratch", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    if (datatype < weftInt8 || datatype > weftBfloat16) {
      return finish(comm, Status::error(ErrorCode::InvalidArgument, "data type out of range"));
    }
    return finish(comm, comm->communicator->reserve_scratch({handle}, maxCount,
                                                            static_cast<weft::DataType>(datatype)));
  });
}

weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError) {
  return guarded("weftCommGetAsyncError", comm, nullptr, [&]() -> weftResult_t {
    if (comm == nullptr) return finish(nullptr, bad_comm());
    if (asyncError == nullptr) {
      return finish(comm, Status::error(ErrorCode::InvalidArgument, "asyncError is NULL"));
    }
    const Status status = comm->communicator->async_error();
    *asyncError = static_cast<weftResult_t>(status.code);
    if (!status.ok()) comm->last_error = status.str();
    return weftSuccess;
  });
}

}  // extern "C"
