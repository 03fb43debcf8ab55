// Every library algorithm compiles and verifies at 2, 3, 4, 8, 16 and 64 ranks where its shape
// allows (powers of two for recursive ones, nodes × GPUs for hierarchical ones), in every
// protocol, and its output obeys MSCCL's limits.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "compiler_test_support.h"
#include "weft/algorithms/library.h"
#include "weft/ir/validate.h"

using namespace weft;

namespace {

struct Shape {
  int ranks;
  int nodes;
  int gpus;
};

std::vector<Shape> shapes_for(const dsl::AlgorithmInfo& info) {
  std::vector<Shape> shapes;
  if (info.shape == dsl::Shape::NodesTimesGpus) {
    for (const auto& [a, g] : std::vector<std::pair<int, int>>{{1, 2},
                                                               {2, 1},
                                                               {1, 3},
                                                               {3, 1},
                                                               {2, 2},
                                                               {2, 4},
                                                               {4, 2},
                                                               {2, 8},
                                                               {4, 4},
                                                               {8, 8},
                                                               {4, 16}}) {
      shapes.push_back({a * g, a, g});
    }
    return shapes;
  }
  for (const int n : {2, 3, 4, 8, 16, 64}) {
    if (info.shape == dsl::Shape::PowerOfTwoRanks && (n & (n - 1)) != 0) continue;
    shapes.push_back({n, 0, 0});
  }
  return shapes;
}

void compile_everywhere(const std::string& name) {
  dsl::Registry registry;
  algorithms::register_library(registry);
  const dsl::AlgorithmInfo* info = registry.find(name);
  REQUIRE(info != nullptr);
  for (const Shape& shape : shapes_for(*info)) {
    for (const ir::Protocol proto : {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
      dsl::AlgorithmParams params;
      params.ranks = shape.ranks;
      params.nodes = shape.nodes;
      params.gpus_per_node = shape.gpus;
      params.protocol = proto;
      params.root = shape.ranks - 1;
      REQUIRE_FALSE(dsl::check_shape(*info, params));
      const dsl::Program program = info->build(params);
      const compiler::CompileResult result = compiler::compile(program, test::quick());
      INFO(fmt::format("{} at {} ranks ({}×{}), {}", name, shape.ranks, shape.nodes, shape.gpus,
                       ir::to_string(proto)));
      INFO(result.error_text());
      REQUIRE(result.ok());
      CHECK(result.algorithm->protocol == proto);
      CHECK(result.algorithm->ngpus == shape.ranks);
      // Every algorithm of the library fits MSCCL's executor at these sizes.
      const Diagnostics lint = ir::validate(*result.algorithm, ir::msccl_limits());
      INFO(lint.str());
      CHECK_FALSE(lint.has_errors());
    }
  }
}

}  // namespace

TEST_CASE("library: allreduce_ring", "[library]") {
  compile_everywhere("allreduce_ring");
}
TEST_CASE("library: allreduce_allpairs", "[library]") {
  compile_everywhere("allreduce_allpairs");
}
TEST_CASE("library: allreduce_recursive_halving_doubling", "[library]") {
  compile_everywhere("allreduce_recursive_halving_doubling");
}
TEST_CASE("library: allreduce_double_binary_tree", "[library]") {
  compile_everywhere("allreduce_double_binary_tree");
}
TEST_CASE("library: allreduce_hierarchical", "[library]") {
  compile_everywhere("allreduce_hierarchical");
}
TEST_CASE("library: allgather_ring", "[library]") {
  compile_everywhere("allgather_ring");
}
TEST_CASE("library: allgather_direct", "[library]") {
  compile_everywhere("allgather_direct");
}
TEST_CASE("library: allgather_recursive_doubling", "[library]") {
  compile_everywhere("allgather_recursive_doubling");
}
TEST_CASE("library: reducescatter_ring", "[library]") {
  compile_everywhere("reducescatter_ring");
}
TEST_CASE("library: reducescatter_allpairs", "[library]") {
  compile_everywhere("reducescatter_allpairs");
}
TEST_CASE("library: alltoall_direct", "[library]") {
  compile_everywhere("alltoall_direct");
}
TEST_CASE("library: alltoall_two_step", "[library]") {
  compile_everywhere("alltoall_two_step");
}
TEST_CASE("library: broadcast_chain", "[library]") {
  compile_everywhere("broadcast_chain");
}
TEST_CASE("library: broadcast_binomial_tree", "[library]") {
  compile_everywhere("broadcast_binomial_tree");
}
TEST_CASE("library: reduce_chain", "[library]") {
  compile_everywhere("reduce_chain");
}
TEST_CASE("library: reduce_binomial_tree", "[library]") {
  compile_everywhere("reduce_binomial_tree");
}
TEST_CASE("library: all_to_next", "[library]") {
  compile_everywhere("all_to_next");
}

TEST_CASE("library: every registered algorithm is covered above", "[library]") {
  dsl::Registry registry;
  algorithms::register_library(registry);
  CHECK(registry.algorithms().size() == 17);
}

TEST_CASE("library: out-of-place calls, roots, instances and channels", "[library]") {
  dsl::Registry registry;
  algorithms::register_library(registry);
  for (const dsl::AlgorithmInfo& info : registry.algorithms()) {
    for (const bool in_place : {false, true}) {
      for (const int instances : {1, 2}) {
        dsl::AlgorithmParams params;
        params.ranks = 8;
        if (info.shape == dsl::Shape::NodesTimesGpus) {
          params.nodes = 2;
          params.gpus_per_node = 4;
        }
        params.in_place = in_place;
        params.instances = instances;
        params.channels = 2;
        params.root = 3;
        const dsl::Program program = info.build(params);
        const compiler::CompileResult result = compiler::compile(program, test::quick());
        INFO(fmt::format("{}, {}, {} instance(s)", info.name,
                         in_place ? "in place" : "out of place", instances));
        INFO(result.error_text());
        REQUIRE(result.ok());
        CHECK(result.algorithm->inplace == program.collective().in_place());
        CHECK(result.algorithm->nchunksperloop ==
              program.collective().chunks_per_loop() * instances);
      }
    }
  }
}

TEST_CASE("library: two-step alltoall in place, blocks from the same node staged in scratch",
          "[library]") {
  for (const auto& [nodes, gpus] :
       std::vector<std::pair<int, int>>{{1, 2}, {2, 1}, {2, 2}, {2, 4}, {4, 2}, {3, 3}, {8, 8}}) {
    for (const ir::Protocol proto : {ir::Protocol::Simple, ir::Protocol::LL}) {
      dsl::AlgorithmParams params;
      params.ranks = nodes * gpus;
      params.nodes = nodes;
      params.gpus_per_node = gpus;
      params.protocol = proto;
      params.in_place = true;
      const dsl::Program program = algorithms::alltoall_two_step(params);
      const compiler::CompileResult result = compiler::compile(program, test::quick());
      INFO(fmt::format("{}×{}, {}", nodes, gpus, ir::to_string(proto)));
      INFO(result.error_text());
      REQUIRE(result.ok());
      CHECK(result.algorithm->inplace);
      CHECK_FALSE(result.algorithm->outofplace);
      const Diagnostics lint = ir::validate(*result.algorithm, ir::msccl_limits());
      INFO(lint.str());
      CHECK_FALSE(lint.has_errors());
    }
  }
}
