// The real NCCL's entry points, reached through their pncclX names (NCCL's profiling aliases,
// like MPI's PMPI) so that calls from the shim never come back into the shim.
#pragma once

#include <nccl.h>

#include <string>

namespace weft::plugin {

// Every function of nccl.h 2.28, by its name without the "nccl" prefix.
// clang-format off
#define WEFT_NCCL_FUNCTIONS(X)                                                                    \
  X(MemAlloc) X(MemFree) X(GetVersion) X(GetUniqueId) X(CommInitRankConfig) X(CommInitRank)       \
  X(CommInitAll) X(CommFinalize) X(CommDestroy) X(CommAbort) X(CommRevoke) X(CommSplit)           \
  X(CommShrink) X(CommInitRankScalable) X(GetErrorString) X(GetLastError) X(ResetDebugInit)       \
  X(CommGetAsyncError) X(CommCount) X(CommCuDevice) X(CommUserRank) X(CommRegister)               \
  X(CommDeregister) X(CommWindowRegister) X(CommWindowDeregister) X(RedOpCreatePreMulSum)         \
  X(RedOpDestroy) X(Reduce) X(Bcast) X(Broadcast) X(AllReduce) X(ReduceScatter) X(AllGather)      \
  X(AlltoAll) X(Gather) X(Scatter) X(Send) X(Recv) X(GroupStart) X(GroupEnd)                      \
  X(GroupSimulateEnd)
// clang-format on

// ncclResetDebugInit is declared deprecated; taking its type is not a use worth a warning.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct NcclFunctions {
#define WEFT_NCCL_POINTER(name) decltype(&::pnccl##name) name = nullptr;
  WEFT_NCCL_FUNCTIONS(WEFT_NCCL_POINTER)
#undef WEFT_NCCL_POINTER
};
#pragma GCC diagnostic pop

// Where the real NCCL was found, or why it was not.
struct NcclLibrary {
  NcclFunctions functions;
  bool found = false;  // at least the entry points every application needs were found
  std::string origin;  // "the application's libnccl (RTLD_NEXT)" or the WEFT_NCCL_LIB path
  std::string error;   // when not found: what was tried and what failed
  // dlopen handle for WEFT_NCCL_LIB, or for a libnccl.so.2 found loaded in a local scope; kept
  // open for the process's life
  void* handle = nullptr;
};

// `library_path` empty: the next definition after this library in the process's lookup order
// (the libnccl the application links), else a libnccl.so.2 already loaded in a local scope (a
// Python extension's, as PyTorch's; RTLD_NOLOAD, never a library of its own). Otherwise dlopen
// that file. Each function is looked up
// as pncclX, then as ncclX in an explicitly opened library (a stand-in may define only one).
// Functions missing from an older libnccl stay null; calling them reports an error.
NcclLibrary resolve_nccl(const std::string& library_path);

}  // namespace weft::plugin
