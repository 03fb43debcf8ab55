// A recording stand-in for libnccl, for tests of the shim's forwarding on machines without a
// GPU. Each function records its name and arguments as one line and succeeds; communicators are
// small host objects that remember their rank and size so that queries answer consistently.
// Functions are defined under NCCL's profiling names (pncclX), which is where the shim looks;
// ncclMemFree exists only under its plain name, to test the shim's second lookup.
#include <nccl.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace {

struct FakeComm {
  int nranks = 0;
  int rank = 0;
  int device = 0;
};

// The recording: a test stand-in has no other place to keep what it saw. It also owns the
// communicators it hands out, as libnccl does: one a test never destroys stays reachable
// instead of being reported as a leak of the test double.
struct Recording {
  std::mutex mutex;
  std::string text;
  std::map<FakeComm*, std::unique_ptr<FakeComm>> comms;
};
Recording& recording() {
  static Recording instance;
  return instance;
}

std::string hex(const void* pointer) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%" PRIxPTR, reinterpret_cast<std::uintptr_t>(pointer));
  return buffer;
}

void record(const char* format, ...) __attribute__((format(printf, 1, 2)));
void record(const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  std::lock_guard lock(recording().mutex);
  recording().text += line;
  recording().text += '\n';
}

FakeComm* fake(ncclComm_t comm) {
  return reinterpret_cast<FakeComm*>(comm);
}

ncclComm_t make_comm(int nranks, int rank, int device) {
  auto comm = std::make_unique<FakeComm>(FakeComm{nranks, rank, device});
  FakeComm* raw = comm.get();
  std::lock_guard lock(recording().mutex);
  recording().comms.emplace(raw, std::move(comm));
  return reinterpret_cast<ncclComm_t>(raw);
}

void destroy_comm(ncclComm_t comm) {
  std::lock_guard lock(recording().mutex);
  recording().comms.erase(fake(comm));
}

}  // namespace

extern "C" {

// The test reads and clears the recording through these. The log is copied into the caller's
// buffer (up to `capacity` bytes; the full length is returned) rather than returned from
// thread-local storage: LeakSanitizer's scan of a dlopen'ed library's TLS has crashed at exit.
__attribute__((visibility("default"))) std::size_t weft_recording_nccl_log(char* out,
                                                                           std::size_t capacity) {
  std::lock_guard lock(recording().mutex);
  const std::string& text = recording().text;
  if (out != nullptr) std::memcpy(out, text.data(), std::min(capacity, text.size()));
  return text.size();
}
__attribute__((visibility("default"))) void weft_recording_nccl_clear() {
  std::lock_guard lock(recording().mutex);
  recording().text.clear();
}

ncclResult_t pncclGetVersion(int* version) {
  record("GetVersion");
  *version = 22809;
  return ncclSuccess;
}
ncclResult_t pncclGetUniqueId(ncclUniqueId* id) {
  record("GetUniqueId");
  std::memset(id, 0x5a, sizeof(*id));
  return ncclSuccess;
}
ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId, int rank) {
  *comm = make_comm(nranks, rank, 0);
  record("CommInitRank(nranks=%d, rank=%d) -> %s", nranks, rank, hex(*comm).c_str());
  return ncclSuccess;
}
ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId, int rank,
                                     ncclConfig_t* config) {
  *comm = make_comm(nranks, rank, 0);
  record("CommInitRankConfig(nranks=%d, rank=%d, config=%s) -> %s", nranks, rank,
         hex(config).c_str(), hex(*comm).c_str());
  return ncclSuccess;
}
ncclResult_t pncclCommInitAll(ncclComm_t* comms, int ndev, const int*) {
  for (int k = 0; k < ndev; ++k) comms[k] = make_comm(ndev, k, k);
  record("CommInitAll(ndev=%d)", ndev);
  return ncclSuccess;
}
ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t*) {
  *newcomm = color == NCCL_SPLIT_NOCOLOR ? nullptr : make_comm(1, 0, fake(comm)->device);
  record("CommSplit(comm=%s, color=%d, key=%d)", hex(comm).c_str(), color, key);
  return ncclSuccess;
}
ncclResult_t pncclCommFinalize(ncclComm_t comm) {
  record("CommFinalize(comm=%s)", hex(comm).c_str());
  return ncclSuccess;
}
ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  record("CommDestroy(comm=%s)", hex(comm).c_str());
  destroy_comm(comm);
  return ncclSuccess;
}
ncclResult_t pncclCommAbort(ncclComm_t comm) {
  record("CommAbort(comm=%s)", hex(comm).c_str());
  destroy_comm(comm);
  return ncclSuccess;
}
ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  *count = fake(comm)->nranks;
  return ncclSuccess;
}
ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  *rank = fake(comm)->rank;
  return ncclSuccess;
}
ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  *device = fake(comm)->device;
  return ncclSuccess;
}
ncclResult_t pncclCommGetAsyncError(ncclComm_t, ncclResult_t* error) {
  *error = ncclSuccess;
  return ncclSuccess;
}
const char* pncclGetErrorString(ncclResult_t result) {
  record("GetErrorString(%d)", static_cast<int>(result));
  return "stand-in error string";
}
const char* pncclGetLastError(ncclComm_t) {
  return "stand-in last error";
}

ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream) {
  record("AllReduce(send=%s, recv=%s, count=%zu, type=%d, op=%d, comm=%s, stream=%s)",
         hex(sendbuff).c_str(), hex(recvbuff).c_str(), count, static_cast<int>(datatype),
         static_cast<int>(op), hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  record("AllGather(send=%s, recv=%s, count=%zu, type=%d, comm=%s, stream=%s)",
         hex(sendbuff).c_str(), hex(recvbuff).c_str(), count, static_cast<int>(datatype),
         hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t count,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t stream) {
  record("ReduceScatter(send=%s, recv=%s, count=%zu, type=%d, op=%d, comm=%s, stream=%s)",
         hex(sendbuff).c_str(), hex(recvbuff).c_str(), count, static_cast<int>(datatype),
         static_cast<int>(op), hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm,
                            cudaStream_t stream) {
  record("Broadcast(send=%s, recv=%s, count=%zu, type=%d, root=%d, comm=%s, stream=%s)",
         hex(sendbuff).c_str(), hex(recvbuff).c_str(), count, static_cast<int>(datatype), root,
         hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  record("Bcast(buff=%s, count=%zu, type=%d, root=%d, comm=%s, stream=%s)", hex(buff).c_str(),
         count, static_cast<int>(datatype), root, hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                         cudaStream_t stream) {
  record("Reduce(send=%s, recv=%s, count=%zu, type=%d, op=%d, root=%d, comm=%s, stream=%s)",
         hex(sendbuff).c_str(), hex(recvbuff).c_str(), count, static_cast<int>(datatype),
         static_cast<int>(op), root, hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  record("AlltoAll(send=%s, recv=%s, count=%zu, type=%d, comm=%s, stream=%s)",
         hex(sendbuff).c_str(), hex(recvbuff).c_str(), count, static_cast<int>(datatype),
         hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream) {
  record("Send(send=%s, count=%zu, type=%d, peer=%d, comm=%s, stream=%s)", hex(sendbuff).c_str(),
         count, static_cast<int>(datatype), peer, hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream) {
  record("Recv(recv=%s, count=%zu, type=%d, peer=%d, comm=%s, stream=%s)", hex(recvbuff).c_str(),
         count, static_cast<int>(datatype), peer, hex(comm).c_str(), hex(stream).c_str());
  return ncclSuccess;
}
ncclResult_t pncclGroupStart() {
  record("GroupStart");
  return ncclSuccess;
}
ncclResult_t pncclGroupEnd() {
  record("GroupEnd");
  return ncclSuccess;
}
ncclResult_t pncclMemAlloc(void** ptr, size_t size) {
  record("MemAlloc(size=%zu)", size);
  *ptr = reinterpret_cast<void*>(0x1000);
  return ncclSuccess;
}
ncclResult_t ncclMemFree(void* ptr) {
  record("MemFree(ptr=%s)", hex(ptr).c_str());
  return ncclSuccess;
}

}  // extern "C"
