// The preloadable library end to end, on a machine without a GPU: its exported ncclX functions
// forward to a libnccl named by WEFT_NCCL_LIB (the recording stand-in) with identical
// arguments, and a malformed algorithm file is reported and skipped. The library's Shim is
// created once per process from the environment, so everything that depends on that
// environment is in this one test case.
#include <dlfcn.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nccl.h>
#include <catch2/catch.hpp>

#include "library_test_support.h"
#include "weft/version.h"

namespace {

using namespace weft::plugin::testing;

std::string hex(const void* pointer) {
  return fmt::format("{:x}", reinterpret_cast<std::uintptr_t>(pointer));
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

TEST_CASE("library: ncclX calls reach WEFT_NCCL_LIB unchanged; bad algorithm files are skipped") {
  TempDir dir;
  const std::filesystem::path algorithms = dir.path() / "algorithms";
  std::filesystem::create_directory(algorithms);
  TempDir data;
  data.write("broken.xml", "<algo name=\"broken\" coll=\"allreduce\" ngpus=\"2\">\n  <gpu id=\n");
  std::filesystem::copy_file(data.file("broken.xml"), algorithms / "broken.xml");
  setenv("WEFT_NCCL_LIB", WEFT_RECORDING_NCCL, 1);
  setenv("WEFT_ALGO_DIR", algorithms.c_str(), 1);
  setenv("WEFT_DEBUG", "INFO", 1);
  unsetenv("WEFT_STANDALONE");
  unsetenv("WEFT_DISABLE");
  unsetenv("WEFT_XML_FILES");

  void* shim = open_shim();
  void* stand_in = dlopen(WEFT_RECORDING_NCCL, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(stand_in != nullptr);
  auto recorded_log = symbol<LogFunction>(stand_in, "weft_recording_nccl_log");
  auto recorded = [&] { return read_recording(recorded_log); };
  auto clear = symbol<void (*)()>(stand_in, "weft_recording_nccl_clear");
  clear();

  CapturedStderr captured(dir);
  int version = 0;
  REQUIRE(symbol<decltype(&ncclGetVersion)>(shim, "ncclGetVersion")(&version) == ncclSuccess);
  CHECK(version == 22809);
  ncclUniqueId id;
  REQUIRE(symbol<decltype(&ncclGetUniqueId)>(shim, "ncclGetUniqueId")(&id) == ncclSuccess);
  ncclComm_t comm = nullptr;
  REQUIRE(symbol<decltype(&ncclCommInitRank)>(shim, "ncclCommInitRank")(&comm, 2, id, 1) ==
          ncclSuccess);

  alignas(64) static char send[1024];
  alignas(64) static char recv[1024];
  auto* stream = reinterpret_cast<cudaStream_t>(0xabc0);
  const std::string c = hex(comm);
  const std::string s = hex(send);
  const std::string r = hex(recv);
  CHECK(symbol<decltype(&ncclAllReduce)>(shim, "ncclAllReduce")(send, recv, 16, ncclFloat, ncclSum,
                                                                comm, stream) == ncclSuccess);
  CHECK(symbol<decltype(&ncclAllGather)>(shim, "ncclAllGather")(send, recv, 8, ncclInt8, comm,
                                                                stream) == ncclSuccess);
  CHECK(symbol<decltype(&ncclReduceScatter)>(shim, "ncclReduceScatter")(
            send, recv, 4, ncclDouble, ncclMin, comm, stream) == ncclSuccess);
  CHECK(symbol<decltype(&ncclBroadcast)>(shim, "ncclBroadcast")(send, recv, 5, ncclHalf, 1, comm,
                                                                stream) == ncclSuccess);
  CHECK(symbol<decltype(&ncclBcast)>(shim, "ncclBcast")(recv, 6, ncclUint8, 0, comm, stream) ==
        ncclSuccess);
  CHECK(symbol<decltype(&ncclReduce)>(shim, "ncclReduce")(send, recv, 7, ncclBfloat16, ncclProd, 1,
                                                          comm, stream) == ncclSuccess);
  CHECK(symbol<decltype(&ncclAlltoAll)>(shim, "ncclAlltoAll")(send, recv, 3, ncclInt64, comm,
                                                              stream) == ncclSuccess);
  REQUIRE(symbol<decltype(&ncclGroupStart)>(shim, "ncclGroupStart")() == ncclSuccess);
  CHECK(symbol<decltype(&ncclSend)>(shim, "ncclSend")(send, 2, ncclInt32, 0, comm, stream) ==
        ncclSuccess);
  CHECK(symbol<decltype(&ncclRecv)>(shim, "ncclRecv")(recv, 2, ncclInt32, 0, comm, stream) ==
        ncclSuccess);
  REQUIRE(symbol<decltype(&ncclGroupEnd)>(shim, "ncclGroupEnd")() == ncclSuccess);
  CHECK(std::string(symbol<decltype(&ncclGetErrorString)>(
            shim, "ncclGetErrorString")(ncclInvalidUsage)) == "stand-in error string");
  CHECK(symbol<decltype(&ncclCommDestroy)>(shim, "ncclCommDestroy")(comm) == ncclSuccess);
  // Not in the stand-in: an error with a message, not a crash.
  CHECK(symbol<decltype(&ncclCommRevoke)>(shim, "ncclCommRevoke")(comm, 0) == ncclInternalError);

  const std::string log = captured.text();
  const std::vector<std::string> expected = {
      "GetVersion",  // the shim's own, for the version in its WEFT_DEBUG=INFO banner
      "GetVersion",
      "GetUniqueId",
      fmt::format("CommInitRank(nranks=2, rank=1) -> {}", c),
      fmt::format("AllReduce(send={}, recv={}, count=16, type=7, op=0, comm={}, stream=abc0)", s, r,
                  c),
      fmt::format("AllGather(send={}, recv={}, count=8, type=0, comm={}, stream=abc0)", s, r, c),
      fmt::format("ReduceScatter(send={}, recv={}, count=4, type=8, op=3, comm={}, stream=abc0)", s,
                  r, c),
      fmt::format("Broadcast(send={}, recv={}, count=5, type=6, root=1, comm={}, stream=abc0)", s,
                  r, c),
      fmt::format("Bcast(buff={}, count=6, type=1, root=0, comm={}, stream=abc0)", r, c),
      fmt::format("Reduce(send={}, recv={}, count=7, type=9, op=1, root=1, comm={}, stream=abc0)",
                  s, r, c),
      fmt::format("AlltoAll(send={}, recv={}, count=3, type=4, comm={}, stream=abc0)", s, r, c),
      "GroupStart",
      fmt::format("Send(send={}, count=2, type=2, peer=0, comm={}, stream=abc0)", s, c),
      fmt::format("Recv(recv={}, count=2, type=2, peer=0, comm={}, stream=abc0)", r, c),
      "GroupEnd",
      "GetErrorString(5)",
      fmt::format("CommDestroy(comm={})", c),
  };
  INFO(log);
  CHECK(split_lines(recorded()) == expected);
  // WEFT_DEBUG=INFO: where calls went and why, in NCCL's style; the broken file named.
  CHECK(log.find("WEFT WARN skipping algorithm file '" + (algorithms / "broken.xml").string()) !=
        std::string::npos);
  CHECK(log.find("broken.xml:2:") != std::string::npos);
  CHECK(log.find("WEFT INFO Weft " WEFT_VERSION_STRING ", built against NCCL 2.") !=
        std::string::npos);
  // The stand-in answers 22809 for the NCCL found at run time.
  CHECK(log.find("WEFT INFO forwarding to " WEFT_RECORDING_NCCL ": NCCL 2.28.9") !=
        std::string::npos);
  CHECK(log.find("WEFT INFO ncclAllReduce: allreduce of 16 × float (sum, out-of-place) on 2 "
                 "ranks -> NCCL: no loaded algorithm is for 2 ranks") != std::string::npos);
  CHECK(log.find("WEFT WARN ncclCommRevoke") != std::string::npos);
}
