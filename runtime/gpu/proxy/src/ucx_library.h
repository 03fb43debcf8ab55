// UCX's entry points, resolved from libucp.so.0 at run time (as NCCL loads libibverbs): a build
// made with UCX's headers runs on a machine without UCX, where only the proxy is unavailable,
// and says so. One table per engine; dlopen counts the references.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

#include "weft/program/status.h"

namespace weft::proxy::ucx {

struct Library {
  void* handle = nullptr;
#define WEFT_UCX_FUNCTION(name) decltype(&::name) name = nullptr;
#include "ucx_functions.inc"
#undef WEFT_UCX_FUNCTION

  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library();

  // Loads `path` (libucp.so.0) and every entry point; fails naming the library or the missing
  // symbol.
  gpu::Status open(const std::string& path);
  std::string status_string(ucs_status_t status) const;
};

}  // namespace weft::proxy::ucx
