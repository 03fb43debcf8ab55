// Tiles (docs/architecture.md §2.3): every threadblock replays its steps once per tile of T
// elements of each chunk; the last tile may be short; results never depend on T.
#include <catch2/catch.hpp>

#include "cpu_test_algorithms.h"
#include "cpu_test_support.h"

namespace weft::cpu {
namespace {

TEST_CASE("each step runs once per tile and each send is one message per tile", "[cpu][tiles]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  // 3 ranks × 5 steps, 4 of them sending.
  struct Case {
    std::size_t chunk, tile;
    std::uint64_t tiles;
  };
  for (const Case c : {Case{37, 8, 5}, Case{32, 8, 4}, Case{37, 64, 1}, Case{37, 37, 1},
                       Case{37, 1, 37}, Case{1, 8, 1}}) {
    const RunResult result = executor.run(testing::options(c.chunk, c.tile, 2));
    INFO("S=" << c.chunk << " T=" << c.tile << "\n" << result.report());
    CHECK(result.outcome == Outcome::Pass);
    CHECK(result.steps_executed == 15 * c.tiles);
    CHECK(result.messages == 12 * c.tiles);
  }
}

TEST_CASE("outputs are bit for bit the same for every tile size", "[cpu][tiles]") {
  const ir::Algorithm algo = testing::load(testing::kRingAllreduce3);
  const Executor executor(algo, standard_spec(algo, 0));
  for (DataType type : {DataType::Int32, DataType::Float, DataType::Half}) {
    std::vector<RankBuffers> reference;
    for (std::size_t tile : {37u, 1u, 3u, 8u, 36u, 64u}) {
      RunOptions options = testing::options(37, tile, 2, tile);
      options.dtype = type;
      std::vector<RankBuffers> buffers = executor.make_inputs(options);
      REQUIRE(executor.execute(options, buffers).outcome == Outcome::Pass);
      if (reference.empty()) {
        reference = buffers;
        continue;
      }
      INFO(to_string(type) << " T=" << tile);
      for (std::size_t r = 0; r < 3; ++r) CHECK(buffers[r].output == reference[r].output);
    }
  }
}

TEST_CASE("a message of several chunks carries each chunk's piece of the tile", "[cpu][tiles]") {
  // The broadcast sends 2 chunks per message; with S = 5 and T = 2 the last tile is 1 element.
  const ir::Algorithm algo = testing::load(testing::kBroadcast3Root1);
  const Executor executor(algo, standard_spec(algo, 1));
  RunOptions options = testing::options(5, 2, 2);
  options.dtype = DataType::Int32;
  std::vector<RankBuffers> buffers = executor.make_inputs(options);
  for (int r = 0; r < 3; ++r)
    buffers[static_cast<std::size_t>(r)].input = testing::labelled_int32(r, 2, 5);
  REQUIRE(executor.execute(options, buffers).outcome == Outcome::Pass);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 2; ++c) {
      for (std::size_t e = 0; e < 5; ++e) {
        CHECK(testing::int32_at(buffers[static_cast<std::size_t>(r)].output, 5, c, e) ==
              testing::label(1, c, e));
      }
    }
  }
}

}  // namespace
}  // namespace weft::cpu
