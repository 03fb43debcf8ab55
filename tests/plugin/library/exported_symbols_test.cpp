// libweft_nccl.so defines every function nccl.h declares, and exports nothing else but the tuner
// plugin symbols. The list comes from the nccl.h the library was built against, read at test
// time, so a function added to the header cannot be missed silently.
#include <dlfcn.h>

#include <cstdio>
#include <regex>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "library_test_support.h"

namespace {

using namespace weft::plugin::testing;

// Every ncclX function declared in nccl.h (not the pncclX profiling aliases, which stay the
// real NCCL's).
std::set<std::string> declared_functions() {
  const std::string header = read_text(WEFT_NCCL_HEADER);
  // A return type, then the name and its opening parenthesis; attributes may sit on the line
  // before. Comments and macros never start with one of these return types.
  const std::regex declaration(
      R"((?:^|\n)\s*(?:ncclResult_t|const\s+char\s*\*|void)\s+(nccl[A-Z]\w*)\s*\()");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), declaration);
       it != std::sregex_iterator(); ++it) {
    names.insert((*it)[1].str());
  }
  return names;
}

std::set<std::string> exported_symbols() {
  const std::string command = std::string("nm -D --defined-only ") + WEFT_NCCL_SHIM;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::set<std::string> names;
  char line[1024];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    // "<address> <type> <name>[@version]"
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    const auto last_space = text.rfind(' ');
    if (last_space == std::string::npos) continue;
    std::string name = text.substr(last_space + 1);
    if (const auto at = name.find('@'); at != std::string::npos) name.resize(at);
    names.insert(name);
  }
  REQUIRE(pclose(pipe) == 0);
  return names;
}

}  // namespace

TEST_CASE("symbols: nccl.h 2.28 declares the functions the shim was written for") {
  const auto names = declared_functions();
  // Sanity of the parser: a few from each part of the header.
  for (const char* name : {"ncclGetVersion", "ncclCommInitRankScalable", "ncclGetErrorString",
                           "ncclResetDebugInit", "ncclAlltoAll", "ncclGroupSimulateEnd"}) {
    CHECK(names.count(name) == 1);
  }
  CHECK(names.size() >= 41);
}

TEST_CASE("symbols: the library defines every NCCL API function itself") {
  void* shim = open_shim();
  for (const std::string& name : declared_functions()) {
    INFO(name);
    void* address = dlsym(shim, name.c_str());
    REQUIRE(address != nullptr);
    // Defined in the shim, not found in some library it depends on.
    Dl_info info{};
    REQUIRE(dladdr(address, &info) != 0);
    CHECK(std::string(info.dli_fname).find("libweft_nccl.so") != std::string::npos);
  }
}

TEST_CASE("symbols: only the NCCL API and the tuner plugin are exported") {
  std::set<std::string> expected = declared_functions();
  expected.insert("ncclTunerPlugin_v5");
  expected.insert("ncclTunerPlugin_v4");
  std::set<std::string> exported = exported_symbols();
  // The linker's own markers are not ours to hide.
  for (const char* marker : {"_init", "_fini", "_edata", "_end", "__bss_start"})
    exported.erase(marker);
  CHECK(exported == expected);
}
