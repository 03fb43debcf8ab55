#include "version.h"

#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

#include "weft/ir/nccl_version.h"
#include "weft/version.h"

namespace weft::weftc {
namespace {

// The NCCL a Weft shim would forward to in this environment: WEFT_NCCL_LIB when set (as the shim
// honours it), else the libnccl.so.2 the dynamic loader finds.
std::string runtime_nccl() {
  const char* chosen = std::getenv("WEFT_NCCL_LIB");
  const std::string name = chosen && *chosen ? chosen : "libnccl.so.2";
  void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return fmt::format("not found ({})", why ? why : name);
  }
  std::string text;
  using GetVersion = int (*)(int*);
  const auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "ncclGetVersion"));
  int code = 0;
  Dl_info where{};
  if (!get_version) {
    text = fmt::format("{} defines no ncclGetVersion: not a libnccl", name);
  } else if (get_version(&code) != 0) {
    text = fmt::format("{}: ncclGetVersion failed", name);
  } else {
    const bool located = dladdr(reinterpret_cast<void*>(get_version), &where) && where.dli_fname;
    text = fmt::format("{} ({})", ir::nccl_version_text(code), located ? where.dli_fname : name);
  }
  dlclose(handle);
  return text;
}

}  // namespace

std::string version_text() {
#ifdef WEFT_SHIM_NCCL_VERSION
  const std::string shim = fmt::format("built against NCCL {}", WEFT_SHIM_NCCL_VERSION);
#else
  const std::string shim = "not built in this build (it needs CUDA and nccl.h)";
#endif
  return fmt::format(
      "weftc {}\n"
      "NCCL shim (libweft_nccl.so): {}\n"
      "NCCL at run time: {}",
      WEFT_VERSION_STRING, shim, runtime_nccl());
}

}  // namespace weft::weftc
