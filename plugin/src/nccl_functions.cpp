#include "nccl_functions.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace weft::plugin {

namespace {
// The soname every NCCL 2.x release installs, and the NCCL wheels too.
constexpr const char* kNcclSoname = "libnccl.so.2";
}  // namespace

NcclLibrary resolve_nccl(const std::string& library_path) {
  NcclLibrary library;
  void* scope = RTLD_NEXT;
  if (!library_path.empty()) {
    // RTLD_LOCAL: the opened library must not start serving the application's own ncclX
    // lookups; the shim stays the only definition the application sees.
    library.handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library.handle == nullptr) {
      const char* why = dlerror();
      library.error = fmt::format("WEFT_NCCL_LIB='{}' cannot be opened: {}", library_path,
                                  why ? why : "unknown dlopen error");
      return library;
    }
    scope = library.handle;
    library.origin = library_path;
  } else {
    library.origin = "the application's libnccl (pncclX via RTLD_NEXT)";
  }
  auto lookup = [&](const char* name, bool also_plain) -> void* {
    dlerror();
    void* symbol = dlsym(scope, (std::string("pnccl") + name).c_str());
    // With RTLD_NEXT the plain name would find the shim's own definition again when the shim is
    // itself the next object; only an explicitly opened library may answer to it.
    if (symbol == nullptr && also_plain)
      symbol = dlsym(scope, (std::string("nccl") + name).c_str());
    return symbol;
  };
  if (library.handle == nullptr) {
    dlerror();
    if (dlsym(RTLD_NEXT, "pncclGetVersion") == nullptr) {
      // Not in the global scope after the shim: a Python extension (PyTorch's libtorch_cuda) or
      // any dlopen(RTLD_LOCAL) brings libnccl in a local scope, where RTLD_NEXT cannot see it.
      // If it is loaded, take that very library; RTLD_NOLOAD never loads one of its own.
      library.handle = dlopen(kNcclSoname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (library.handle != nullptr) {
        scope = library.handle;
        library.origin = fmt::format("the application's {} (loaded in a local scope)", kNcclSoname);
      }
    }
  }
  const bool explicit_library = library.handle != nullptr;
#define WEFT_NCCL_RESOLVE(name) \
  library.functions.name =      \
      reinterpret_cast<decltype(library.functions.name)>(lookup(#name, explicit_library));
  WEFT_NCCL_FUNCTIONS(WEFT_NCCL_RESOLVE)
#undef WEFT_NCCL_RESOLVE
  library.found = library.functions.GetVersion != nullptr;
  if (!library.found) {
    library.error =
        explicit_library
            ? fmt::format("'{}' defines neither pncclGetVersion nor ncclGetVersion: not a libnccl",
                          library_path.empty() ? kNcclSoname : library_path)
            : "no real NCCL found: the application does not link libnccl (pncclGetVersion is not "
              "defined after the shim, and no libnccl.so.2 is loaded); set "
              "WEFT_NCCL_LIB=/path/to/libnccl.so, or "
              "WEFT_STANDALONE=1 "
              "to run without NCCL";
  }
  return library;
}

}  // namespace weft::plugin
