// The NCCL API as the application sees it: every function of nccl.h 2.28, each a thin entry
// into the process's Shim. Functions the shim has no business with go to the real NCCL
// unchanged (Shim::forward); the exported set is fixed by exports.map.

// The library is built with hidden visibility; the API keeps default visibility through its
// declarations, which must therefore be seen first, here.
#pragma GCC visibility push(default)
#include <nccl.h>
#pragma GCC visibility pop

#include <cstdio>
#include <utility>

#include "api_guard.h"
#include "shim.h"

using weft::plugin::CollectiveCall;

using weft::plugin::NcclFunctions;
using weft::plugin::Shim;
namespace ir = weft::ir;

namespace {

Shim& shim() {
  return Shim::process();
}

CollectiveCall make_call(ir::Collective collective, const void* sendbuf, void* recvbuf,
                         size_t count, ncclDataType_t datatype, int op, int root) {
  CollectiveCall call;
  call.collective = collective;
  call.sendbuf = sendbuf;
  call.recvbuf = recvbuf;
  call.count = count;
  call.nccl_datatype = static_cast<int>(datatype);
  call.nccl_op = op;
  call.root = root;
  return call;
}

// Reports an exception that reached the API (api_guard.h) through the shim, which logs it and
// keeps it for ncclGetLastError; when even that fails (no memory, or the shim itself could not
// be made), one line to stderr.
ncclResult_t report_escaped_exception(const char* api, const char* what,
                                      ncclResult_t code) noexcept {
  try {
    return shim().report_exception(api, what, code);
  } catch (...) {
    std::fprintf(stderr, "WEFT WARN %s: %s (caught at the API boundary)\n", api, what);
    return code;
  }
}

template <class Body>
ncclResult_t guarded(const char* api, Body&& body) noexcept {
  return weft::plugin::guarded(api, std::forward<Body>(body), report_escaped_exception);
}

}  // namespace

extern "C" {

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return guarded("ncclMemAlloc", [&] {
    return shim().forward("ncclMemAlloc", &NcclFunctions::MemAlloc, ptr, size);
  });
}
ncclResult_t ncclMemFree(void* ptr) {
  return guarded("ncclMemFree",
                 [&] { return shim().forward("ncclMemFree", &NcclFunctions::MemFree, ptr); });
}
ncclResult_t ncclGetVersion(int* version) {
  return guarded("ncclGetVersion", [&] { return shim().get_version(version); });
}
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return guarded("ncclGetUniqueId", [&] { return shim().get_unique_id(uniqueId); });
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  return guarded("ncclCommInitRankConfig",
                 [&] { return shim().comm_init_rank(comm, nranks, commId, rank, config, true); });
}
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return guarded("ncclCommInitRank",
                 [&] { return shim().comm_init_rank(comm, nranks, commId, rank, nullptr, false); });
}
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return guarded("ncclCommInitAll", [&] { return shim().comm_init_all(comm, ndev, devlist); });
}
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return guarded("ncclCommFinalize", [&] { return shim().comm_finalize(comm); });
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return guarded("ncclCommDestroy", [&] { return shim().comm_destroy(comm); });
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return guarded("ncclCommAbort", [&] { return shim().comm_abort(comm); });
}
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return guarded("ncclCommRevoke", [&] {
    return shim().forward("ncclCommRevoke", &NcclFunctions::CommRevoke, comm, revokeFlags);
  });
}
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  return guarded("ncclCommSplit",
                 [&] { return shim().comm_split(comm, color, key, newcomm, config); });
}
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                            ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  return guarded("ncclCommShrink", [&] {
    return shim().comm_shrink(comm, excludeRanksList, excludeRanksCount, newcomm, config,
                              shrinkFlags);
  });
}
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId* commIds, ncclConfig_t* config) {
  return guarded("ncclCommInitRankScalable", [&] {
    return shim().comm_init_rank_scalable(newcomm, nranks, myrank, nId, commIds, config);
  });
}
const char* ncclGetErrorString(ncclResult_t result) {
  try {
    return shim().get_error_string(result);
  } catch (...) {
    report_escaped_exception("ncclGetErrorString", "an exception", ncclInternalError);
    return "Weft: the error string could not be made";
  }
}
const char* ncclGetLastError(ncclComm_t comm) {
  try {
    return shim().get_last_error(comm);
  } catch (...) {
    report_escaped_exception("ncclGetLastError", "an exception", ncclInternalError);
    return "Weft: the last error could not be read";
  }
}
void ncclResetDebugInit() {
  try {
    shim().reset_debug_init();
  } catch (...) {
    report_escaped_exception("ncclResetDebugInit", "an exception", ncclInternalError);
  }
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  return guarded("ncclCommGetAsyncError",
                 [&] { return shim().comm_get_async_error(comm, asyncError); });
}
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return guarded("ncclCommCount", [&] { return shim().comm_count(comm, count); });
}
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return guarded("ncclCommCuDevice", [&] { return shim().comm_cu_device(comm, device); });
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return guarded("ncclCommUserRank", [&] { return shim().comm_user_rank(comm, rank); });
}
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return guarded("ncclCommRegister", [&] {
    return shim().forward("ncclCommRegister", &NcclFunctions::CommRegister, comm, buff, size,
                          handle);
  });
}
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return guarded("ncclCommDeregister", [&] {
    return shim().forward("ncclCommDeregister", &NcclFunctions::CommDeregister, comm, handle);
  });
}
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                    int winFlags) {
  return guarded("ncclCommWindowRegister", [&] {
    return shim().forward("ncclCommWindowRegister", &NcclFunctions::CommWindowRegister, comm, buff,
                          size, win, winFlags);
  });
}
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return guarded("ncclCommWindowDeregister", [&] {
    return shim().forward("ncclCommWindowDeregister", &NcclFunctions::CommWindowDeregister, comm,
                          win);
  });
}
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  return guarded("ncclRedOpCreatePreMulSum", [&] {
    return shim().forward("ncclRedOpCreatePreMulSum", &NcclFunctions::RedOpCreatePreMulSum, op,
                          scalar, datatype, residence, comm);
  });
}
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return guarded("ncclRedOpDestroy", [&] {
    return shim().forward("ncclRedOpDestroy", &NcclFunctions::RedOpDestroy, op, comm);
  });
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return guarded("ncclReduce", [&] {
    return shim().collective(
        "ncclReduce",
        make_call(ir::Collective::Reduce, sendbuff, recvbuff, count, datatype, op, root), comm,
        stream, [=](const NcclFunctions& nccl) {
          return nccl.Reduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
        });
  });
}
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return guarded("ncclBcast", [&] {
    return shim().collective(
        "ncclBcast", make_call(ir::Collective::Broadcast, buff, buff, count, datatype, 0, root),
        comm, stream, [=](const NcclFunctions& nccl) {
          return nccl.Bcast(buff, count, datatype, root, comm, stream);
        });
  });
}
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return guarded("ncclBroadcast", [&] {
    return shim().collective(
        "ncclBroadcast",
        make_call(ir::Collective::Broadcast, sendbuff, recvbuff, count, datatype, 0, root), comm,
        stream, [=](const NcclFunctions& nccl) {
          return nccl.Broadcast(sendbuff, recvbuff, count, datatype, root, comm, stream);
        });
  });
}
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return guarded("ncclAllReduce", [&] {
    return shim().collective(
        "ncclAllReduce",
        make_call(ir::Collective::AllReduce, sendbuff, recvbuff, count, datatype, op, -1), comm,
        stream, [=](const NcclFunctions& nccl) {
          return nccl.AllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream);
        });
  });
}
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return guarded("ncclReduceScatter", [&] {
    return shim().collective(
        "ncclReduceScatter",
        make_call(ir::Collective::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1),
        comm, stream, [=](const NcclFunctions& nccl) {
          return nccl.ReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
        });
  });
}
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return guarded("ncclAllGather", [&] {
    return shim().collective(
        "ncclAllGather",
        make_call(ir::Collective::AllGather, sendbuff, recvbuff, sendcount, datatype, 0, -1), comm,
        stream, [=](const NcclFunctions& nccl) {
          return nccl.AllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream);
        });
  });
}
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return guarded("ncclAlltoAll", [&] {
    return shim().collective(
        "ncclAlltoAll",
        make_call(ir::Collective::AllToAll, sendbuff, recvbuff, count, datatype, 0, -1), comm,
        stream, [=](const NcclFunctions& nccl) {
          return nccl.AlltoAll(sendbuff, recvbuff, count, datatype, comm, stream);
        });
  });
}
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return guarded("ncclGather", [&] {
    return shim().forward_operation("ncclGather", &NcclFunctions::Gather, sendbuff, recvbuff, count,
                                    datatype, root, comm, stream);
  });
}
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return guarded("ncclScatter", [&] {
    return shim().forward_operation("ncclScatter", &NcclFunctions::Scatter, sendbuff, recvbuff,
                                    count, datatype, root, comm, stream);
  });
}
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return guarded("ncclSend", [&] {
    return shim().forward_operation("ncclSend", &NcclFunctions::Send, sendbuff, count, datatype,
                                    peer, comm, stream);
  });
}
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return guarded("ncclRecv", [&] {
    return shim().forward_operation("ncclRecv", &NcclFunctions::Recv, recvbuff, count, datatype,
                                    peer, comm, stream);
  });
}
ncclResult_t ncclGroupStart() {
  return guarded("ncclGroupStart", [&] { return shim().group_start(); });
}
ncclResult_t ncclGroupEnd() {
  return guarded("ncclGroupEnd", [&] { return shim().group_end(); });
}
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return guarded("ncclGroupSimulateEnd", [&] { return shim().group_simulate_end(simInfo); });
}

}  // extern "C"
