#include "algorithms.h"

#include <fmt/format.h>

#ifdef WEFT_HAVE_ALGORITHM_LIBRARY
#include "weft/algorithms/library.h"
#endif

namespace weft::weftc {

bool collect_algorithms(const std::vector<std::string>& load, KnownAlgorithms& known) {
#ifdef WEFT_HAVE_ALGORITHM_LIBRARY
  algorithms::register_library(known.registry);
#endif
  for (const std::string& path : load) {
    std::string error;
    std::optional<compiler::AlgorithmLibrary> library =
        compiler::AlgorithmLibrary::load(path, known.registry, &error);
    if (!library) {
      fmt::print(stderr, "weftc: {}\n", error);
      return false;
    }
    known.libraries.push_back(std::move(*library));
  }
  return true;
}

void add_load_option(CLI::App& cmd, std::vector<std::string>& load) {
  cmd.add_option("--load", load, "shared library exporting weft_register_algorithms (repeatable)")
      ->type_name("LIB.so")
      // One file per --load, so that `--load lib.so NAME` leaves NAME alone.
      ->allow_extra_args(false);
}

}  // namespace weft::weftc
