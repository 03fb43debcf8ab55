// msccl-tools' two- and three-step alltoall, ported with next_free and dst_rank/dst_index:
// they compile and are proved on the CPU reference executor.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "compiler_test_support.h"
#include "weft/algorithms/msccl_ports.h"
#include "weft/ir/analysis.h"

using namespace weft;

TEST_CASE("msccl ports: two- and three-step alltoall compile and are proved",
          "[compiler][msccl-ports]") {
  for (const auto& [nodes, gpus] : std::vector<std::pair<int, int>>{{2, 2}, {2, 4}, {3, 2}}) {
    for (const bool three : {false, true}) {
      const dsl::Program p = three ? algorithms::msccl_alltoall_three_step(nodes, gpus)
                                   : algorithms::msccl_alltoall_two_step(nodes, gpus);
      const compiler::CompileResult result = compiler::compile(p, test::quick());
      INFO(fmt::format("{} at {}x{}: {}", p.name(), nodes, gpus, result.error_text()));
      REQUIRE(result.ok());
      CHECK(result.algorithm->collective == ir::Collective::AllToAll);
      CHECK(result.verification.min_fifo_depth.value_or(99) <= 2);
    }
  }
}
