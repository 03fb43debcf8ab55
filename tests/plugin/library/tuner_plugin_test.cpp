// The tuner in libweft_nccl.so, driven exactly as NCCL 2.28 drives it: the symbol looked up by
// name, init with NCCL's arguments, getCollInfo with the cost table as a float[7][3] behind a
// float**. The ABI structs are this test's own copy, written from NCCL's reference, so that a
// layout mistake in the plugin's copy would show here.
#include <dlfcn.h>
#include <stdlib.h>

#include <array>
#include <cstdarg>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "library_test_support.h"

namespace {

using namespace weft::plugin::testing;

using Logger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt,
                        ...);
struct NvlDomainInfo {
  int nNvlDomains, minRanksPerNvlDomain, maxRanksPerNvlDomain;
};
struct TunerConstants {
  double baseLatencies[7][3];
  double hwLatencies[3][7][3];
  double llMaxBws[4][3];
  double perChMaxRingLL128Bws[4][3];
  double perChMaxTreeLL128Bws[4][3];
  double perChMaxTreeBws[4][3];
  double perChMaxNVLSTreeBws[4][3];
};
struct TunerV5 {
  const char* name;
  int (*init)(void** ctx, std::uint64_t commId, std::size_t nRanks, std::size_t nNodes, Logger log,
              NvlDomainInfo* nvl, TunerConstants* constants);
  int (*getCollInfo)(void* ctx, int collType, std::size_t nBytes, int numPipeOps,
                     float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  int (*finalize)(void* ctx);
};
struct TunerV4 {
  const char* name;
  int (*init)(std::size_t nRanks, std::size_t nNodes, Logger log, void** ctx);
  int (*getCollInfo)(void* ctx, int collType, std::size_t nBytes, int numPipeOps,
                     float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  int (*destroy)(void* ctx);
};

constexpr int kBroadcast = 0, kAllGather = 2, kAllReduce = 4;
constexpr int kTree = 0, kRing = 1, kPat = 6;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;

// NCCL's logger is a C variadic function; the test keeps what the tuner said.
std::vector<std::string>& logged() {
  static std::vector<std::string> lines;
  return lines;
}
void capture_log(int level, unsigned long, const char*, int, const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  logged().push_back(std::to_string(level) + " " + buffer);
}

struct CostTable {
  float cost[7][3];
  CostTable() {
    for (int a = 0; a < 7; ++a)
      for (int p = 0; p < 3; ++p) cost[a][p] = 100.0f + static_cast<float>(a * 3 + p);
    cost[kPat][kLL] = -1.0f;  // NCCL marks pairs it cannot use with −1
  }
  float** as_nccl_passes_it() { return reinterpret_cast<float**>(cost); }
  bool operator==(const CostTable& other) const {
    for (int a = 0; a < 7; ++a)
      for (int p = 0; p < 3; ++p)
        if (cost[a][p] != other.cost[a][p]) return false;
    return true;
  }
};

TunerV5& tuner_v5() {
  return *symbol<TunerV5*>(open_shim(), "ncclTunerPlugin_v5");
}

void* init_v5(std::size_t nranks, std::size_t nnodes) {
  NvlDomainInfo nvl{1, static_cast<int>(nranks), static_cast<int>(nranks)};
  TunerConstants constants{};
  void* context = reinterpret_cast<void*>(0x1);
  REQUIRE(tuner_v5().init(&context, 0x1234, nranks, nnodes, capture_log, &nvl, &constants) == 0);
  return context;
}

}  // namespace

TEST_CASE("tuner: without WEFT_TUNER_CONFIG nothing changes") {
  unsetenv("WEFT_TUNER_CONFIG");
  logged().clear();
  TunerV5& tuner = tuner_v5();
  CHECK(std::string(tuner.name) == "Weft");
  void* context = init_v5(8, 1);
  for (int coll : {kBroadcast, kAllGather, kAllReduce}) {
    for (std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20, std::size_t{1} << 30}) {
      CostTable table;
      const CostTable before;
      int channels = 0;
      CHECK(tuner.getCollInfo(context, coll, bytes, 1, table.as_nccl_passes_it(), 7, 3, 0,
                              &channels) == 0);
      CHECK(table == before);
      CHECK(channels == 0);
    }
  }
  CHECK(tuner.finalize(context) == 0);
}

TEST_CASE("tuner: config rules steer NCCL's algorithm, protocol and channels") {
  TempDir dir;
  const std::string config = dir.write("tuner.csv",
                                       "# Weft tuner test\n"
                                       "allreduce,0,65535,tree,ll,2,1,8\n"
                                       "allreduce,65536,-1,ring,simple,-1,-1,-1\n"
                                       "allgather,0,-1,pat,ll,4,-1,-1\n"  // PAT/LL is −1 below
                                       "allgather,0,-1,ring,ll128,4,-1,-1\n"
                                       "allreduce,0,100,warp,ll,1,1,1\n");  // bad: reported
  setenv("WEFT_TUNER_CONFIG", config.c_str(), 1);
  logged().clear();
  TunerV5& tuner = tuner_v5();
  void* context = init_v5(8, 1);
  unsetenv("WEFT_TUNER_CONFIG");
  bool warned = false;
  for (const std::string& line : logged()) {
    if (line.rfind("2 ", 0) == 0 && line.find("tuner.csv:6") != std::string::npos) warned = true;
  }
  CHECK(warned);

  CostTable table;
  int channels = 0;
  REQUIRE(tuner.getCollInfo(context, kAllReduce, 4096, 1, table.as_nccl_passes_it(), 7, 3, 0,
                            &channels) == 0);
  CHECK(table.cost[kTree][kLL] == 0.0f);
  CHECK(table.cost[kRing][kSimple] == 100.0f + 5);
  CHECK(channels == 2);

  table = CostTable();
  channels = 0;
  REQUIRE(tuner.getCollInfo(context, kAllReduce, 1 << 20, 1, table.as_nccl_passes_it(), 7, 3, 0,
                            &channels) == 0);
  CHECK(table.cost[kRing][kSimple] == 0.0f);
  CHECK(channels == 0);

  // The PAT/LL rule names a pair NCCL disallowed: the next rule applies instead.
  table = CostTable();
  REQUIRE(tuner.getCollInfo(context, kAllGather, 1 << 20, 1, table.as_nccl_passes_it(), 7, 3, 0,
                            &channels) == 0);
  CHECK(table.cost[kPat][kLL] == -1.0f);
  CHECK(table.cost[kRing][kLL128] == 0.0f);
  CHECK(channels == 4);

  // Broadcast has no rule: unchanged.
  table = CostTable();
  channels = 0;
  REQUIRE(tuner.getCollInfo(context, kBroadcast, 64, 1, table.as_nccl_passes_it(), 7, 3, 0,
                            &channels) == 0);
  CHECK(table == CostTable());
  CHECK(tuner.finalize(context) == 0);

  // A communicator of 16 ranks misses the first rule's nRanks=8.
  setenv("WEFT_TUNER_CONFIG", config.c_str(), 1);
  void* wide = init_v5(16, 2);
  unsetenv("WEFT_TUNER_CONFIG");
  table = CostTable();
  REQUIRE(tuner.getCollInfo(wide, kAllReduce, 4096, 1, table.as_nccl_passes_it(), 7, 3, 0,
                            &channels) == 0);
  CHECK(table == CostTable());
  CHECK(tuner.finalize(wide) == 0);
}

TEST_CASE("tuner: the v4 interface behaves the same") {
  TempDir dir;
  const std::string config = dir.write("tuner.csv", "allreduce,0,-1,ring,ll128,-1,-1,-1\n");
  setenv("WEFT_TUNER_CONFIG", config.c_str(), 1);
  auto& tuner = *symbol<TunerV4*>(open_shim(), "ncclTunerPlugin_v4");
  void* context = nullptr;
  REQUIRE(tuner.init(4, 1, capture_log, &context) == 0);
  unsetenv("WEFT_TUNER_CONFIG");
  CostTable table;
  int channels = 0;
  REQUIRE(tuner.getCollInfo(context, kAllReduce, 1024, 1, table.as_nccl_passes_it(), 7, 3, 0,
                            &channels) == 0);
  CHECK(table.cost[kRing][kLL128] == 0.0f);
  CHECK(tuner.destroy(context) == 0);
}

TEST_CASE("tuner: a missing config file is reported and never an error") {
  setenv("WEFT_TUNER_CONFIG", "/nonexistent/weft-tuner.csv", 1);
  logged().clear();
  void* context = init_v5(8, 1);
  unsetenv("WEFT_TUNER_CONFIG");
  CostTable table;
  int channels = 0;
  CHECK(tuner_v5().getCollInfo(context, kAllReduce, 1024, 1, table.as_nccl_passes_it(), 7, 3, 0,
                               &channels) == 0);
  CHECK(table == CostTable());
  bool reported = false;
  for (const std::string& line : logged()) {
    if (line.find("/nonexistent/weft-tuner.csv") != std::string::npos) reported = true;
  }
  CHECK(reported);
  CHECK(tuner_v5().finalize(context) == 0);
  CHECK(tuner_v5().getCollInfo(nullptr, kAllReduce, 1024, 1, table.as_nccl_passes_it(), 7, 3, 0,
                               &channels) == 0);
}
