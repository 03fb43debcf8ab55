/* Weft's C API: run custom collective algorithms (MSCCL XML or Weft's IR) on NVIDIA GPUs.
 *
 * In the spirit of MSCCL's mscclLoadAlgo / mscclRunAlgo / mscclUnloadAlgo, on a communicator of
 * Weft's own (which may live beside an NCCL communicator, as in the NCCL shim):
 *
 *   weftComm_t comm;
 *   weftCommConfig_t config = WEFT_COMM_CONFIG_INITIALIZER;
 *   weftCommInitEmulated(&comm, 8, &config);            // 8 ranks on this GPU
 *   weftAlgoHandle_t algo;
 *   weftLoadAlgo(comm, "allreduce_ring.xml", &algo);
 *   weftRunAlgoEmulated(comm, algo, sendbuffs, recvbuffs, count, weftFloat, weftSum, -1, stream);
 *   cudaStreamSynchronize(stream);
 *   weftResult_t async; weftCommGetAsyncError(comm, &async);   // a kernel timeout shows here
 *   weftUnloadAlgo(comm, algo);
 *   weftCommDestroy(comm);
 *
 * Every function returns a weftResult_t; after a failure weftGetLastError(comm) gives the reason
 * in words (file:line, gpu/tb/step, what a kernel waited for). Calls are stream-ordered and may
 * be captured in a CUDA graph. Loading and unloading are collective over the communicator's
 * participants, in the same order everywhere.
 *
 * Values of weftDataType_t and weftRedOp_t equal NCCL's ncclDataType_t and ncclRedOp_t. */
#ifndef WEFT_WEFT_H_
#define WEFT_WEFT_H_

#include <stddef.h>

#include "weft/version.h" /* WEFT_VERSION_MAJOR, _MINOR, _PATCH, _STRING */

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes. Their meaning is fixed; new codes may be added at the end. */
typedef enum {
  weftSuccess = 0,
  /* A null or misaligned pointer, a count, type, operator, rank or option out of range. */
  weftInvalidArgument = 1,
  /* The XML or IR failed to read or validate; the last error lists every finding. */
  weftInvalidAlgorithm = 2,
  /* The algorithm does not apply to this call (collective, rank count, size band, in-place or
   * out-of-place, divisibility, type or operator). The caller may fall back to NCCL. */
  weftNotApplicable = 3,
  /* A CUDA runtime call failed; the message names the call and CUDA's error string. */
  weftCudaError = 4,
  /* An operating-system failure: socket, file, a bootstrap peer that did not answer. */
  weftSystemError = 5,
  /* A wait inside the kernel exceeded WEFT_TIMEOUT_S (with every rank in the call) or
   * WEFT_ARRIVAL_TIMEOUT_S (a rank never entered it), or another communicator of the process
   * failed. The message names rank, threadblock, step, tile and what was awaited. The
   * communicator refuses further calls; destroy it. */
  weftTimeout = 6,
  /* The device cannot hold all threadblocks of the launch at once (they wait on each other, so
   * running them in turns would hang). The message gives both numbers. */
  weftNotResident = 7,
  /* A call in the wrong state: after a timeout, after another communicator of the process
   * failed, an unknown handle, a graph capture that would need an allocation (call
   * weftReserveScratch first). */
  weftInvalidUsage = 8,
  /* A bug in Weft. Please report the message. */
  weftInternalError = 9,
  /* Participants disagree: different algorithms loaded in the same position, or a rank count
   * that does not match. */
  weftMismatch = 10,
  weftNumResults = 11
} weftResult_t;

typedef enum {
  weftInt8 = 0, weftUint8 = 1, weftInt32 = 2, weftUint32 = 3, weftInt64 = 4, weftUint64 = 5,
  weftFloat16 = 6, weftFloat32 = 7, weftFloat64 = 8, weftBfloat16 = 9
} weftDataType_t;

/* weftAvg is supported for floating types only (weftNotApplicable otherwise). */
typedef enum { weftSum = 0, weftProd = 1, weftMax = 2, weftMin = 3, weftAvg = 4 } weftRedOp_t;

typedef enum {
  weftAllReduce = 0, weftAllGather = 1, weftReduceScatter = 2, weftAllToAll = 3,
  weftBroadcast = 4, weftReduce = 5, weftCustom = 6
} weftCollective_t;

typedef struct weftComm* weftComm_t;
/* Handles are never reused within a communicator. */
typedef int weftAlgoHandle_t;
/* The same type as cudaStream_t; this header does not need the CUDA headers. */
typedef struct CUstream_st* weftStream_t;

/* The bootstrap a caller provides (the NCCL shim wraps ncclAllGather in it). allgather must
 * behave as described for weft::gpu::Bootstrap: `data` holds size × bytesPerRank bytes, this
 * participant's record at rank × bytesPerRank; return 0 on success, nonzero on failure. */
typedef struct {
  void* context;
  int rank; /* this participant */
  int size; /* participants */
  int (*allgather)(void* context, void* data, size_t bytesPerRank);
} weftBootstrap_t;

typedef struct {
  size_t size;           /* sizeof(weftCommConfig_t): lets the struct grow compatibly */
  int device;            /* CUDA device; -1: the current device */
  double timeoutSeconds; /* > 0 overrides WEFT_TIMEOUT_S */
  /* Optional: receives the reason when a weftCommInit* call fails (there is no communicator
   * then to ask weftGetLastError). */
  char* errorBuffer;
  size_t errorBufferSize;
  /* weftCommInitRank: seconds to wait for every rank at the rendezvous; > 0 overrides
   * WEFT_BOOTSTRAP_TIMEOUT_S (default 60). */
  double bootstrapTimeoutSeconds;
} weftCommConfig_t;
#define WEFT_COMM_CONFIG_INITIALIZER {sizeof(weftCommConfig_t), -1, 0.0, NULL, 0, 0.0}

/* The version of the library in use, as WEFT_VERSION_CODE counts it (MAJOR * 10000 + MINOR *
 * 100 + PATCH): compare with the WEFT_VERSION_CODE of the header a program was compiled with. */
weftResult_t weftGetVersion(int* version);
/* Constant text for a code: "weftTimeout: a wait inside the kernel timed out ...". */
const char* weftGetErrorString(weftResult_t result);
/* The message of the last failed call on `comm` (empty when none). Valid until the next call on
 * `comm` from any thread. */
const char* weftGetLastError(weftComm_t comm);

/* All `nranks` ranks in this process on one GPU (emulation). `config` may be NULL. */
weftResult_t weftCommInitEmulated(weftComm_t* comm, int nranks, const weftCommConfig_t* config);
/* A fresh rendezvous for weftCommInitRank, written to `out` (at most `capacity` bytes with its
 * terminator; 64 is enough): a local socket name only this user's processes can reach and a
 * 128-bit secret from the system's random source, "unix:weft-NAME#SECRET". Make it on one
 * process and hand it to the others as the job hands out anything (docs/security.md). */
weftResult_t weftMakeRendezvous(char* out, size_t capacity);
/* One rank per process; participants meet at `rendezvous` and share memory by CUDA IPC.
 * Collective. `rendezvous` is what weftMakeRendezvous wrote ("unix:NAME#SECRET": every rank
 * proves the secret, both ends check the other runs as the same user), or "host:port[#SECRET]"
 * for TCP (rank 0 listens there; without a secret anyone who reaches the port can join). */
weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, int rank, const char* rendezvous,
                              const weftCommConfig_t* config);
/* One rank per participant, with a caller-provided bootstrap (copied; its context must stay
 * valid until weftCommDestroy) and CUDA IPC between processes. Collective. */
weftResult_t weftCommInitWithBootstrap(weftComm_t* comm, int nranks, int rank,
                                       const weftBootstrap_t* bootstrap,
                                       const weftCommConfig_t* config);
/* Waits for the device to finish with the communicator, then frees it. NULL is accepted. */
weftResult_t weftCommDestroy(weftComm_t comm);
weftResult_t weftCommCount(weftComm_t comm, int* nranks);
/* Number of ranks this communicator drives (1, or nranks when emulated) and their ids. */
weftResult_t weftCommLocalRanks(weftComm_t comm, int* count, int* ranks, int capacity);

/* Collective. Reads, validates and loads an algorithm from an XML file or XML text. */
weftResult_t weftLoadAlgo(weftComm_t comm, const char* xmlPath, weftAlgoHandle_t* handle);
weftResult_t weftLoadAlgoFromString(weftComm_t comm, const char* xmlText,
                                    weftAlgoHandle_t* handle);
/* Collective. */
weftResult_t weftUnloadAlgo(weftComm_t comm, weftAlgoHandle_t handle);

/* *applies = 1 when `handle` can run this call; otherwise 0 and weftGetLastError says why. */
weftResult_t weftAlgoApplies(weftComm_t comm, weftAlgoHandle_t handle, weftCollective_t coll,
                             size_t count, weftDataType_t datatype, weftRedOp_t op, int inPlace,
                             int root, int* applies);

/* One local rank: enqueue the call on `stream`. `root` is -1 except for broadcast/reduce. */
weftResult_t weftRunAlgo(weftComm_t comm, weftAlgoHandle_t handle, const void* sendbuff,
                         void* recvbuff, size_t count, weftDataType_t datatype, weftRedOp_t op,
                         int root, weftStream_t stream);
/* Every local rank at once (emulation): arrays of weftCommLocalRanks' length. */
weftResult_t weftRunAlgoEmulated(weftComm_t comm, weftAlgoHandle_t handle,
                                 const void* const* sendbuffs, void* const* recvbuffs,
                                 size_t count, weftDataType_t datatype, weftRedOp_t op, int root,
                                 weftStream_t stream);
/* Allocates the scratch calls up to maxCount need; required before capturing them in a graph. */
weftResult_t weftReserveScratch(weftComm_t comm, weftAlgoHandle_t handle, size_t maxCount,
                                weftDataType_t datatype);

/* The first failure inside a kernel (weftTimeout), weftSuccess while there is none. Synchronise
 * the stream first to be sure to see failures of the calls enqueued so far. */
weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_H_ */
