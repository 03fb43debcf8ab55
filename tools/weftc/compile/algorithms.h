// The algorithms `weftc compile` and `weftc list` know: the library's, and those of every
// `--load`ed shared library.
#pragma once

#include <string>
#include <vector>

#include "weft/compiler/algorithm_library.h"
#include "weft/dsl/registry.h"

#include <CLI/CLI.hpp>

namespace weft::weftc {

struct KnownAlgorithms {
  // Declared before the registry so that the registry (whose entries run library code) is
  // destroyed first.
  std::vector<compiler::AlgorithmLibrary> libraries;
  dsl::Registry registry;
};

// The library's algorithms plus those of `load`; false (with the reason printed) when a library
// cannot be loaded.
bool collect_algorithms(const std::vector<std::string>& load, KnownAlgorithms& known);

// Registers `--load LIB` (repeatable) on `cmd`.
void add_load_option(CLI::App& cmd, std::vector<std::string>& load);

}  // namespace weft::weftc
