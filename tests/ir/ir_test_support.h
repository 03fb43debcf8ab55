// Helpers shared by the IR tests: reading test inputs, editing one line of a valid file to make
// a broken one, finding a diagnostic, and comparing two algorithms field by field.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "weft/ir/diagnostics.h"
#include "weft/ir/ir.h"

namespace weft::ir::testing {

inline std::string data_path(const std::string& name) {
  return std::string(WEFT_TEST_DATA_DIR) + "/xml/" + name;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline std::string read_data(const std::string& name) {
  return read_text(data_path(name));
}

// Replaces `from` by `to` on 1-based line `line`, where it must occur exactly once: a broken
// input is a known valid file with one named edit, so the test says where the problem is.
inline std::string edit_line(const std::string& text, int line, std::string_view from,
                             std::string_view to) {
  std::size_t begin = 0;
  for (int k = 1; k < line; ++k) {
    begin = text.find('\n', begin);
    REQUIRE(begin != std::string::npos);
    ++begin;
  }
  std::size_t end = text.find('\n', begin);
  if (end == std::string::npos) end = text.size();
  std::string row = text.substr(begin, end - begin);
  const std::size_t at = row.find(from);
  INFO("line " << line << ": " << row);
  REQUIRE(at != std::string::npos);
  REQUIRE(row.find(from, at + 1) == std::string::npos);
  row.replace(at, from.size(), to);
  return text.substr(0, begin) + row + text.substr(end);
}

// The diagnostics whose message contains `needle`.
inline std::vector<Diagnostic> matching(const Diagnostics& diagnostics, std::string_view needle) {
  std::vector<Diagnostic> found;
  for (const Diagnostic& d : diagnostics.items) {
    if (d.message.find(needle) != std::string::npos) found.push_back(d);
  }
  return found;
}

// The single error whose message contains `needle`; fails the test when there is not exactly one.
inline Diagnostic only_error(const Diagnostics& diagnostics, std::string_view needle) {
  const std::vector<Diagnostic> found = matching(diagnostics, needle);
  INFO("looking for '" << needle << "' in:\n" << diagnostics.str());
  REQUIRE(found.size() == 1);
  CHECK(found.front().severity == Severity::Error);
  return found.front();
}

// The first field in which two algorithms differ, or "" when they are equal. Source file names
// and line numbers are not part of an algorithm, nor is the spelling of `coll`.
inline std::string first_difference(const Algorithm& a, const Algorithm& b) {
  if (a.name != b.name) return "algo: name differs";
  if (a.collective != b.collective) return "algo: coll differs";
  if (a.protocol != b.protocol) return "algo: proto differs";
  if (a.nchannels != b.nchannels) return "algo: nchannels differs";
  if (a.nchunksperloop != b.nchunksperloop) return "algo: nchunksperloop differs";
  if (a.ngpus != b.ngpus) return "algo: ngpus differs";
  if (a.inplace != b.inplace) return "algo: inplace differs";
  if (a.outofplace != b.outofplace) return "algo: outofplace differs";
  if (a.min_bytes != b.min_bytes) return "algo: minBytes differs";
  if (a.max_bytes != b.max_bytes) return "algo: maxBytes differs";
  if (a.nthreads != b.nthreads) return "algo: nthreads differs";
  if (a.root != b.root) return "algo: root differs";
  if (a.nnodes != b.nnodes) return "algo: nnodes differs";
  if (a.gpus.size() != b.gpus.size()) return "algo: number of gpus differs";
  for (std::size_t r = 0; r < a.gpus.size(); ++r) {
    const Gpu& ga = a.gpus[r];
    const Gpu& gb = b.gpus[r];
    const std::string gpu = element_path(static_cast<int>(r));
    if (ga.id != gb.id || ga.input_chunks != gb.input_chunks ||
        ga.output_chunks != gb.output_chunks || ga.scratch_chunks != gb.scratch_chunks) {
      return gpu + ": attributes differ";
    }
    if (ga.threadblocks.size() != gb.threadblocks.size()) return gpu + ": number of tbs differs";
    for (std::size_t t = 0; t < ga.threadblocks.size(); ++t) {
      const Threadblock& ta = ga.threadblocks[t];
      const Threadblock& tb = gb.threadblocks[t];
      const std::string block = element_path(static_cast<int>(r), static_cast<int>(t));
      if (ta.id != tb.id || ta.send != tb.send || ta.recv != tb.recv || ta.channel != tb.channel) {
        return block + ": attributes differ";
      }
      if (ta.steps.size() != tb.steps.size()) return block + ": number of steps differs";
      for (std::size_t s = 0; s < ta.steps.size(); ++s) {
        const Step& sa = ta.steps[s];
        const Step& sb = tb.steps[s];
        if (sa.type != sb.type || sa.srcbuf != sb.srcbuf || sa.srcoff != sb.srcoff ||
            sa.dstbuf != sb.dstbuf || sa.dstoff != sb.dstoff || sa.count != sb.count ||
            sa.depid != sb.depid || sa.deps != sb.deps || sa.hasdep != sb.hasdep) {
          return element_path(static_cast<int>(r), static_cast<int>(t), static_cast<int>(s)) +
                 ": step differs";
        }
      }
    }
  }
  return "";
}

inline std::vector<std::filesystem::path> corpus_files() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root(WEFT_MSCCL_XML_DIR);
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".xml")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace weft::ir::testing
