#include "ucx_library.h"

#include <dlfcn.h>

#include <cstring>

#include <fmt/format.h>

namespace weft::proxy::ucx {

Library::~Library() {
  if (handle != nullptr) ::dlclose(handle);
}

gpu::Status Library::open(const std::string& path) {
  // libucp pulls in libucs (ucs_status_string), so one handle resolves both.
  handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return gpu::Status::error(
        gpu::ErrorCode::SystemError,
        fmt::format("UCX is not installed here ({}); install UCX (Debian: libucx0), or name a "
                    "site's libucp in WEFT_UCX_LIB",
                    why != nullptr ? why : path + " not found"));
  }
  // dlsym's object pointer becomes a function pointer by copying its bits (POSIX guarantees the
  // representation; a cast between the two kinds of pointer is not standard C++).
#define WEFT_UCX_FUNCTION(name)                                                            \
  if (void* symbol = ::dlsym(handle, #name); symbol != nullptr) {                          \
    std::memcpy(&name, &symbol, sizeof(symbol));                                           \
  } else {                                                                                 \
    return gpu::Status::error(gpu::ErrorCode::SystemError,                                 \
                              fmt::format("UCX's libucp.so.0 has no {}: a UCX older than " \
                                          "1.10 (ucp_put_nbx came then)",                  \
                                          #name));                                         \
  }
#include "ucx_functions.inc"
#undef WEFT_UCX_FUNCTION
  return {};
}

std::string Library::status_string(ucs_status_t status) const {
  if (ucs_status_string != nullptr) return ucs_status_string(status);
  return fmt::format("UCX status {}", static_cast<int>(status));
}

}  // namespace weft::proxy::ucx
