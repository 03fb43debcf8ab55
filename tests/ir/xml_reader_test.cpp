#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "ir_test_support.h"
#include "weft/ir/xml.h"

using namespace weft;
using namespace weft::ir;
using weft::ir::testing::edit_line;
using weft::ir::testing::matching;
using weft::ir::testing::only_error;
using weft::ir::testing::read_data;

namespace {

// pair_allreduce.xml: 2 ranks, 2 threadblocks each; line 1 <algo>, lines 2 and 12 <gpu>,
// lines 3, 7, 13, 17 <tb>, steps on lines 4-5, 8-9, 14-15, 18-19.
const std::string& pair() {
  static const std::string text = read_data("pair_allreduce.xml");
  return text;
}

ReadResult read(const std::string& text) {
  return read_xml_string(text, "test.xml");
}

}  // namespace

TEST_CASE("reader: executor dialect file with every attribute", "[xml][reader]") {
  const ReadResult result = read(pair());
  INFO(result.diagnostics.str());
  REQUIRE(result.ok());
  CHECK(result.diagnostics.items.empty());
  const Algorithm& algo = *result.algorithm;
  CHECK(algo.name == "pair_allreduce");
  CHECK(algo.collective == Collective::AllReduce);
  CHECK(algo.protocol == Protocol::Simple);
  CHECK(algo.nchannels == 2);
  CHECK(algo.nchunksperloop == 2);
  CHECK(algo.ngpus == 2);
  CHECK_FALSE(algo.inplace);
  CHECK(algo.outofplace);
  CHECK(algo.root == -1);
  CHECK(algo.source == "test.xml");
  REQUIRE(algo.gpus.size() == 2);
  CHECK(algo.gpus[1].where.line == 12);
  CHECK(algo.gpus[1].id == 1);
  REQUIRE(algo.gpus[1].threadblocks.size() == 2);
  const Threadblock& tb = algo.gpus[1].threadblocks[1];
  CHECK(tb.where.line == 17);
  CHECK(tb.send == 0);
  CHECK(tb.recv == 0);
  CHECK(tb.channel == 1);
  REQUIRE(tb.steps.size() == 2);
  const Step& send = tb.steps[0];
  CHECK(send.where.line == 18);
  CHECK(send.type == StepType::Send);
  CHECK(send.srcbuf == BufferKind::Output);
  CHECK(send.srcoff == 1);
  CHECK(send.count == 1);
  CHECK(send.depid == 0);
  CHECK(send.deps == 1);
  CHECK_FALSE(send.hasdep);
  CHECK(algo.gpus[1].threadblocks[0].steps[1].hasdep);
  // srcoff="-1": the receive has no source, whatever buffer the file names.
  const Step& recv = tb.steps[1];
  CHECK(recv.srcbuf == BufferKind::None);
  CHECK(recv.dstbuf == BufferKind::Output);
  CHECK(recv.dstoff == 0);
}

TEST_CASE("reader: msccl-tools dialect takes defaults and reduce_scatter", "[xml][reader]") {
  const ReadResult result = read(read_data("ring_reducescatter_3r_tools.xml"));
  INFO(result.diagnostics.str());
  REQUIRE(result.ok());
  const Algorithm& algo = *result.algorithm;
  CHECK(algo.collective == Collective::ReduceScatter);
  CHECK(algo.collective_name == "reduce_scatter");
  CHECK_FALSE(algo.inplace);
  CHECK(algo.outofplace);  // missing outofplace is !inplace
  CHECK(algo.min_bytes == 0);
  CHECK(algo.max_bytes == 0);
  CHECK(algo.nthreads == 0);

  const std::string in_place = edit_line(read_data("ring_reducescatter_3r_tools.xml"), 1,
                                         "inplace=\"0\"", "inplace=\"1\" nthreads=\"256\"");
  const ReadResult second = read(in_place);
  REQUIRE(second.ok());
  CHECK(second.algorithm->inplace);
  CHECK_FALSE(second.algorithm->outofplace);
  CHECK(second.algorithm->nthreads == 256);
}

TEST_CASE("reader: optional attributes of the executor dialect and Weft's root", "[xml][reader]") {
  const ReadResult result = read(read_data("chain_broadcast_4r.xml"));
  REQUIRE(result.ok());
  CHECK(result.algorithm->collective == Collective::Broadcast);
  CHECK(result.algorithm->root == 0);
  // A comment before <algo> is fine and moves lines.
  CHECK(result.algorithm->where.line == 2);

  const std::string band =
      edit_line(pair(), 1, "maxBytes=\"0\"", "maxBytes=\"18446744073709551615\"");
  const ReadResult big = read(band);
  REQUIRE(big.ok());
  CHECK(big.algorithm->max_bytes == 18446744073709551615ull);
}

TEST_CASE("reader: malformed XML names the line", "[xml][reader]") {
  const std::string broken = edit_line(pair(), 9, "hasdep=\"0\"/>", "hasdep=\"0\">");
  const ReadResult result = read(broken);
  CHECK_FALSE(result.ok());
  CHECK_FALSE(result.algorithm.has_value());
  const Diagnostic d = only_error(result.diagnostics, "malformed XML");
  CHECK(d.file == "test.xml");
  // The unclosed <step> is noticed at the first closing tag that does not match it.
  CHECK(d.line == 10);

  const std::string garbage = edit_line(pair(), 6, "</tb>", "</tb> <<>");
  CHECK(only_error(read(garbage).diagnostics, "malformed XML").line == 6);
}

TEST_CASE("reader: empty, binary and non-MSCCL documents are errors, not crashes",
          "[xml][reader]") {
  CHECK(only_error(read("").diagnostics, "no <algo> element").line == 0);
  CHECK(only_error(read("   \n  ").diagnostics, "no <algo> element").line == 0);
  const std::string binary("\x00\x01\xff<algo\x00", 9);
  CHECK_FALSE(read(binary).ok());
  const ReadResult wrong = read("<?xml version=\"1.0\"?>\n<msccl>\n</msccl>\n");
  CHECK(only_error(wrong.diagnostics, "root element is <msccl>, expected <algo>").line == 2);
  CHECK_FALSE(wrong.algorithm.has_value());
  const ReadResult two = read(pair() + "<algo/>\n");
  CHECK(only_error(two.diagnostics, "second top-level element").line == 23);
}

TEST_CASE("reader: missing attributes are named with their element", "[xml][reader]") {
  const ReadResult step = read(edit_line(pair(), 15, "cnt=\"1\" ", ""));
  CHECK_FALSE(step.ok());
  CHECK(step.algorithm.has_value());  // the structure was read; the file is still refused
  const Diagnostic d = only_error(step.diagnostics, "missing attribute 'cnt' on <step>");
  CHECK(d.line == 15);
  CHECK(d.element == "gpu 1 / tb 0 / step 1");
  CHECK(d.str() == "test.xml:15: gpu 1 / tb 0 / step 1: error: missing attribute 'cnt' on <step>");

  const ReadResult tb = read(edit_line(pair(), 7, " chan=\"1\"", ""));
  const Diagnostic t = only_error(tb.diagnostics, "missing attribute 'chan' on <tb>");
  CHECK(t.line == 7);
  CHECK(t.element == "gpu 0 / tb 1");

  const ReadResult gpu = read(edit_line(pair(), 12, " s_chunks=\"0\"", ""));
  CHECK(only_error(gpu.diagnostics, "missing attribute 's_chunks' on <gpu>").element == "gpu 1");

  const ReadResult algo = read(edit_line(pair(), 1, " nchunksperloop=\"2\"", ""));
  const Diagnostic a = only_error(algo.diagnostics, "missing attribute 'nchunksperloop' on <algo>");
  CHECK(a.line == 1);
  CHECK(a.element.empty());
}

TEST_CASE("reader: numbers must be whole decimal integers in range", "[xml][reader]") {
  struct Case {
    const char* value;
    const char* says;
  };
  const Case cases[] = {
      {"12abc", "attribute srcoff=\"12abc\" on <step> is not an integer"},
      {"", "attribute 'srcoff' on <step> is empty"},
      {"99999999999", "attribute srcoff=\"99999999999\" on <step> is out of range"},
      {" 1", "attribute srcoff=\" 1\" on <step> is not an integer"},
      {"+1", "attribute srcoff=\"+1\" on <step> is not an integer"},
      {"0x1", "attribute srcoff=\"0x1\" on <step> is not an integer"},
      {"1.0", "attribute srcoff=\"1.0\" on <step> is not an integer"},
  };
  for (const Case& c : cases) {
    INFO("srcoff=\"" << c.value << "\"");
    const ReadResult result =
        read(edit_line(pair(), 14, "srcoff=\"0\"", fmt::format("srcoff=\"{}\"", c.value)));
    CHECK_FALSE(result.ok());
    const Diagnostic d = only_error(result.diagnostics, c.says);
    CHECK(d.line == 14);
    CHECK(d.element == "gpu 1 / tb 0 / step 0");
  }
  // Unsigned attributes refuse a sign.
  const ReadResult negative = read(edit_line(pair(), 1, "minBytes=\"0\"", "minBytes=\"-5\""));
  only_error(negative.diagnostics, "minBytes=\"-5\" on <algo> is not a non-negative integer");
  // Flags are 0 or 1.
  const ReadResult flag = read(edit_line(pair(), 5, "hasdep=\"1\"", "hasdep=\"2\""));
  CHECK(only_error(flag.diagnostics, "hasdep=\"2\" on <step> must be 0 or 1").line == 5);
}

TEST_CASE("reader: unknown collective, protocol, step type and buffer", "[xml][reader]") {
  const ReadResult coll = read(edit_line(pair(), 1, "coll=\"allreduce\"", "coll=\"allfoo\""));
  CHECK(only_error(coll.diagnostics, "unknown collective coll=\"allfoo\"").line == 1);
  const ReadResult proto = read(edit_line(pair(), 1, "proto=\"Simple\"", "proto=\"simple\""));
  CHECK(only_error(proto.diagnostics, "unknown protocol proto=\"simple\"").line == 1);
  const ReadResult type = read(edit_line(pair(), 8, "type=\"s\"", "type=\"send\""));
  const Diagnostic t = only_error(type.diagnostics, "unknown step type type=\"send\"");
  CHECK(t.line == 8);
  CHECK(t.element == "gpu 0 / tb 1 / step 0");
  const ReadResult buffer = read(edit_line(pair(), 4, "srcbuf=\"i\"", "srcbuf=\"input\""));
  CHECK(only_error(buffer.diagnostics, "unknown buffer srcbuf=\"input\"").line == 4);
}

TEST_CASE("reader: step index must equal its position", "[xml][reader]") {
  const ReadResult result = read(edit_line(pair(), 19, "s=\"1\"", "s=\"2\""));
  const Diagnostic d =
      only_error(result.diagnostics, "step index s=2 does not match its position 1");
  CHECK(d.line == 19);
  CHECK(d.element == "gpu 1 / tb 1 / step 1");
}

TEST_CASE("reader: unexpected elements are errors, unknown attributes warnings", "[xml][reader]") {
  const ReadResult child = read(edit_line(pair(), 6, "</tb>", "<stpe s=\"2\"/></tb>"));
  const Diagnostic d = only_error(child.diagnostics, "unexpected element <stpe> inside <tb>");
  CHECK(d.line == 6);
  CHECK(d.element == "gpu 0 / tb 0");

  const ReadResult attribute =
      read(edit_line(pair(), 1, "outofplace=\"1\"", "outofplace=\"1\" outofpalce=\"0\""));
  CHECK(attribute.ok());  // a warning does not refuse the file
  const auto warnings = matching(attribute.diagnostics, "unknown attribute \"outofpalce\"");
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].severity == Severity::Warning);
  CHECK(warnings[0].line == 1);

  const ReadResult twice = read(edit_line(pair(), 8, "cnt=\"1\"", "cnt=\"1\" cnt=\"2\""));
  CHECK(only_error(twice.diagnostics, "attribute 'cnt' given twice on <step>").line == 8);

  const ReadResult text = read(edit_line(pair(), 3, "chan=\"0\">", "chan=\"0\">stray"));
  CHECK(text.ok());
  CHECK(matching(text.diagnostics, "text \"stray").size() == 1);
}

TEST_CASE("reader: every problem of a file is reported", "[xml][reader]") {
  std::string text = pair();
  text = edit_line(text, 1, "proto=\"Simple\"", "proto=\"LL64\"");
  text = edit_line(text, 4, "cnt=\"1\"", "cnt=\"x\"");
  text = edit_line(text, 13, " recv=\"0\"", "");
  text = edit_line(text, 18, "type=\"s\"", "type=\"q\"");
  text = edit_line(text, 19, "deps=\"-1\"", "deps=\"\"");
  const ReadResult result = read(text);
  INFO(result.diagnostics.str());
  CHECK(result.diagnostics.error_count() == 5);
  CHECK(only_error(result.diagnostics, "unknown protocol").line == 1);
  CHECK(only_error(result.diagnostics, "cnt=\"x\"").line == 4);
  CHECK(only_error(result.diagnostics, "missing attribute 'recv'").line == 13);
  CHECK(only_error(result.diagnostics, "unknown step type").line == 18);
  CHECK(only_error(result.diagnostics, "'deps' on <step> is empty").line == 19);
}

TEST_CASE("reader: an avalanche of problems is capped", "[xml][reader]") {
  std::string text =
      "<algo proto=\"LL\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"1\" coll=\"allreduce\" "
      "inplace=\"1\">\n  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\">\n"
      "    <tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\">\n";
  for (int s = 0; s < 500; ++s) text += fmt::format("      <step s=\"{}\" type=\"nop\"/>\n", s);
  text += "    </tb>\n  </gpu>\n</algo>\n";
  const ReadResult result = read(text);
  // 8 missing attributes per step: 4,000 problems, 200 listed and one line for the rest.
  REQUIRE(result.diagnostics.items.size() == 201);
  CHECK(result.diagnostics.items[0].line == 4);
  CHECK(result.diagnostics.items.back().message.find("and 3800 more problem(s) not listed") !=
        std::string::npos);
}

TEST_CASE("reader: files", "[xml][reader]") {
  const std::string path = testing::data_path("pair_allreduce.xml");
  const ReadResult result = read_xml_file(path);
  REQUIRE(result.ok());
  CHECK(result.algorithm->source == path);

  const ReadResult missing = read_xml_file(path + ".absent");
  CHECK_FALSE(missing.ok());
  const Diagnostic d = only_error(missing.diagnostics, "cannot be read: No such file");
  CHECK(d.file == path + ".absent");
}
