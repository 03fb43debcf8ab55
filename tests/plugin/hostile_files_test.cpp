// Files named by the environment that a careless user or another process may have made hostile:
// each gives a clear message and a return, never an abort, a block or a silent "0 rules".
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <catch2/catch.hpp>

#include "plugin_test_support.h"
#include "weft/ir/text_file.h"
#include "weft/plugin/algorithm_catalog.h"
#include "weft/plugin/debug_log.h"
#include "weft/tuning/tuner_config.h"

namespace {

using weft::plugin::ShimConfig;
using weft::plugin::testing::pair_allreduce_xml;
using weft::plugin::testing::TempDir;
namespace fs = std::filesystem;

// A sparse file of `bytes`: costs no disk, and no memory unless someone reads it whole.
std::string sparse_file(const TempDir& dir, const char* name, std::uint64_t bytes) {
  const std::string path = dir.file(name);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  ::close(fd);
  return path;
}

std::string fifo(const TempDir& dir, const char* name) {
  const std::string path = dir.file(name);
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  return path;
}

bool contains(const std::vector<std::string>& lines, std::string_view needle) {
  for (const std::string& line : lines) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("hostile files: the reader refuses what is not a regular file, at once") {
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  const weft::ir::FileReadPolicy policy{};
  CHECK(weft::ir::read_text_file(fifo(dir, "pipe"), policy).error ==
        "is a FIFO, not a regular file");
  CHECK(weft::ir::read_text_file("/dev/zero", policy).error ==
        "is a character device, not a regular file");
  CHECK(weft::ir::read_text_file(dir.path().string(), policy).error ==
        "is a directory, not a regular file");
  CHECK(weft::ir::read_text_file(dir.file("absent"), policy).error == "No such file or directory");
  // No wait on the FIFO's absent writer.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));

  const weft::ir::TextFile good = weft::ir::read_text_file(dir.write("ok", "abc\n"), policy);
  CHECK(good.ok());
  CHECK(good.text == "abc\n");
}

TEST_CASE("hostile files: sizes over the limit are refused before anything is allocated") {
  TempDir dir;
  // 64 GiB, sparse: reading it whole would end the process.
  const std::string huge = sparse_file(dir, "huge.xml", std::uint64_t{64} << 30);
  const weft::ir::TextFile file =
      weft::ir::read_text_file(huge, {weft::ir::kAlgorithmFileMaxBytes, true});
  CHECK(file.error == "is 68719476736 bytes, more than the 67108864 a file here may have");
  CHECK(file.text.empty());
  CHECK(weft::ir::read_text_file(dir.write("small", "0123456789"), {5, true}).error ==
        "is 10 bytes, more than the 5 a file here may have");
}

TEST_CASE("hostile files: an algorithm folder's odd entries are named, bad files skipped") {
  TempDir dir;
  dir.write("10-good.xml", pair_allreduce_xml("good"));
  dir.write("README", "not an algorithm");
  sparse_file(dir, "20-huge.xml", std::uint64_t{64} << 30);
  fifo(dir, "30-pipe.xml");
  fs::create_symlink(dir.file("nowhere.xml"), dir.file("40-dangling.xml"));
  fs::create_symlink(dir.file("50-loop.xml"), dir.file("50-loop.xml"));
  fs::create_directory(dir.file("60-folder.xml"));

  ShimConfig config;
  config.algorithm_dirs = {dir.path().string()};
  const auto started = std::chrono::steady_clock::now();
  const weft::plugin::Catalog catalog = weft::plugin::load_catalog(config);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  REQUIRE(catalog.entries.size() == 1);
  CHECK(catalog.entries[0].algorithm.name == "good");
  INFO(fmt::format("skipped:\n{}\nignored:\n{}", fmt::join(catalog.skipped, "\n"),
                   fmt::join(catalog.ignored, "\n")));
  REQUIRE(catalog.skipped.size() == 1);
  CHECK(catalog.skipped[0].find("20-huge.xml") != std::string::npos);
  CHECK(catalog.skipped[0].find("cannot be read: is 68719476736 bytes") != std::string::npos);
  CHECK(contains(catalog.ignored, "not reading 'README': not named *.xml"));
  CHECK(contains(catalog.ignored, "not reading '30-pipe.xml': a FIFO, not a regular file"));
  CHECK(contains(catalog.ignored, "not reading '40-dangling.xml': a link that leads nowhere"));
  CHECK(contains(catalog.ignored, "not reading '50-loop.xml': a link that leads nowhere or loops"));
  CHECK(contains(catalog.ignored, "not reading '60-folder.xml': a folder"));

  // The same huge file named directly (WEFT_XML_FILES) is skipped the same way.
  ShimConfig listed;
  listed.xml_files = {dir.file("20-huge.xml")};
  const weft::plugin::Catalog direct = weft::plugin::load_catalog(listed);
  CHECK(direct.entries.empty());
  REQUIRE(direct.skipped.size() == 1);
  CHECK(direct.skipped[0].find("more than the 67108864") != std::string::npos);
}

TEST_CASE("hostile files: WEFT_TUNER_CONFIG that is a FIFO, a device, a folder or too large") {
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  for (const auto& [path, reason] : std::vector<std::pair<std::string, std::string>>{
           {fifo(dir, "tuner.csv"), "is a FIFO, not a regular file"},
           {"/dev/zero", "is a character device, not a regular file"},
           {dir.path().string(), "is a directory, not a regular file"},
           {sparse_file(dir, "big.csv", std::uint64_t{1} << 30), "more than the 4194304"}}) {
    const weft::tuning::TunerConfig config = weft::tuning::read_tuner_config(path);
    CHECK(config.rules.empty());
    REQUIRE(config.problems.size() == 1);
    CHECK(config.problems[0].find(path + ": cannot be read (") == 0);
    CHECK(config.problems[0].find(reason) != std::string::npos);
    CHECK(config.problems[0].find("the tuner changes nothing") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("hostile files: a tuner table that yields no rule says so; a BOM is not a rule's") {
  TempDir dir;
  const weft::tuning::TunerConfig empty =
      weft::tuning::read_tuner_config(dir.write("empty.csv", "# nothing yet\n"));
  REQUIRE(empty.problems.size() == 1);
  CHECK(empty.problems[0].find("no rule could be read from it") != std::string::npos);

  const weft::tuning::TunerConfig bom =
      weft::tuning::read_tuner_config(dir.write("bom.csv",
                                                "\xEF\xBB\xBF"
                                                "allreduce,0,65536,tree,ll,4,1,-1\n"));
  INFO(fmt::format("{}", fmt::join(bom.problems, "\n")));
  CHECK(bom.problems.empty());
  CHECK(bom.rules.size() == 1);
}

TEST_CASE("hostile files: log lines show control characters escaped and long messages capped") {
  CHECK(weft::plugin::printable_log_message("WEFT_ALGO_DIR='a\x1b[2Jb'") ==
        "WEFT_ALGO_DIR='a\\x1b[2Jb'");
  CHECK(weft::plugin::printable_log_message("x\rWEFT INFO forged\x7f") ==
        "x\\x0dWEFT INFO forged\\x7f");
  // A message of several lines keeps them, indented: nothing can pass for a line of its own.
  CHECK(weft::plugin::printable_log_message("first\nhost:1:1 [0] WEFT INFO forged") ==
        "first\n  host:1:1 [0] WEFT INFO forged");
  CHECK(weft::plugin::printable_log_message("tab\there, × kept") == "tab\there, × kept");
  const std::string huge(weft::plugin::kMaxLogMessageBytes + 100, 'a');
  const std::string shown = weft::plugin::printable_log_message(huge);
  CHECK(shown.size() < weft::plugin::kMaxLogMessageBytes + 64);
  CHECK(shown.find("(100 more bytes not shown)") != std::string::npos);
}
