// User algorithms in a shared library: loaded into a registry, compiled like the library's.
#include <catch2/catch.hpp>

#include "compiler_test_support.h"
#include "weft/algorithms/library.h"
#include "weft/compiler/algorithm_library.h"

using namespace weft;

TEST_CASE("a user library registers its algorithms through weft_register_algorithms",
          "[compiler][plugin]") {
  // The library outlives the registry that holds its builders.
  std::string error;
  std::optional<compiler::AlgorithmLibrary> library;
  {
    dsl::Registry registry;
    library = compiler::AlgorithmLibrary::load(WEFT_USER_ALGORITHMS_LIBRARY, registry, &error);
    INFO(error);
    REQUIRE(library.has_value());
    const dsl::AlgorithmInfo* info = registry.find("my_allgather_reverse_ring");
    REQUIRE(info != nullptr);
    CHECK(info->collective == "allgather");
    dsl::AlgorithmParams params;
    params.ranks = 5;
    const dsl::Program program = info->build(params);
    const compiler::CompileResult result = compiler::compile(program, test::quick());
    INFO(result.error_text());
    CHECK(result.ok());

    SECTION("loading it twice is refused without touching the registry") {
      const std::size_t before = registry.algorithms().size();
      CHECK_FALSE(compiler::AlgorithmLibrary::load(WEFT_USER_ALGORITHMS_LIBRARY, registry, &error));
      CHECK_THAT(error, Catch::Contains("'my_allgather_reverse_ring' is already registered"));
      CHECK(registry.algorithms().size() == before);
    }
  }
}

TEST_CASE("a user library adds to the library's algorithms", "[compiler][plugin]") {
  dsl::Registry registry;
  algorithms::register_library(registry);
  std::string error;
  auto first = compiler::AlgorithmLibrary::load(WEFT_USER_ALGORITHMS_LIBRARY, registry, &error);
  REQUIRE(first.has_value());
  CHECK(registry.algorithms().size() == 18);
}

TEST_CASE("a missing library is a clear error", "[compiler][plugin]") {
  dsl::Registry registry;
  std::string error;
  CHECK_FALSE(compiler::AlgorithmLibrary::load("/nonexistent/libmine.so", registry, &error));
  CHECK_THAT(error, Catch::StartsWith("cannot load /nonexistent/libmine.so"));
  CHECK(registry.algorithms().empty());
}
