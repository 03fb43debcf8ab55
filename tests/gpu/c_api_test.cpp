// The C API end to end on an emulated communicator.
#include <cuda_runtime_api.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "gpu_test_support.h"
#include "weft/ir/xml.h"
#include "weft/weft.h"

namespace weft::gpu::testing {
namespace {

TEST_CASE("C API: load from text, run emulated, check, unload", "[gpu][c-api]") {
  weftComm_t comm = nullptr;
  char error[512] = {};
  weftCommConfig_t config = WEFT_COMM_CONFIG_INITIALIZER;
  config.errorBuffer = error;
  config.errorBufferSize = sizeof error;
  REQUIRE(weftCommInitEmulated(&comm, 4, &config) == weftSuccess);
  int nranks = 0, local = 0;
  int ranks[4] = {};
  CHECK(weftCommCount(comm, &nranks) == weftSuccess);
  CHECK(nranks == 4);
  CHECK(weftCommLocalRanks(comm, &local, ranks, 4) == weftSuccess);
  CHECK(local == 4);
  CHECK(ranks[3] == 3);

  const ir::Algorithm algo = perf::ring_allreduce(4, ir::Protocol::LL);
  const std::string xml = ir::write_xml(algo);
  weftAlgoHandle_t handle = -1;
  REQUIRE(weftLoadAlgoFromString(comm, xml.c_str(), &handle) == weftSuccess);
  int applies = 0;
  CHECK(weftAlgoApplies(comm, handle, weftAllReduce, 400, weftFloat32, weftSum, 0, -1, &applies) ==
        weftSuccess);
  CHECK(applies == 1);
  CHECK(weftAlgoApplies(comm, handle, weftAllReduce, 401, weftFloat32, weftSum, 0, -1, &applies) ==
        weftSuccess);
  CHECK(applies == 0);
  CHECK_THAT(weftGetLastError(comm), Catch::Contains("divisible"));

  // Out of place, int32 sum: every rank's input is rank + 1 everywhere → 10 everywhere.
  const std::size_t count = 4 * 256;
  std::vector<void*> send(4), recv(4);
  for (int r = 0; r < 4; ++r) {
    REQUIRE(cudaMalloc(&send[static_cast<std::size_t>(r)], count * 4) == cudaSuccess);
    REQUIRE(cudaMalloc(&recv[static_cast<std::size_t>(r)], count * 4) == cudaSuccess);
    std::vector<std::int32_t> values(count, r + 1);
    cudaMemcpy(send[static_cast<std::size_t>(r)], values.data(), count * 4, cudaMemcpyHostToDevice);
  }
  REQUIRE(weftRunAlgoEmulated(comm, handle, send.data(), recv.data(), count, weftInt32, weftSum, -1,
                              nullptr) == weftSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  weftResult_t async = weftInternalError;
  CHECK(weftCommGetAsyncError(comm, &async) == weftSuccess);
  CHECK(async == weftSuccess);
  for (int r = 0; r < 4; ++r) {
    std::vector<std::int32_t> values(count);
    cudaMemcpy(values.data(), recv[static_cast<std::size_t>(r)], count * 4, cudaMemcpyDeviceToHost);
    CHECK(std::count(values.begin(), values.end(), 10) == static_cast<long>(count));
    cudaFree(send[static_cast<std::size_t>(r)]);
    cudaFree(recv[static_cast<std::size_t>(r)]);
  }
  CHECK(weftRunAlgo(comm, handle, nullptr, nullptr, count, weftInt32, weftSum, -1, nullptr) ==
        weftInvalidArgument);  // four local ranks, one buffer pair
  CHECK(std::string(weftGetLastError(comm)).size() > 0);
  CHECK(weftUnloadAlgo(comm, handle) == weftSuccess);
  CHECK(weftUnloadAlgo(comm, handle) == weftInvalidUsage);
  CHECK(weftLoadAlgoFromString(comm, "<algo", &handle) == weftInvalidAlgorithm);
  CHECK(weftCommDestroy(comm) == weftSuccess);
}

TEST_CASE("C API: creation failures are explained", "[gpu][c-api]") {
  weftComm_t comm = nullptr;
  char error[512] = {};
  weftCommConfig_t config = WEFT_COMM_CONFIG_INITIALIZER;
  config.errorBuffer = error;
  config.errorBufferSize = sizeof error;
  CHECK(weftCommInitEmulated(&comm, 0, &config) == weftInvalidArgument);
  CHECK(comm == nullptr);
  CHECK_THAT(std::string(error), Catch::Contains("emulation"));
  config.device = 999;
  CHECK(weftCommInitEmulated(&comm, 2, &config) == weftInvalidArgument);
  CHECK(std::string(weftGetErrorString(weftTimeout)).find("timed out") != std::string::npos);
}

}  // namespace
}  // namespace weft::gpu::testing
