// The third-party MSCCL XML corpus (../shared/msccl-xml): every file reads, validates against
// MSCCL's own limits, and survives a round trip through the writer.
#include <string>

#include <catch2/catch.hpp>

#include "ir_test_support.h"
#include "skip.h"
#include "weft/ir/analysis.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

using namespace weft;
using namespace weft::ir;

namespace {

bool corpus_present() {
  if (!testing::corpus_files().empty()) return true;
  weft::test_support::skip_test_case(
      "no MSCCL XML corpus: " WEFT_MSCCL_XML_DIR
      " is absent (the third-party MSCCL XML corpus, kept outside the "
      "project; -DWEFT_MSCCL_XML_DIR=FOLDER gives it)");
  return false;
}

}  // namespace

TEST_CASE("corpus: every MSCCL file reads and validates with the msccl profile", "[corpus]") {
  if (!corpus_present()) return;
  for (const auto& path : testing::corpus_files()) {
    INFO(path.string());
    const LoadResult result = load_xml_file(path.string(), msccl_limits());
    INFO(result.diagnostics.str());
    CHECK(result.ok());
    CHECK(result.diagnostics.items.empty());
  }
}

TEST_CASE("corpus: every MSCCL file survives write and re-read", "[corpus]") {
  if (!corpus_present()) return;
  for (const auto& path : testing::corpus_files()) {
    INFO(path.string());
    const ReadResult first = read_xml_file(path.string());
    REQUIRE(first.ok());
    const std::string written = write_xml(*first.algorithm);
    const ReadResult second = read_xml_string(written, "written");
    INFO(second.diagnostics.str());
    REQUIRE(second.ok());
    CHECK(testing::first_difference(*first.algorithm, *second.algorithm).empty());
    CHECK(second.diagnostics.items.empty());
  }
}

TEST_CASE("corpus: summaries agree with the files' shape", "[corpus]") {
  if (!corpus_present()) return;
  for (const auto& path : testing::corpus_files()) {
    INFO(path.string());
    const ReadResult read = read_xml_file(path.string());
    REQUIRE(read.ok());
    const Algorithm& algo = *read.algorithm;
    const Summary s = summarize(algo);
    CHECK(s.ranks == algo.ngpus);
    CHECK(s.channels <= algo.nchannels);
    CHECK(s.critical_path_steps >= 1);
    CHECK(s.critical_path_steps <= s.steps);
    int steps = 0;
    for (const RankSummary& rank : s.per_rank) steps += rank.steps;
    CHECK(steps == s.steps);
  }
}
