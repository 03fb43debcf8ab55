// Every file of the third-party MSCCL XML corpus (../shared/msccl-xml, both dialects) run by the
// interpreter in host mode at its own rank count, in its declared modes, against the CPU
// reference. Skips with a message when the corpus is absent.
#include <filesystem>

#include "kernel_host_support.h"
#include "skip.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

namespace weft::gpu::testing {
namespace {

TEST_CASE("corpus: every MSCCL XML file matches the CPU reference", "[kernel-host][corpus]") {
  const std::filesystem::path root(WEFT_MSCCL_XML_DIR);
  if (!weft::test_support::has_files(root, ".xml")) {
    weft::test_support::skip_test_case(
        "no MSCCL XML corpus: " + root.string() +
        " is absent (the third-party MSCCL XML corpus, kept outside the "
        "project; -DWEFT_MSCCL_XML_DIR=FOLDER gives it)");
    return;
  }
  int files = 0, calls = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".xml") continue;
    INFO(entry.path().string());
    ir::LoadResult loaded = ir::load_xml_file(entry.path().string(), ir::weft_limits());
    INFO(loaded.diagnostics.str());
    REQUIRE(loaded.ok());  // the IR tests prove every file of the corpus loads
    ir::Algorithm algo = *loaded.algorithm;
    // A size band only steers selection (which algorithm serves which sizes); the steps mean the
    // same at every size, so the test calls each file at a small one.
    algo.min_bytes = 0;
    algo.max_bytes = 0;
    auto e = emulate_on_host(algo, line_options());
    for (const bool in_place : {false, true}) {
      if ((in_place && !algo.inplace) || (!in_place && !algo.outofplace)) continue;
      CHECK(run_checked(*e, {kChunk, DataType::Float, ReduceOp::Sum, in_place}) == 0);
      CHECK(run_checked(*e, {kLongChunk, DataType::Int32, ReduceOp::Max, in_place}) == 0);
      calls += 2;
    }
    ++files;
  }
  CHECK(files > 0);
  std::printf("kernel-host: corpus: %d files\n", files);
  report_calls("corpus", calls);
}

}  // namespace
}  // namespace weft::gpu::testing
