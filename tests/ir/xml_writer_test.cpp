#include <filesystem>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "ir_test_support.h"
#include "weft/ir/text_file.h"
#include "weft/ir/xml.h"

using namespace weft;
using namespace weft::ir;
using weft::ir::testing::first_difference;
using weft::ir::testing::read_data;

namespace {

Algorithm must_read(const std::string& text) {
  ReadResult result = read_xml_string(text);
  INFO(result.diagnostics.str());
  REQUIRE(result.ok());
  return std::move(*result.algorithm);
}

// An empty folder of this test process's own under the system's temporary folder.
std::filesystem::path scratch_folder(const std::string& prefix) {
  const auto folder =
      std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

}  // namespace

TEST_CASE("writer: read, write, read gives the same algorithm", "[xml][writer]") {
  for (const char* name : {"pair_allreduce.xml", "ring_allreduce_4r.xml", "chain_broadcast_4r.xml",
                           "ring_reducescatter_3r_tools.xml"}) {
    INFO(name);
    const Algorithm first = must_read(read_data(name));
    const std::string written = write_xml(first);
    const Algorithm second = must_read(written);
    CHECK(first_difference(first, second).empty());
    // Writing is a fixed point after one round.
    CHECK(write_xml(second) == written);
  }
}

TEST_CASE("writer: executor dialect, every attribute, corpus layout", "[xml][writer]") {
  const std::string written = write_xml(must_read(read_data("ring_reducescatter_3r_tools.xml")));
  const std::string expected_head =
      "<algo name=\"ring_reducescatter_3\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"3\" "
      "ngpus=\"3\" coll=\"reducescatter\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" "
      "maxBytes=\"0\">\n"
      "  <gpu id=\"0\" i_chunks=\"3\" o_chunks=\"1\" s_chunks=\"0\">\n"
      "    <tb id=\"0\" send=\"1\" recv=\"2\" chan=\"0\">\n"
      "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"2\" dstbuf=\"o\" dstoff=\"-1\" "
      "cnt=\"1\" "
      "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n";
  CHECK(written.substr(0, expected_head.size()) == expected_head);
  CHECK(written.size() >= 9);
  CHECK(written.substr(written.size() - 9) == "\n</algo>\n");
  CHECK(written.find("root=") == std::string::npos);  // only written when known
  CHECK(written.find("nthreads=") == std::string::npos);
  CHECK(written.find("nnodes=") == std::string::npos);
}

TEST_CASE("writer: optional attributes and escaping survive a round trip", "[xml][writer]") {
  Algorithm algo = must_read(read_data("chain_broadcast_4r.xml"));
  algo.name = "a<b & \"c\" 'd'\tlast";
  algo.nthreads = 512;
  algo.nnodes = 2;  // 4 ranks: two nodes of two
  const std::string written = write_xml(algo);
  CHECK(written.find(" root=\"0\"") != std::string::npos);
  CHECK(written.find(" nthreads=\"512\"") != std::string::npos);
  CHECK(written.find(" nnodes=\"2\"") != std::string::npos);
  const Algorithm back = must_read(written);
  CHECK(back.name == algo.name);
  CHECK(first_difference(algo, back).empty());
}

TEST_CASE("writer: unused operands are written as MSCCL's files write them", "[xml][writer]") {
  Algorithm algo;
  algo.name = "one";
  algo.ngpus = 2;
  algo.nchunksperloop = 1;
  for (int r = 0; r < 2; ++r) {
    Gpu gpu;
    gpu.id = r;
    Threadblock tb;
    tb.id = 0;
    Step step;
    step.count = 1;
    if (r == 0) {
      tb.send = 1;
      step.type = StepType::Send;
      step.srcbuf = BufferKind::Input;
      step.srcoff = 0;
    } else {
      tb.recv = 0;
      step.type = StepType::Recv;
      step.dstbuf = BufferKind::Output;
      step.dstoff = 0;
    }
    tb.steps.push_back(step);
    gpu.threadblocks.push_back(tb);
    algo.gpus.push_back(gpu);
  }
  const std::string written = write_xml(algo);
  CHECK(written.find("type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"-1\"") !=
        std::string::npos);
  CHECK(written.find("type=\"r\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"0\"") !=
        std::string::npos);
  const Algorithm back = must_read(written);
  CHECK(first_difference(algo, back).empty());
}

TEST_CASE("writer: files are written whole or not at all", "[xml][writer]") {
  const Algorithm algo = must_read(read_data("ring_allreduce_4r.xml"));
  const auto folder = scratch_folder("weft_writer_test_");
  const std::string path = (folder / "ring.xml").string();
  std::string error;
  REQUIRE(write_xml_file(algo, path, &error));
  CHECK(error.empty());
  const ReadResult back = read_xml_file(path);
  REQUIRE(back.ok());
  CHECK(first_difference(algo, *back.algorithm).empty());
  // Nothing but the file itself is left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++entries;
  CHECK(entries == 1);

  const std::string impossible = (folder / "no-such-folder" / "ring.xml").string();
  CHECK_FALSE(write_xml_file(algo, impossible, &error));
  CHECK(error.find(impossible) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(impossible));
  std::filesystem::remove_all(folder);
}

TEST_CASE("writer: a file of many megabytes, written in pieces, is the text write_xml gives",
          "[xml][writer]") {
  // The writer does not validate: copies of one threadblock make a text of several pieces.
  Algorithm algo = must_read(read_data("ring_allreduce_4r.xml"));
  for (Gpu& gpu : algo.gpus) {
    const Threadblock tb = gpu.threadblocks.front();
    for (int k = 0; k < 4000; ++k) gpu.threadblocks.push_back(tb);
  }
  const std::string text = write_xml(algo);
  REQUIRE(text.size() > (std::size_t{3} << 20));
  const auto folder = scratch_folder("weft_writer_big_");
  const std::string path = (folder / "big.xml").string();
  std::string error;
  REQUIRE(write_xml_file(algo, path, &error));
  const TextFile file = read_text_file(path, FileReadPolicy{});
  REQUIRE(file.ok());
  CHECK(file.text.size() == text.size());
  CHECK(file.text == text);
  std::filesystem::remove_all(folder);
}
