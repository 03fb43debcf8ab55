// Against the reference Python compiler's output (../shared/msccl-xml/msccl-tools-generated): at
// the same sizes our algorithms use no more steps, threadblocks or channels, and fit MSCCL's
// limits. Skips when the folder is absent.
#include <catch2/catch.hpp>

#include <filesystem>

#include <fmt/format.h>

#include "compiler_test_support.h"
#include "skip.h"
#include "weft/algorithms/library.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

using namespace weft;

namespace {

struct Counts {
  int steps = 0;
  int threadblocks = 0;
  int channels = 0;
};

Counts counts_of(const ir::Algorithm& algo) {
  Counts c;
  c.channels = algo.nchannels;
  for (const ir::Gpu& gpu : algo.gpus) {
    c.threadblocks += static_cast<int>(gpu.threadblocks.size());
    for (const ir::Threadblock& tb : gpu.threadblocks) c.steps += static_cast<int>(tb.steps.size());
  }
  return c;
}

struct Case {
  const char* file;
  const char* algorithm;
  int ranks;
  int nodes;
  int gpus;
  int channels;
  int instances;
  ir::Protocol proto;
};

}  // namespace

TEST_CASE("msccl-tools comparison: no more steps, threadblocks or channels", "[library][msccl]") {
  const std::filesystem::path folder =
      std::filesystem::path(WEFT_MSCCL_XML_DIR) / "msccl-tools-generated";
  if (!std::filesystem::is_directory(folder)) {
    weft::test_support::skip_test_case(
        folder.string() +
        " is absent (the third-party MSCCL XML corpus, kept outside the "
        "project; -DWEFT_MSCCL_XML_DIR=FOLDER gives it)");
    return;
  }
  using P = ir::Protocol;
  const std::vector<Case> cases{
      {"allreduce_ring_8r_1ch_Simple.xml", "allreduce_ring", 8, 0, 0, 1, 1, P::Simple},
      {"allreduce_ring_8r_4ch_LL128_i2.xml", "allreduce_ring", 8, 0, 0, 4, 2, P::LL128},
      {"allreduce_allpairs_8r_LL_i1.xml", "allreduce_allpairs", 8, 0, 0, 1, 1, P::LL},
      {"allreduce_rec_doubling_halving_8r_LL.xml", "allreduce_recursive_halving_doubling", 8, 0, 0,
       1, 1, P::LL},
      {"alltoall_two_step_2n4g.xml", "alltoall_two_step", 8, 2, 4, 1, 1, P::Simple},
      {"hierarchical_allreduce_4g2n.xml", "allreduce_hierarchical", 8, 2, 4, 1, 1, P::Simple},
      {"allgather_allpairs_8r_i1_LL128.xml", "allgather_direct", 8, 0, 0, 1, 1, P::LL128},
      {"allgather_recursive_doubling_8r.xml", "allgather_recursive_doubling", 8, 0, 0, 1, 1,
       P::Simple},
      {"alltoall_allpairs_8r.xml", "alltoall_direct", 8, 0, 0, 1, 1, P::Simple},
      {"reducescatter_allpairs_8r_LL.xml", "reducescatter_allpairs", 8, 0, 0, 1, 1, P::LL},
  };
  dsl::Registry registry;
  algorithms::register_library(registry);
  int compared = 0;
  for (const Case& c : cases) {
    const std::filesystem::path path = folder / c.file;
    if (!std::filesystem::exists(path)) {
      WARN("skipped: " << path.string() << " is absent");
      continue;
    }
    const ir::ReadResult theirs = ir::read_xml_file(path.string());
    REQUIRE(theirs.algorithm.has_value());
    dsl::AlgorithmParams params;
    params.ranks = c.ranks;
    params.nodes = c.nodes;
    params.gpus_per_node = c.gpus;
    params.channels = c.channels;
    params.instances = c.instances;
    params.protocol = c.proto;
    params.in_place = theirs.algorithm->inplace;
    const dsl::Program program = registry.find(c.algorithm)->build(params);
    const compiler::CompileResult ours = compiler::compile(program, test::quick());
    INFO(c.file << ": " << ours.error_text());
    REQUIRE(ours.ok());
    const Counts a = counts_of(*ours.algorithm);
    const Counts b = counts_of(*theirs.algorithm);
    INFO(fmt::format("{}: ours {} steps, {} threadblocks, {} channels; msccl-tools {}, {}, {}",
                     c.file, a.steps, a.threadblocks, a.channels, b.steps, b.threadblocks,
                     b.channels));
    CHECK(ours.algorithm->collective == theirs.algorithm->collective);
    CHECK(ours.algorithm->ngpus == theirs.algorithm->ngpus);
    CHECK(a.steps <= b.steps);
    CHECK(a.threadblocks <= b.threadblocks);
    CHECK(a.channels <= b.channels);
    CHECK_FALSE(ir::validate(*ours.algorithm, ir::msccl_limits()).has_errors());
    ++compared;
  }
  CHECK(compared > 0);
}
