// Every algorithm of the compiler's library, compiled at 2, 3, 4 and 8 ranks where its shape
// allows, in Simple, LL and LL128, run by the interpreter in host mode in place and out of place,
// element by element against the CPU reference executor, with chunks of several tiles whose last
// is partial and whose rows start off 16-byte boundaries. The (type, operator) pair moves on with
// every call, so that each algorithm meets several of the 28 pairs of float, half, bfloat16, int8,
// int64, double × sum, prod, min, max, avg (types_test.cpp runs all of them on fewer shapes).
#include <fmt/format.h>

#include "kernel_host_support.h"
#include "weft/algorithms/library.h"
#include "weft/compiler/compiler.h"
#include "weft/dsl/dsl.h"

namespace weft::gpu::testing {
namespace {

struct Shape {
  int ranks;
  int nodes;
  int gpus;
};

std::vector<Shape> shapes_for(const dsl::AlgorithmInfo& info) {
  if (info.shape == dsl::Shape::NodesTimesGpus) return {{2, 2, 1}, {3, 1, 3}, {4, 2, 2}, {8, 2, 4}};
  std::vector<Shape> shapes;
  for (const int n : {2, 3, 4, 8}) {
    if (info.shape == dsl::Shape::PowerOfTwoRanks && (n & (n - 1)) != 0) continue;
    if (n < info.min_ranks) continue;
    shapes.push_back({n, 0, 0});
  }
  return shapes;
}

void run_library_algorithm(const std::string& name) {
  dsl::Registry registry;
  algorithms::register_library(registry);
  const dsl::AlgorithmInfo* info = registry.find(name);
  REQUIRE(info != nullptr);
  const auto pairs = type_op_pairs(kMatrixTypes);
  // Where each algorithm starts in the rotation, so that algorithms meet different pairs.
  std::size_t next = std::hash<std::string>{}(name) % pairs.size();
  int calls = 0;
  for (const Shape& shape : shapes_for(*info)) {
    for (const ir::Protocol proto : kProtocols) {
      dsl::AlgorithmParams params;
      params.ranks = shape.ranks;
      params.nodes = shape.nodes;
      params.gpus_per_node = shape.gpus;
      params.protocol = proto;
      params.root = shape.ranks - 1;
      REQUIRE_FALSE(dsl::check_shape(*info, params));
      compiler::CompileOptions options;
      options.verify.seeds = 1;
      const compiler::CompileResult compiled = compiler::compile(info->build(params), options);
      INFO(fmt::format("{} at {} ranks, {}", name, shape.ranks, ir::to_string(proto)));
      INFO(compiled.error_text());
      REQUIRE(compiled.ok());
      auto e = emulate_on_host(*compiled.algorithm, line_options());
      for (const bool in_place : {false, true}) {
        if ((in_place && !e->algorithm.inplace) || (!in_place && !e->algorithm.outofplace)) {
          continue;
        }
        const auto [dtype, op] = pairs[next++ % pairs.size()];
        CHECK(run_checked(*e, {kLongChunk, dtype, op, in_place, params.root}) == 0);
        ++calls;
      }
    }
  }
  CHECK(calls > 0);
  report_calls(name.c_str(), calls);
}

TEST_CASE("library: allreduce_ring", "[kernel-host][library]") {
  run_library_algorithm("allreduce_ring");
}
TEST_CASE("library: allreduce_allpairs", "[kernel-host][library]") {
  run_library_algorithm("allreduce_allpairs");
}
TEST_CASE("library: allreduce_recursive_halving_doubling", "[kernel-host][library]") {
  run_library_algorithm("allreduce_recursive_halving_doubling");
}
TEST_CASE("library: allreduce_double_binary_tree", "[kernel-host][library]") {
  run_library_algorithm("allreduce_double_binary_tree");
}
TEST_CASE("library: allreduce_hierarchical", "[kernel-host][library]") {
  run_library_algorithm("allreduce_hierarchical");
}
TEST_CASE("library: allgather_ring", "[kernel-host][library]") {
  run_library_algorithm("allgather_ring");
}
TEST_CASE("library: allgather_direct", "[kernel-host][library]") {
  run_library_algorithm("allgather_direct");
}
TEST_CASE("library: allgather_recursive_doubling", "[kernel-host][library]") {
  run_library_algorithm("allgather_recursive_doubling");
}
TEST_CASE("library: reducescatter_ring", "[kernel-host][library]") {
  run_library_algorithm("reducescatter_ring");
}
TEST_CASE("library: reducescatter_allpairs", "[kernel-host][library]") {
  run_library_algorithm("reducescatter_allpairs");
}
TEST_CASE("library: alltoall_direct", "[kernel-host][library]") {
  run_library_algorithm("alltoall_direct");
}
TEST_CASE("library: alltoall_two_step", "[kernel-host][library]") {
  run_library_algorithm("alltoall_two_step");
}
TEST_CASE("library: broadcast_chain", "[kernel-host][library]") {
  run_library_algorithm("broadcast_chain");
}
TEST_CASE("library: broadcast_binomial_tree", "[kernel-host][library]") {
  run_library_algorithm("broadcast_binomial_tree");
}
TEST_CASE("library: reduce_chain", "[kernel-host][library]") {
  run_library_algorithm("reduce_chain");
}
TEST_CASE("library: reduce_binomial_tree", "[kernel-host][library]") {
  run_library_algorithm("reduce_binomial_tree");
}
TEST_CASE("library: all_to_next (a custom collective)", "[kernel-host][library]") {
  run_library_algorithm("all_to_next");
}

// A new algorithm in the library must be added above.
TEST_CASE("library: every algorithm of the library has a test case here", "[kernel-host]") {
  dsl::Registry registry;
  algorithms::register_library(registry);
  CHECK(registry.algorithms().size() == 17);
}

}  // namespace
}  // namespace weft::gpu::testing
