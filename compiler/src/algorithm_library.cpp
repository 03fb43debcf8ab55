#include "weft/compiler/algorithm_library.h"

#include <dlfcn.h>

#include <exception>
#include <utility>

#include <fmt/format.h>

namespace weft::compiler {

std::optional<AlgorithmLibrary> AlgorithmLibrary::load(const std::string& path,
                                                       dsl::Registry& registry,
                                                       std::string* error) {
  // dlopen searches the library path for names without a slash; a user passing "libmine.so"
  // means the file here.
  const std::string where = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(where.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    if (error) *error = fmt::format("cannot load {}: {}", path, dlerror());
    return std::nullopt;
  }
  AlgorithmLibrary library(handle, path);
  void* symbol = dlsym(handle, dsl::kRegisterSymbol);
  if (!symbol) {
    if (error) {
      *error = fmt::format("{} does not export {} (declare it extern \"C\")", path,
                           dsl::kRegisterSymbol);
    }
    return std::nullopt;
  }
  const auto reg = reinterpret_cast<dsl::RegisterFunction>(symbol);
  // Registered into a registry of its own first: a failure then leaves the caller's untouched
  // (and none of its entries pointing into a library about to be unloaded).
  dsl::Registry added;
  try {
    reg(&added);
  } catch (const std::exception& e) {
    if (error) *error = fmt::format("{}: registering its algorithms failed: {}", path, e.what());
    return std::nullopt;
  }
  for (const dsl::AlgorithmInfo& info : added.algorithms()) {
    if (registry.find(info.name)) {
      if (error) *error = fmt::format("{}: algorithm '{}' is already registered", path, info.name);
      return std::nullopt;
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
