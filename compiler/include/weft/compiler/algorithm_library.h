// Loading a shared library of user algorithms: it exports
//   extern "C" void weft_register_algorithms(weft::dsl::Registry* registry);
// which adds to the caller's registry. The library stays loaded while the AlgorithmLibrary object
// lives; destroy the registry (whose entries run the library's code) first.
#pragma once

#include <optional>
#include <string>

#include "weft/dsl/registry.h"

namespace weft::compiler {

class AlgorithmLibrary {
 public:
  // Nothing, with `error` set, when the file cannot be loaded, lacks the entry point, or its
  // registration throws (a duplicate name, say).
  static std::optional<AlgorithmLibrary> load(const std::string& path, dsl::Registry& registry,
                                              std::string* error);

  AlgorithmLibrary(AlgorithmLibrary&& other) noexcept;
  AlgorithmLibrary& operator=(AlgorithmLibrary&& other) noexcept;
  AlgorithmLibrary(const AlgorithmLibrary&) = delete;
  AlgorithmLibrary& operator=(const AlgorithmLibrary&) = delete;
  ~AlgorithmLibrary();

  const std::string& path() const { return path_; }

 private:
  AlgorithmLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace weft::compiler
