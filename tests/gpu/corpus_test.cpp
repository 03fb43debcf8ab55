// Third-party MSCCL XML (../shared/msccl-xml) on the interpreter, emulating each file's rank
// count, against the CPU reference. Skips with a message when the corpus is absent.
#include <filesystem>

#include "gpu_test_support.h"
#include "skip.h"
#include "weft/ir/validate.h"

namespace weft::gpu::testing {
namespace {

TEST_CASE("MSCCL XML corpus matches the CPU reference", "[gpu][corpus]") {
  const std::filesystem::path root(WEFT_MSCCL_XML_DIR);
  if (!weft::test_support::has_files(root, ".xml")) {
    weft::test_support::skip_test_case(
        "no MSCCL XML corpus: " + root.string() +
        " is absent (the third-party MSCCL XML corpus, kept outside the "
        "project; -DWEFT_MSCCL_XML_DIR=FOLDER gives it)");
    return;
  }
  int ran = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".xml") continue;
    ir::LoadResult loaded = ir::load_xml_file(entry.path().string(), ir::weft_limits());
    if (!loaded.ok()) {
      WARN(entry.path().string() << " does not load (the IR tests cover why):\n"
                                 << loaded.diagnostics.str());
      continue;
    }
    ir::Algorithm algo = *loaded.algorithm;
    // A size band only steers selection; the steps mean the same at every size, so the test calls
    // each file at small sizes (run() would refuse sizes outside the band).
    algo.min_bytes = 0;
    algo.max_bytes = 0;
    if (algo.collective == ir::Collective::Custom || algo.ngpus > 64) continue;
    // Does the CPU reference complete at the runtime's FIFO depths? If not, the file deadlocks
    // by design at D = 2 and the GPU would rightly time out.
    const cpu::Executor executor(algo, standard_spec(algo, 0));
    cpu::RunOptions probe;
    probe.chunk_elements = 3;
    probe.tile_elements = 3;
    probe.fifo_depth = 2;
    probe.in_place = !algo.outofplace;
    if (executor.run(probe).outcome != cpu::Outcome::Pass) {
      WARN(entry.path().filename().string()
           << ": needs FIFO depth > 2 or is not correct on the CPU; skipped");
      continue;
    }
    INFO(entry.path().string());
    auto e = emulate(algo, small_tiles());
    for (bool in_place : {false, true}) {
      if ((in_place && !algo.inplace) || (!in_place && !algo.outofplace)) continue;
      for (std::size_t chunk : {std::size_t{1}, std::size_t{100}}) {
        CHECK(run_checked(*e, {chunk, DataType::Float, ReduceOp::Sum, in_place}) == 0);
        CHECK(run_checked(*e, {chunk, DataType::Int32, ReduceOp::Sum, in_place}) == 0);
      }
    }
    ++ran;
  }
  CHECK(ran > 0);
}

}  // namespace
}  // namespace weft::gpu::testing
