// The channel policy: Fewest spreads unhinted traffic only as far as the limits profile needs;
// ShortestPath also spreads it further where that shortens the critical path, as msccl-tools'
// automatic channels do for independent flows between the same ranks.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "compiler_test_support.h"
#include "weft/runtime/analysis.h"

using namespace weft;

namespace {

// msccl-tools' BlueConnect allreduce with its "auto" schedule (no hints): per node and offset a
// ring reduce-scatter, then across nodes reduce-scatter and allgather, then per node allgather.
// The rings of one node are independent flows over the same pairs of ranks.
dsl::Program blue_connect(int gpus, int nodes, dsl::ChannelPolicy channels) {
  dsl::Options options;
  options.channel_policy = channels;
  const int ranks = gpus * nodes;
  dsl::Program p("blue_connect", dsl::Collective::allreduce(ranks, ranks, true), options);
  auto reduce_scatter = [&](int size, int offset, int step_of, int chunk_offset, int stride) {
    for (int ch = 0; ch < size; ++ch) {
      const int index = ch * stride + chunk_offset;
      for (int step = 0; step < size - 1; ++step) {
        const dsl::ChunkRef other =
            p.chunk((step + 1 + ch) % size * step_of + offset, dsl::input, index);
        p.chunk((step + 2 + ch) % size * step_of + offset, dsl::input, index).reduce(other);
      }
    }
  };
  auto all_gather = [&](int size, int offset, int step_of, int chunk_offset, int stride) {
    for (int ch = 0; ch < size; ++ch) {
      const int index = ch * stride + chunk_offset;
      for (int step = 0; step < size - 1; ++step) {
        p.chunk((step + ch) % size * step_of + offset, dsl::input, index)
            .copy((step + 1 + ch) % size * step_of + offset, dsl::input, index);
      }
    }
  };
  for (int n = 0; n < nodes; ++n) {
    for (int o = 0; o < nodes; ++o) reduce_scatter(gpus, n * gpus, 1, o, nodes);
  }
  // Across nodes: rank g of every node reduces, then gathers, the chunks its rings left it.
  for (int g = 0; g < gpus; ++g) {
    for (int ch = 0; ch < nodes; ++ch) {
      for (int step = 0; step < nodes - 1; ++step) {
        const int index = ch + g * nodes;
        const dsl::ChunkRef other = p.chunk((step + 1 + ch) % nodes * gpus + g, dsl::input, index);
        p.chunk((step + 2 + ch) % nodes * gpus + g, dsl::input, index).reduce(other);
      }
    }
  }
  for (int g = 0; g < gpus; ++g) {
    for (int ch = 0; ch < nodes; ++ch) {
      for (int step = 0; step < nodes - 1; ++step) {
        const int index = ch + g * nodes;
        p.chunk((step + ch) % nodes * gpus + g, dsl::input, index)
            .copy((step + 1 + ch) % nodes * gpus + g, dsl::input, index);
      }
    }
  }
  for (int n = 0; n < nodes; ++n) {
    for (int o = 0; o < nodes; ++o) all_gather(gpus, n * gpus, 1, o, nodes);
  }
  return p;
}

}  // namespace

TEST_CASE("channel policy: shortest-path spreads independent unhinted flows where it helps",
          "[compiler][channels]") {
  const compiler::CompileResult fewest =
      compiler::compile(blue_connect(4, 2, dsl::ChannelPolicy::Fewest), test::quick());
  const compiler::CompileResult shortest =
      compiler::compile(blue_connect(4, 2, dsl::ChannelPolicy::ShortestPath), test::quick());
  INFO(fewest.error_text() << shortest.error_text());
  REQUIRE(fewest.ok());
  REQUIRE(shortest.ok());
  const ir::Summary narrow = ir::summarize(*fewest.algorithm);
  const ir::Summary wide = ir::summarize(*shortest.algorithm);
  INFO(fmt::format("fewest: {} channels, {} threadblocks, path {}; shortest-path: {}, {}, {}",
                   fewest.stats.channels, fewest.stats.threadblocks, narrow.critical_path_steps,
                   shortest.stats.channels, shortest.stats.threadblocks, wide.critical_path_steps));
  CHECK(fewest.stats.channels == 1);
  CHECK(shortest.stats.channels > 1);
  CHECK(wide.critical_path_steps < narrow.critical_path_steps);
  // The same program: only where it runs differs.
  CHECK(shortest.stats.steps == fewest.stats.steps);
}

TEST_CASE("channel policy: shortest-path keeps the narrow plan where spreading does not help",
          "[compiler][channels]") {
  // Hinted traffic never moves, and a program whose flows are all ordered gains nothing.
  dsl::Options options;
  options.channel_policy = dsl::ChannelPolicy::ShortestPath;
  dsl::Program chain("chain", dsl::Collective::broadcast(4, 0, 1, true), options);
  for (int r = 0; r + 1 < 4; ++r) {
    chain.chunk(r, r == 0 ? dsl::input : dsl::output, 0).copy(r + 1, dsl::output, 0);
  }
  const compiler::CompileResult result = compiler::compile(chain, test::quick());
  INFO(result.error_text());
  REQUIRE(result.ok());
  CHECK(result.stats.channels == 1);
}
