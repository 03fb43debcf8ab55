// Every third-party MSCCL XML file of the interop corpus loads and passes verify() with the
// default options. Skips when the corpus folder is absent (a user's clone does not have it).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "skip.h"
#include "weft/cpu/verify.h"
#include "weft/ir/validate.h"

namespace weft::cpu {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus_files() {
  std::vector<fs::path> files;
  const fs::path root(WEFT_MSCCL_XML_DIR);
  std::error_code error;
  if (!fs::is_directory(root, error)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(root, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".xml")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Loads with MSCCL's limits, or with Weft's where a file exceeds MSCCL's.
ir::LoadResult load(const fs::path& path) {
  ir::LoadResult loaded = ir::load_xml_file(path.string(), ir::msccl_limits());
  if (!loaded.ok()) loaded = ir::load_xml_file(path.string(), ir::weft_limits());
  return loaded;
}

TEST_CASE("every corpus algorithm loads and verifies", "[cpu][corpus]") {
  const std::vector<fs::path> files = corpus_files();
  if (files.empty()) {
    weft::test_support::skip_test_case(
        "no MSCCL XML corpus: " WEFT_MSCCL_XML_DIR
        " is absent (the third-party MSCCL XML corpus, kept outside the "
        "project; -DWEFT_MSCCL_XML_DIR=FOLDER gives it)");
    return;
  }
  for (const fs::path& path : files) {
    const std::string name = fs::relative(path, WEFT_MSCCL_XML_DIR).string();
    const auto start = std::chrono::steady_clock::now();
    const ir::LoadResult loaded = load(path);
    INFO(name << "\n" << loaded.diagnostics.str());
    REQUIRE(loaded.ok());
    const ir::Algorithm& algo = *loaded.algorithm;
    const int root = algo.root >= 0 ? algo.root : 0;
    const Executor executor(algo, standard_spec(algo, root));
    VerifyOptions options;
    options.root = root;
    const VerifyReport report = verify(executor, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const CaseResult& c : report.cases) {
      INFO((c.options.in_place ? "in place" : "out of place")
           << " S=" << c.options.chunk_elements << " T=" << c.options.tile_elements
           << " D=" << c.options.fifo_depth << " seed=" << c.options.seed << "\n"
           << c.result.report());
      CHECK(c.result.outcome == Outcome::Pass);
    }
    CHECK(report.passed());
    CHECK(report.min_fifo_depth.has_value());
    UNSCOPED_INFO(name << ": " << report.cases.size() << " cases, min FIFO depth "
                       << (report.min_fifo_depth ? std::to_string(*report.min_fifo_depth) : "none")
                       << ", " << seconds << " s");
  }
}

}  // namespace
}  // namespace weft::cpu
