#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>

#include "plugin_test_support.h"
#include "weft/plugin/algorithm_catalog.h"

namespace {

using weft::plugin::ShimConfig;
using weft::plugin::testing::pair_allreduce_xml;
using weft::plugin::testing::TempDir;

std::vector<std::string> names_of(const weft::plugin::Catalog& catalog) {
  std::vector<std::string> names;
  for (const auto& entry : catalog.entries) names.push_back(entry.algorithm.name);
  return names;
}

}  // namespace

TEST_CASE("catalog: files load in file-name order whatever the order they are named in") {
  TempDir one;
  TempDir two;
  one.write("20-second.xml", pair_allreduce_xml("second"));
  one.write("notes.txt", "not an algorithm");
  two.write("10-first.xml", pair_allreduce_xml("first"));
  const std::string third = two.write("30-third.XML", pair_allreduce_xml("third"));

  ShimConfig config;
  config.algorithm_dirs = {one.path().string()};
  config.xml_files = {third, two.file("10-first.xml")};
  const auto catalog = weft::plugin::load_catalog(config);
  CHECK(catalog.skipped.empty());
  CHECK(names_of(catalog) == std::vector<std::string>{"first", "second", "third"});

  // The same files named the other way round give the same order.
  ShimConfig reversed;
  reversed.algorithm_dirs = {two.path().string()};
  reversed.xml_files = {one.file("20-second.xml")};
  CHECK(names_of(weft::plugin::load_catalog(reversed)) ==
        std::vector<std::string>{"first", "second", "third"});
}

TEST_CASE("catalog: a file reached twice loads once") {
  TempDir dir;
  const std::string path = dir.write("a.xml", pair_allreduce_xml("a"));
  ShimConfig config;
  config.algorithm_dirs = {dir.path().string()};
  config.xml_files = {path, (dir.path() / "." / "a.xml").string()};
  CHECK(weft::plugin::load_catalog(config).entries.size() == 1);
}

TEST_CASE("catalog: malformed and invalid files are reported with file and line, and skipped") {
  TempDir dir;
  dir.write("a-good.xml", pair_allreduce_xml("good"));
  dir.write("b-malformed.xml", "<algo name=\"x\" coll=\"allreduce\">\n  <gpu id=\"0\">\n</algo>\n");
  std::string invalid = pair_allreduce_xml("invalid");
  // Rank 0's first threadblock sends to itself.
  invalid.replace(invalid.find("send=\"1\""), 8, "send=\"0\"");
  dir.write("c-invalid.xml", invalid);

  ShimConfig config;
  config.algorithm_dirs = {dir.path().string()};
  config.xml_files = {dir.file("missing.xml")};
  const auto catalog = weft::plugin::load_catalog(config);
  CHECK(names_of(catalog) == std::vector<std::string>{"good"});
  REQUIRE(catalog.skipped.size() == 3);
  CHECK(catalog.skipped[0].find("missing.xml") != std::string::npos);
  CHECK(catalog.skipped[1].find("b-malformed.xml") != std::string::npos);
  CHECK(catalog.skipped[1].find("b-malformed.xml:") != std::string::npos);  // file:line
  CHECK(catalog.skipped[2].find("c-invalid.xml:3:") != std::string::npos);
  CHECK(catalog.skipped[2].find("gpu 0 / tb 0") != std::string::npos);
}

TEST_CASE("catalog: an unreadable folder is a reported problem") {
  ShimConfig config;
  config.algorithm_dirs = {"/nonexistent/weft/algorithms"};
  const auto catalog = weft::plugin::load_catalog(config);
  CHECK(catalog.entries.empty());
  REQUIRE(catalog.skipped.size() == 1);
  CHECK(catalog.skipped[0].find("/nonexistent/weft/algorithms") != std::string::npos);
}
