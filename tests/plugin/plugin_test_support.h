// Helpers shared by the plugin tests: temporary folders, valid algorithm files made from the
// test corpus with a named edit, and in-memory algorithms for selection rules.
#pragma once

#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "weft/ir/ir.h"

namespace weft::plugin::testing {

// The recording libnccl stand-in's log reader: copies up to `capacity` bytes, returns the length.
using LogFunction = std::size_t (*)(char* out, std::size_t capacity);

inline std::string read_recording(LogFunction log) {
  std::string text;
  for (std::size_t length = log(nullptr, 0);;) {  // again if it grew in between
    text.assign(length, '\0');
    const std::size_t now = log(text.data(), text.size());
    if (now <= length) {
      text.resize(now);
      return text;
    }
    length = now;
  }
}

// A fresh folder under the system's temporary folder, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "weft-plugin-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(std::string_view name) const { return (path_ / name).string(); }
  std::string write(std::string_view name, std::string_view text) const {
    const std::string target = file(name);
    std::ofstream out(target, std::ios::binary);
    out << text;
    REQUIRE(out.good());
    return target;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// tests/data/xml/pair_allreduce.xml (a valid 2-rank out-of-place allreduce, 2 chunks) renamed.
inline std::string pair_allreduce_xml(std::string_view name) {
  std::string text = read_text(std::string(WEFT_TEST_DATA_DIR) + "/xml/pair_allreduce.xml");
  const std::string from = "name=\"pair_allreduce\"";
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), "name=\"" + std::string(name) + "\"");
  return text;
}

// An algorithm with only the header fields selection looks at.
inline ir::Algorithm header_only(std::string name, ir::Collective collective, int ngpus,
                                 int nchunksperloop, bool inplace, bool outofplace,
                                 std::uint64_t min_bytes = 0, std::uint64_t max_bytes = 0) {
  ir::Algorithm algo;
  algo.name = std::move(name);
  algo.source = algo.name + ".xml";
  algo.collective = collective;
  algo.ngpus = ngpus;
  algo.nchunksperloop = nchunksperloop;
  algo.inplace = inplace;
  algo.outofplace = outofplace;
  algo.min_bytes = min_bytes;
  algo.max_bytes = max_bytes;
  return algo;
}

}  // namespace weft::plugin::testing
