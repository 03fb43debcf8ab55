#include "weft/compiler/algorithm_library.h"

#include <dlfcn.h>

#include <cstring>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "weft/version.h"

namespace weft::compiler {
namespace {

// dlopen's reason, with what it means for a library of algorithms where that is known.
std::string explain_load_failure(const std::string& path, const std::string& reason) {
  // Weft's libraries carry the exact version in their soname (libweft_dsl.so.0.1.0): a library
  // built against another version asks for a file this installation does not have.
  const std::size_t name = reason.find("libweft_");
  const std::size_t suffix = name == std::string::npos ? name : reason.find(".so.", name);
  if (suffix != std::string::npos) {
    const std::size_t first = suffix + 4;
    const std::size_t last = reason.find_first_not_of("0123456789.", first);
    const std::string version = reason.substr(first, last - first);
    if (!version.empty() && version != WEFT_VERSION_STRING) {
      return fmt::format(
          "cannot load {}: it was built against Weft {} (it needs {}), and this is Weft {}: "
          "rebuild it against this version",
          path, version, reason.substr(name, last - name), WEFT_VERSION_STRING);
    }
  }
  if (reason.find("undefined symbol") != std::string::npos) {
    return fmt::format(
        "cannot load {}: {} (a library of algorithms links Weft::dsl, or -lweft_dsl, of the Weft "
        "{} that loads it)",
        path, reason, WEFT_VERSION_STRING);
  }
  return fmt::format("cannot load {}: {}", path, reason);
}

// The version the library was compiled against, when the library itself defines the stamp (a
// stamp found in one of its dependencies, libweft_dsl.so say, says nothing about the library).
std::optional<std::string> stamped_version(void* handle, void* entry_point) {
  void* stamp = dlsym(handle, dsl::kVersionSymbol);
  Dl_info stamp_info{};
  Dl_info entry_info{};
  if (!stamp || !dladdr(stamp, &stamp_info) || !dladdr(entry_point, &entry_info) ||
      stamp_info.dli_fbase != entry_info.dli_fbase) {
    return std::nullopt;
  }
  // A version string is short; a symbol of that name that is not one must not be read far.
  constexpr std::size_t kLongest = 64;
  const char* text = static_cast<const char*>(stamp);
  const std::size_t length = strnlen(text, kLongest);
  if (length == kLongest) return std::string("(unreadable)");
  return std::string(text, length);
}

}  // namespace

std::optional<AlgorithmLibrary> AlgorithmLibrary::load(const std::string& path,
                                                       dsl::Registry& registry,
                                                       std::string* error) {
  const auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  // dlopen searches the library path for names without a slash; a user passing "libmine.so"
  // means the file here.
  const std::string where = path.find('/') == std::string::npos ? "./" + path : path;
  // Functions are bound lazily: a library built against another Weft may name functions this one
  // lacks, and the version check below then refuses it before anything in it runs.
  void* handle = dlopen(where.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle) {
    const char* reason = dlerror();
    return fail(explain_load_failure(path, reason ? reason : "unknown reason"));
  }
  AlgorithmLibrary library(handle, path);
  void* symbol = dlsym(handle, dsl::kRegisterSymbol);
  if (!symbol) {
    return fail(fmt::format(
        "{} is not a library of Weft algorithms: it does not export {} (declare it extern \"C\")",
        path, dsl::kRegisterSymbol));
  }
  const std::optional<std::string> version = stamped_version(handle, symbol);
  if (!version) {
    return fail(fmt::format(
        "{} does not say which Weft it was built against ({} is missing; it is defined by "
        "weft/dsl/registry.h since Weft 0.1.0): rebuild it against this Weft, {}",
        path, dsl::kVersionSymbol, WEFT_VERSION_STRING));
  }
  if (*version != WEFT_VERSION_STRING) {
    return fail(fmt::format(
        "{} was built against Weft {}, and this is Weft {}: rebuild it against this version", path,
        *version, WEFT_VERSION_STRING));
  }
  const auto reg = reinterpret_cast<dsl::RegisterFunction>(symbol);
  // Registered into a registry of its own first: a failure then leaves the caller's untouched
  // (and none of its entries pointing into a library about to be unloaded). Declared after
  // `library`, so destroyed before the library is closed.
  dsl::Registry added;
  try {
    reg(&added);
  } catch (const std::exception& e) {
    return fail(fmt::format("{}: registering its algorithms failed: {}", path, e.what()));
  } catch (...) {
    return fail(fmt::format(
        "{}: registering its algorithms failed: it threw something that is not a std::exception",
        path));
  }
  for (const dsl::AlgorithmInfo& info : added.algorithms()) {
    if (registry.find(info.name)) {
      return fail(fmt::format("{}: algorithm '{}' is already registered", path, info.name));
    }
  }
  for (const dsl::AlgorithmInfo& info : added.algorithms()) registry.add(info);
  return library;
}

AlgorithmLibrary::AlgorithmLibrary(AlgorithmLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

AlgorithmLibrary& AlgorithmLibrary::operator=(AlgorithmLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

AlgorithmLibrary::~AlgorithmLibrary() {
  if (handle_) dlclose(handle_);
}

}  // namespace weft::compiler
