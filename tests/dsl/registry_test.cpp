// The algorithm registry and parameter shapes.
#include <catch2/catch.hpp>

#include "weft/dsl/dsl.h"

namespace dsl = weft::dsl;

namespace {

dsl::Program tiny(const dsl::AlgorithmParams& params) {
  dsl::Program p("tiny", dsl::Collective::broadcast(params.ranks, params.root, 1),
                 params.options());
  for (int r = 0; r < params.ranks; ++r) {
    if (r != params.root) p.chunk(params.root, dsl::input, 0).copy(r, dsl::input, 0);
  }
  return p;
}

}  // namespace

TEST_CASE("a registry finds what was added and refuses duplicates", "[dsl][registry]") {
  dsl::Registry registry;
  registry.add({"tiny", "broadcast", "one hop", dsl::Shape::AnyRanks, 2, tiny});
  REQUIRE(registry.find("tiny") != nullptr);
  CHECK(registry.find("other") == nullptr);
  CHECK_THROWS_AS(registry.add({"tiny", "broadcast", "again", dsl::Shape::AnyRanks, 2, tiny}),
                  std::invalid_argument);
  CHECK_THROWS_AS(registry.add({"nobuilder", "broadcast", "", dsl::Shape::AnyRanks, 2, nullptr}),
                  std::invalid_argument);
  dsl::AlgorithmParams params;
  params.ranks = 3;
  params.root = 2;
  params.protocol = weft::ir::Protocol::LL;
  const dsl::Program p = registry.find("tiny")->build(params);
  CHECK(p.operations().size() == 2);
  CHECK(p.options().protocol == weft::ir::Protocol::LL);
}

TEST_CASE("shapes say what parameters fit", "[dsl][registry]") {
  dsl::AlgorithmInfo info{"x", "allreduce", "", dsl::Shape::PowerOfTwoRanks, 2, tiny};
  dsl::AlgorithmParams params;
  params.ranks = 6;
  CHECK_THAT(*dsl::check_shape(info, params), Catch::Contains("power-of-two"));
  params.ranks = 8;
  CHECK_FALSE(dsl::check_shape(info, params));
  params.ranks = 1;
  CHECK_THAT(*dsl::check_shape(info, params), Catch::Contains("at least 2 ranks"));
  info.shape = dsl::Shape::NodesTimesGpus;
  params.ranks = 8;
  CHECK_THAT(*dsl::check_shape(info, params), Catch::Contains("--nodes and --gpus-per-node"));
  params.nodes = 2;
  params.gpus_per_node = 4;
  CHECK_FALSE(dsl::check_shape(info, params));
  params.root = 8;
  CHECK_THAT(*dsl::check_shape(info, params), Catch::Contains("root 8"));
}
