// Every third-party MSCCL XML file (../shared/msccl-xml) that passes validation must also
// flatten, lay out and plan for the GPU runtime: the host half of running it, checked without a
// GPU. Skips with a message when the corpus is absent.
#include <catch2/catch.hpp>

#include <filesystem>

#include "skip.h"
#include "weft/ir/geometry.h"
#include "weft/ir/validate.h"
#include "weft/program/call_plan.h"
#include "weft/program/connection_layout.h"
#include "weft/program/device_program.h"
#include "weft/program/launch_plan.h"

namespace weft::gpu {
namespace {

TEST_CASE("the MSCCL XML corpus flattens, lays out and plans", "[corpus]") {
  const std::filesystem::path root(WEFT_MSCCL_XML_DIR);
  if (!weft::test_support::has_files(root, ".xml")) {
    weft::test_support::skip_test_case(
        "no MSCCL XML corpus: " + root.string() +
        " is absent (the third-party MSCCL XML corpus, kept outside the "
        "project; -DWEFT_MSCCL_XML_DIR=FOLDER gives it)");
    return;
  }
  int checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".xml") continue;
    const ir::LoadResult loaded = ir::load_xml_file(entry.path().string(), ir::weft_limits());
    if (!loaded.ok()) continue;  // the IR tests say why
    const ir::Algorithm& algo = *loaded.algorithm;
    INFO(entry.path().string());
    const RuntimeOptions options;
    std::vector<RankProgram> programs;
    std::vector<RegionLayout> layouts;
    int max_count = 0;
    int max_steps = 0;
    for (int rank = 0; rank < algo.ngpus; ++rank) {
      auto program = flatten_rank(algo, rank);
      INFO(program.status().str());
      REQUIRE(program.ok());
      max_count = std::max(max_count, program.value().max_count);
      max_steps = std::max(max_steps, program.value().max_steps);
      programs.push_back(std::move(program.value()));
      layouts.push_back(layout_region(algo, rank, options.protocol(algo.protocol)));
    }
    // Fake, distinct addresses: every connection used must find its other end.
    std::vector<LocalRankMemory> memories;
    for (int rank = 0; rank < algo.ngpus; ++rank) {
      LocalRankMemory m;
      m.rank = rank;
      m.program = &programs[static_cast<std::size_t>(rank)];
      m.private_base = 0x7000000000ULL + 0x10000000ULL * static_cast<std::uintptr_t>(rank);
      for (int p = 0; p < algo.ngpus; ++p) {
        m.regions.push_back(0x100000000ULL * static_cast<std::uintptr_t>(p + 1));
      }
      memories.push_back(std::move(m));
    }
    auto ctas = build_cta_descriptors(memories, layouts);
    INFO(ctas.status().str());
    REQUIRE(ctas.ok());
    CHECK_FALSE(ctas.value().empty());
    CallShape call;
    call.collective = algo.collective;
    call.nranks = algo.ngpus;
    call.count = static_cast<std::size_t>(algo.nchunksperloop) * 1000 /
                 static_cast<std::size_t>(ir::count_multiplier(algo));
    call.in_place = !algo.outofplace;
    call.root = 0;
    const std::uint64_t bytes =
        call.count * 4 * static_cast<std::uint64_t>(ir::count_multiplier(algo));
    if (bytes >= algo.min_bytes && (algo.max_bytes == 0 || bytes <= algo.max_bytes) &&
        algo.collective != ir::Collective::Custom) {
      auto plan = plan_call(algo, call, options, max_count, max_steps);
      INFO(plan.status().str());
      CHECK(plan.ok());
    }
    ++checked;
  }
  CHECK(checked > 0);
}

}  // namespace
}  // namespace weft::gpu
