// No exception crosses the C ABI: what guarded() gives for each kind of exception.
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "api_guard.h"

TEST_CASE("api guard: anything thrown becomes a code and one report; results pass through") {
  std::vector<std::string> reports;
  auto report = [&](const char* api, const char* what, ncclResult_t code) noexcept {
    reports.push_back(std::string(api) + ": " + what);
    return code;
  };
  using weft::plugin::guarded;
  CHECK(guarded(
            "ncclA", [] { return ncclInProgress; }, report) == ncclInProgress);
  CHECK(reports.empty());
  CHECK(guarded(
            "ncclB", []() -> ncclResult_t { throw std::bad_alloc(); }, report) == ncclSystemError);
  CHECK(guarded(
            "ncclC", []() -> ncclResult_t { throw std::runtime_error("broken"); }, report) ==
        ncclInternalError);
  CHECK(guarded(
            "ncclD", []() -> ncclResult_t { throw 42; }, report) == ncclInternalError);
  CHECK(reports == std::vector<std::string>{"ncclB: out of memory", "ncclC: broken",
                                            "ncclD: an exception of unknown type"});
}
