// The shim in front of a libnccl: what it forwards, unchanged, and how it reports a missing one.
#include <catch2/catch.hpp>

#include "shim_test_support.h"
#include "weft/ir/nccl_version.h"
#include "weft/version.h"

namespace {

using namespace weft::plugin;
using namespace weft::plugin::testing;

alignas(64) char send_buffer[4096];
alignas(64) char recv_buffer[4096];
cudaStream_t const kStream = reinterpret_cast<cudaStream_t>(0x5000);

ncclComm_t init_rank(Shim& shim, int nranks, int rank) {
  ncclUniqueId id;
  REQUIRE(shim.get_unique_id(&id) == ncclSuccess);
  ncclComm_t comm = nullptr;
  REQUIRE(shim.comm_init_rank(&comm, nranks, id, rank, nullptr, false) == ncclSuccess);
  REQUIRE(comm != nullptr);
  return comm;
}

}  // namespace

TEST_CASE("forwarding: ncclGetVersion and ncclGetUniqueId reach the real NCCL") {
  RecordingNccl nccl;
  ShimUnderTest t(ShimConfig{});
  int version = 0;
  CHECK(t.shim->get_version(&version) == ncclSuccess);
  CHECK(version == 22809);
  ncclUniqueId id;
  CHECK(t.shim->get_unique_id(&id) == ncclSuccess);
  CHECK(static_cast<unsigned char>(id.internal[0]) == 0x5a);
  CHECK(nccl.lines() == std::vector<std::string>{"GetVersion", "GetUniqueId"});
}

TEST_CASE("forwarding: the INFO banner names Weft's version and both NCCL versions") {
  RecordingNccl nccl;
  ShimUnderTest t(ShimConfig{});
  INFO(t.all_log());
  CHECK(t.logged("Weft " WEFT_VERSION_STRING ", built against NCCL " +
                 weft::ir::nccl_version_text(NCCL_VERSION_CODE)));
  // The stand-in NCCL answers 22809.
  CHECK(t.logged("forwarding to " WEFT_RECORDING_NCCL ": NCCL 2.28.9"));
}

TEST_CASE(
    "forwarding: with no algorithm loaded a collective reaches NCCL with identical arguments") {
  RecordingNccl nccl;
  ShimUnderTest t(ShimConfig{});
  ncclComm_t comm = init_rank(*t.shim, 4, 2);
  nccl.clear();
  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 1000, ncclFloat, ncclMax, comm, kStream) ==
        ncclSuccess);
  CHECK(nccl.lines() ==
        std::vector<std::string>{fmt::format(
            "AllReduce(send={}, recv={}, count=1000, type=7, op=2, comm={}, stream=5000)",
            hex(send_buffer), hex(recv_buffer), hex(comm))});
  CHECK(
      t.logged("ncclAllReduce: allreduce of 1000 × float (max, out-of-place) on 4 ranks -> "
               "NCCL: no loaded algorithm is for 4 ranks"));
  CHECK(t.backend->snapshot().empty());  // no candidates: not even a bootstrap
  CHECK(t.shim->comm_destroy(comm) == ncclSuccess);
}

TEST_CASE("forwarding: groups without Weft work are NCCL's groups, in order") {
  RecordingNccl nccl;
  ShimUnderTest t(ShimConfig{});
  ncclComm_t comm = init_rank(*t.shim, 2, 0);
  nccl.clear();
  REQUIRE(t.shim->group_start() == ncclSuccess);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 8, ncclInt32, ncclSum, comm, kStream) ==
          ncclSuccess);
  REQUIRE(all_gather(*t.shim, send_buffer, recv_buffer, 4, ncclInt8, comm, kStream) == ncclSuccess);
  // Recorded, not yet replayed: only the real group is open.
  CHECK(nccl.lines() == std::vector<std::string>{"GroupStart"});
  REQUIRE(t.shim->group_end() == ncclSuccess);
  const auto lines = nccl.lines();
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "GroupStart");
  CHECK(lines[1].rfind("AllReduce(", 0) == 0);
  CHECK(lines[2].rfind("AllGather(", 0) == 0);
  CHECK(lines[3] == "GroupEnd");
}

TEST_CASE("forwarding: WEFT_DISABLE=1 loads nothing and forwards everything") {
  RecordingNccl nccl;
  ShimConfig config;
  config.disabled = true;
  config.xml_files = {data_xml("ring_allreduce_4r.xml")};
  ShimUnderTest t(config);
  CHECK(t.shim->catalog().entries.empty());
  ncclComm_t comm = init_rank(*t.shim, 4, 0);
  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
        ncclSuccess);
  CHECK(t.backend->snapshot().empty());
  const auto lines = nccl.lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[1].rfind("CommInitRank(nranks=4, rank=0)", 0) == 0);
  CHECK(lines[2].rfind("AllReduce(", 0) == 0);
}

TEST_CASE("forwarding: ncclCommInitRankConfig stays InitRankConfig, even with a NULL config") {
  RecordingNccl nccl;
  ShimUnderTest t(ShimConfig{});
  ncclUniqueId id{};
  ncclComm_t comm = nullptr;
  CHECK(t.shim->comm_init_rank(&comm, 1, id, 0, nullptr, true) == ncclSuccess);
  REQUIRE(nccl.lines().size() == 1);
  CHECK(nccl.lines()[0].rfind("CommInitRankConfig(nranks=1, rank=0, config=0)", 0) == 0);
}

TEST_CASE("forwarding: plain ncclX is used where a library has no pncclX") {
  RecordingNccl nccl;
  ShimUnderTest t(ShimConfig{});
  void* pointer = nullptr;
  CHECK(t.shim->forward("ncclMemAlloc", &NcclFunctions::MemAlloc, &pointer, std::size_t{256}) ==
        ncclSuccess);
  CHECK(t.shim->forward("ncclMemFree", &NcclFunctions::MemFree, pointer) == ncclSuccess);
  CHECK(nccl.lines() == std::vector<std::string>{"MemAlloc(size=256)", "MemFree(ptr=1000)"});
}

TEST_CASE("forwarding: a function the library lacks is an error with a message, not a crash") {
  RecordingNccl nccl;
  ShimUnderTest t(ShimConfig{});
  CHECK(t.shim->forward("ncclCommRevoke", &NcclFunctions::CommRevoke,
                        reinterpret_cast<ncclComm_t>(0x10), 0) == ncclInternalError);
  CHECK(std::string(t.shim->get_last_error(nullptr)).find("pncclCommRevoke") != std::string::npos);
  CHECK(t.logged("WEFT WARN ncclCommRevoke"));
}

TEST_CASE("forwarding: without a real NCCL every call fails with ncclSystemError and says why") {
  // This test executable does not link libnccl, so nothing defines pncclGetVersion after us.
  ShimUnderTest t(ShimConfig{}, "");
  int version = 0;
  CHECK(t.shim->get_version(&version) == ncclSystemError);
  CHECK(std::string(t.shim->get_last_error(nullptr)).find("no real NCCL found") !=
        std::string::npos);
  CHECK(t.logged("WEFT_NCCL_LIB"));
  CHECK(t.shim->group_start() == ncclSystemError);
  CHECK(std::string(t.shim->get_error_string(ncclSystemError)).find("system error") !=
        std::string::npos);
}

TEST_CASE("forwarding: a libnccl.so.2 the application loaded in a local scope is found") {
  // As PyTorch loads it (inside a Python extension): out of RTLD_NEXT's sight. The shim keeps
  // the library open, so this case is declared after the one that needs no libnccl loaded.
  void* local = dlopen(WEFT_RECORDING_NCCL_SONAME, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(local != nullptr);
  {
    ShimUnderTest t(ShimConfig{}, "");
    int version = 0;
    CHECK(t.shim->get_version(&version) == ncclSuccess);
    CHECK(version == 22809);
    CHECK(t.logged("forwarding to the application's libnccl.so.2 (loaded in a local scope)"));
  }
  dlclose(local);
}

TEST_CASE("forwarding: a WEFT_NCCL_LIB that cannot be opened is reported") {
  ShimUnderTest t(ShimConfig{}, "/nonexistent/libnccl.so.2");
  int version = 0;
  CHECK(t.shim->get_version(&version) == ncclSystemError);
  CHECK(std::string(t.shim->get_last_error(nullptr)).find("/nonexistent/libnccl.so.2") !=
        std::string::npos);
}

TEST_CASE("forwarding: split communicators are followed, NOCOLOR gives none") {
  RecordingNccl nccl;
  ShimConfig config;
  config.xml_files = {data_xml("ring_allreduce_4r.xml")};
  ShimUnderTest t(config);
  ncclComm_t comm = init_rank(*t.shim, 4, 3);
  ncclComm_t child = nullptr;
  CHECK(t.shim->comm_split(comm, 0, 0, &child, nullptr) == ncclSuccess);
  CHECK(child != nullptr);
  int count = 0;
  CHECK(t.shim->comm_count(child, &count) == ncclSuccess);
  CHECK(count == 1);
  ncclComm_t none = reinterpret_cast<ncclComm_t>(0x1);
  CHECK(t.shim->comm_split(comm, NCCL_SPLIT_NOCOLOR, 0, &none, nullptr) == ncclSuccess);
  CHECK(none == nullptr);
  CHECK(t.shim->comm_destroy(child) == ncclSuccess);
  // Destroying the parent takes its Weft side down before NCCL's communicator.
  CHECK(t.shim->comm_destroy(comm) == ncclSuccess);
  CHECK(t.backend->count_starting("destroy rank 3") == 1);
  CHECK(nccl.lines().back() == fmt::format("CommDestroy(comm={})", hex(comm)));
}
