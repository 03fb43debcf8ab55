#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "ir_test_support.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

using namespace weft;
using namespace weft::ir;
using weft::ir::testing::edit_line;
using weft::ir::testing::matching;
using weft::ir::testing::only_error;
using weft::ir::testing::read_data;

namespace {

// pair_allreduce.xml, lines:
//  1 <algo ... nchannels="2" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="0" ...>
//  2 <gpu id="0" ...>       3 <tb id="0" send="1" recv="1" chan="0">
//  4   s   i[1]             5   rrc i[0] -> o[0], hasdep="1"
//                           7 <tb id="1" send="1" recv="1" chan="1">
//  8   s   o[0], depid="0" deps="1"       9   r -> o[1]
// 12 <gpu id="1" ...>      13 <tb id="0" send="0" recv="0" chan="0">
// 14   s   i[0]            15   rrc i[1] -> o[1], hasdep="1"
//                          17 <tb id="1" send="0" recv="0" chan="1">
// 18   s   o[1], depid="0" deps="1"      19   r -> o[0]
const std::string& pair() {
  static const std::string text = read_data("pair_allreduce.xml");
  return text;
}

LoadResult load(const std::string& text, const LimitsProfile& limits = msccl_limits()) {
  return load_xml_string(text, limits, "pair.xml");
}

// Loads `text` with the msccl profile and returns the one error containing `needle`.
Diagnostic refused(const std::string& text, std::string_view needle) {
  const LoadResult result = load(text);
  CHECK_FALSE(result.ok());
  CHECK_FALSE(result.algorithm.has_value());
  return only_error(result.diagnostics, needle);
}

}  // namespace

TEST_CASE("validate: the hand-written algorithms are valid under both profiles", "[validate]") {
  for (const char* name : {"pair_allreduce.xml", "ring_allreduce_4r.xml", "chain_broadcast_4r.xml",
                           "ring_reducescatter_3r_tools.xml"}) {
    for (const LimitsProfile& limits : {msccl_limits(), weft_limits()}) {
      INFO(name << " with " << limits.name);
      const LoadResult result = load(read_data(name), limits);
      INFO(result.diagnostics.str());
      CHECK(result.ok());
      CHECK(result.diagnostics.items.empty());
    }
  }
}

TEST_CASE("validate: limits profiles", "[validate]") {
  CHECK(limits_by_name("msccl")->max_steps_per_threadblock == 64);
  CHECK(limits_by_name("msccl")->max_count == 72);
  CHECK(limits_by_name("msccl")->max_channels == 32);
  CHECK(limits_by_name("msccl")->max_send_threadblocks_per_channel == 32);
  CHECK(limits_by_name("msccl")->max_recv_threadblocks_per_channel == 32);
  CHECK(limits_by_name("weft")->name == "weft");
  CHECK_FALSE(limits_by_name("nccl").has_value());
}

TEST_CASE("validate: the msccl profile keeps to its XML reader's limits", "[validate]") {
  const LoadResult loaded = load(pair());
  REQUIRE(loaded.ok());
  Algorithm algo = *loaded.algorithm;
  // 70 idle threadblocks of 60 nops each: every threadblock is within the step limit, but rank 0
  // has 2 + 72 + 4 + 4,200 elements.
  Gpu& rank0 = algo.gpus[0];
  for (int t = 0; t < 70; ++t) {
    Threadblock idle;
    idle.id = static_cast<int>(rank0.threadblocks.size());
    idle.steps.resize(60);
    rank0.threadblocks.push_back(idle);
  }
  algo.name = std::string(256, 'x');
  const Diagnostics msccl = validate(algo, msccl_limits());
  const auto nodes = matching(msccl, "4278 XML elements for this rank");
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].element == "gpu 0");
  CHECK(matching(msccl, "name is 256 characters long").size() == 1);
  CHECK(matching(msccl, "XML elements").size() == 1);  // rank 1 is within the limit
  const Diagnostics weft = validate(algo, weft_limits());
  INFO(weft.str());
  CHECK_FALSE(weft.has_errors());
}

TEST_CASE("validate: ids must be 0..N-1 without gaps", "[validate]") {
  const Diagnostic gpu =
      refused(edit_line(pair(), 12, "id=\"1\"", "id=\"2\""), "gpu id 2 at position 1");
  CHECK(gpu.line == 12);
  CHECK(gpu.element == "gpu 1");
  CHECK(gpu.file == "pair.xml");
  const Diagnostic tb =
      refused(edit_line(pair(), 7, "id=\"1\"", "id=\"3\""), "tb id 3 at position 1");
  CHECK(tb.line == 7);
  CHECK(tb.element == "gpu 0 / tb 1");
  const Diagnostic ngpus = refused(edit_line(pair(), 1, "ngpus=\"2\"", "ngpus=\"3\""),
                                   "ngpus is 3 but the algorithm has 2 <gpu> element(s)");
  CHECK(ngpus.line == 1);
}

TEST_CASE("validate: a peer is another existing rank", "[validate]") {
  const Diagnostic self =
      refused(edit_line(pair(), 3, "send=\"1\"", "send=\"0\""), "send peer 0 is the rank itself");
  CHECK(self.line == 3);
  CHECK(self.element == "gpu 0 / tb 0");
  const Diagnostic range = refused(edit_line(pair(), 17, "recv=\"0\"", "recv=\"7\""),
                                   "recv peer 7 is out of range (ngpus is 2");
  CHECK(range.line == 17);
  CHECK(range.element == "gpu 1 / tb 1");
  refused(edit_line(pair(), 17, "recv=\"0\"", "recv=\"-2\""), "recv peer -2 is out of range");
}

TEST_CASE("validate: send and receive steps need the threadblock's peer", "[validate]") {
  const Diagnostic send = refused(edit_line(pair(), 3, "send=\"1\"", "send=\"-1\""),
                                  "a 's' step sends, but its threadblock has no send peer");
  CHECK(send.line == 4);
  CHECK(send.element == "gpu 0 / tb 0 / step 0");
  const Diagnostic recv = refused(edit_line(pair(), 13, "recv=\"0\"", "recv=\"-1\""),
                                  "a 'rrc' step receives, but its threadblock has no recv peer");
  CHECK(recv.line == 15);
  CHECK(recv.element == "gpu 1 / tb 0 / step 1");
}

TEST_CASE("validate: operands stay inside their buffers", "[validate]") {
  const Diagnostic source = refused(edit_line(pair(), 4, "srcoff=\"1\"", "srcoff=\"2\""),
                                    "source i[2..3) is outside buffer 'i' of 2 chunk(s)");
  CHECK(source.line == 4);
  CHECK(source.element == "gpu 0 / tb 0 / step 0");
  // Scratch is as large as s_chunks says.
  const Diagnostic scratch = refused(edit_line(pair(), 19, "dstbuf=\"o\"", "dstbuf=\"s\""),
                                     "destination s[0..1) is outside buffer 's' of 0 chunk(s)");
  CHECK(scratch.line == 19);
  refused(edit_line(pair(), 9, "dstoff=\"1\"", "dstoff=\"-3\""),
          "destination o[-3..-2) is outside buffer 'o'");
  // An operand the step uses cannot be absent.
  const Diagnostic none = refused(edit_line(pair(), 8, "srcoff=\"0\"", "srcoff=\"-1\""),
                                  "a 's' step needs a source but has none (srcoff is -1)");
  CHECK(none.line == 8);
  // cnt counts chunks: at least one for a real step.
  std::string zero = edit_line(pair(), 4, "cnt=\"1\"", "cnt=\"0\"");
  zero = edit_line(zero, 15, "cnt=\"1\"", "cnt=\"0\"");
  CHECK(only_error(load(zero).diagnostics, "cnt 0 must be at least 1 for a 's' step").line == 4);
}

TEST_CASE("validate: in-place allgather reaches only its extents", "[validate]") {
  // An in-place allgather's input is nchunksperloop/ngpus chunks, whatever i_chunks says.
  const std::string text =
      "<algo name=\"ag\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"4\" ngpus=\"2\" "
      "coll=\"allgather\" inplace=\"1\">\n"
      "  <gpu id=\"0\" i_chunks=\"0\" o_chunks=\"0\" s_chunks=\"0\">\n"
      "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
      "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" "
      "cnt=\"2\" "
      "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
      "      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"2\" "
      "cnt=\"2\" "
      "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
      "    </tb>\n  </gpu>\n"
      "  <gpu id=\"1\" i_chunks=\"0\" o_chunks=\"0\" s_chunks=\"0\">\n"
      "    <tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n"
      "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"2\" "
      "cnt=\"2\" "
      "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
      "      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"0\" "
      "cnt=\"2\" "
      "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
      "    </tb>\n  </gpu>\n</algo>\n";
  const LoadResult ok = load(text);
  INFO(ok.diagnostics.str());
  CHECK(ok.ok());
  const std::string wide = edit_line(text, 10, "srcoff=\"0\"", "srcoff=\"1\"");
  CHECK(only_error(load(wide).diagnostics, "source i[1..3) is outside buffer 'i' of 2 chunk(s)")
            .line == 10);
  const Diagnostic divisible =
      refused(edit_line(text, 1, "nchunksperloop=\"4\"", "nchunksperloop=\"5\""),
              "nchunksperloop 5 is not divisible by ngpus 2");
  CHECK(divisible.line == 1);
}

TEST_CASE("validate: one threadblock per connection and direction", "[validate]") {
  const LoadResult result = load(edit_line(pair(), 7, "chan=\"1\"", "chan=\"0\""));
  CHECK_FALSE(result.ok());
  const Diagnostic sends =
      only_error(result.diagnostics, "tb 0 and tb 1 both send to rank 1 on channel 0");
  CHECK(sends.line == 7);
  CHECK(sends.element == "gpu 0 / tb 1");
  CHECK(only_error(result.diagnostics, "tb 0 and tb 1 both receive from rank 1 on channel 0")
            .element == "gpu 0 / tb 1");
}

TEST_CASE("validate: messages on a connection match in number and cnt", "[validate]") {
  // Rank 0's second threadblock no longer receives: rank 1's send on channel 1 has no partner.
  const Diagnostic count = refused(
      edit_line(pair(), 9, "type=\"r\"", "type=\"nop\""),
      "sends 1 message(s) to rank 0 on channel 1, but gpu 0 / tb 1 (line 7) receives 0; message 0 "
      "(gpu 1 / tb 1 / step 0 (line 18)) has no matching receive");
  CHECK(count.line == 17);
  CHECK(count.element == "gpu 1 / tb 1");

  const Diagnostic cnt = refused(
      edit_line(pair(), 14, "cnt=\"1\"", "cnt=\"2\""),
      "message 0 to rank 0 on channel 0 has cnt 2 here but cnt 1 where it is received, at gpu 0 "
      "/ tb 0 / step 1 (line 5)");
  CHECK(cnt.line == 14);
  CHECK(cnt.element == "gpu 1 / tb 0 / step 0");

  // A receiving threadblock with no sender on its connection at all.
  const Diagnostic orphan = refused(edit_line(pair(), 17, "send=\"0\"", "send=\"-1\""),
                                    "receives 1 message(s) from rank 1 on channel 1, but no "
                                    "threadblock of rank 1 sends to rank 0 on channel 1");
  CHECK(orphan.element == "gpu 0 / tb 1");
}

TEST_CASE("validate: channels must be below nchannels", "[validate]") {
  const LoadResult result = load(edit_line(pair(), 1, "nchannels=\"2\"", "nchannels=\"1\""));
  CHECK_FALSE(result.ok());
  CHECK(matching(result.diagnostics, "chan 1 is outside 0..nchannels-1 (nchannels is 1)").size() ==
        2);
}

TEST_CASE("validate: dependencies name an existing step of another threadblock with hasdep",
          "[validate]") {
  const Diagnostic step = refused(edit_line(pair(), 8, "deps=\"1\"", "deps=\"5\""),
                                  "depends on step 5 of tb 0, which does not exist (it has 2)");
  CHECK(step.line == 8);
  CHECK(step.element == "gpu 0 / tb 1 / step 0");
  const Diagnostic tb = refused(edit_line(pair(), 8, "depid=\"0\"", "depid=\"4\""),
                                "depends on tb 4, which does not exist (rank 0 has 2)");
  CHECK(tb.line == 8);
  const Diagnostic own =
      refused(edit_line(pair(), 8, "depid=\"0\"", "depid=\"1\""), "depends on its own threadblock");
  CHECK(own.line == 8);
  refused(edit_line(pair(), 8, "depid=\"0\"", "depid=\"-1\""),
          "depid=-1 deps=1: a dependency needs both");
  const Diagnostic hasdep = refused(edit_line(pair(), 5, "hasdep=\"1\"", "hasdep=\"0\""),
                                    "depends on gpu 0 / tb 0 / step 1 (line 5), which lacks "
                                    "hasdep=\"1\"");
  CHECK(hasdep.line == 8);
  CHECK(hasdep.element == "gpu 0 / tb 1 / step 0");
}

TEST_CASE("validate: dependency cycles are found and named", "[validate]") {
  // tb 0 step 0 now waits for tb 1 step 0, which waits for tb 0 step 1, which follows step 0.
  std::string text = edit_line(pair(), 4, "depid=\"-1\" deps=\"-1\"", "depid=\"1\" deps=\"0\"");
  text = edit_line(text, 8, "hasdep=\"0\"", "hasdep=\"1\"");
  const Diagnostic cycle = refused(text, "dependency cycle of 3 step(s) on rank 0");
  // Members in the order they wait on each other, back to the first.
  CHECK(cycle.message.find("tb 0 / step 1 -> tb 1 / step 0 -> tb 0 / step 0 -> tb 0 / step 1") !=
        std::string::npos);
  CHECK(cycle.element == "gpu 0 / tb 0 / step 1");
  CHECK(cycle.line == 5);
}

TEST_CASE("validate: collective-wide checks", "[validate]") {
  const Diagnostic never = refused(edit_line(pair(), 1, "outofplace=\"1\"", "outofplace=\"0\""),
                                   "inplace and outofplace are both 0");
  CHECK(never.line == 1);
  refused(edit_line(pair(), 1, "minBytes=\"0\" maxBytes=\"0\"", "minBytes=\"10\" maxBytes=\"5\""),
          "minBytes 10 is above maxBytes 5");
  refused(edit_line(pair(), 1, "maxBytes=\"0\"", "maxBytes=\"0\" root=\"2\""),
          "root 2 is out of range (ngpus is 2)");
  refused(edit_line(pair(), 1, "maxBytes=\"0\"", "maxBytes=\"0\" nnodes=\"3\""),
          "nnodes 3 does not divide ngpus 2 into nodes of equal rank counts");
}

TEST_CASE("validate: msccl limits are errors, weft's are wider", "[validate]") {
  SECTION("steps per threadblock") {
    std::string nops;
    for (int s = 2; s < 65; ++s) {
      nops += fmt::format(
          "\n      <step s=\"{}\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" "
          "dstoff=\"-1\" cnt=\"0\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>",
          s);
    }
    const std::string text = edit_line(pair(), 5, "hasdep=\"1\"/>", "hasdep=\"1\"/>" + nops);
    const Diagnostic d =
        refused(text, "65 steps exceed the 'msccl' profile's limit of 64 steps per threadblock");
    CHECK(d.line == 3);
    CHECK(d.element == "gpu 0 / tb 0");
    CHECK(load(text, weft_limits()).ok());
  }
  SECTION("cnt") {
    std::string text = edit_line(pair(), 1, "nchunksperloop=\"2\"", "nchunksperloop=\"144\"");
    text = edit_line(text, 14, "cnt=\"1\"", "cnt=\"72\"");
    text = edit_line(text, 5, "cnt=\"1\"", "cnt=\"72\"");
    const LoadResult msccl = load(text);
    CHECK(matching(msccl.diagnostics, "cnt 72 is not below the 'msccl' profile's limit of 72")
              .size() == 2);
    const LoadResult weft = load(text, weft_limits());
    INFO(weft.diagnostics.str());
    CHECK(weft.ok());
  }
  SECTION("channels") {
    const std::string text = edit_line(pair(), 1, "nchannels=\"2\"", "nchannels=\"33\"");
    CHECK(refused(text, "nchannels 33 exceeds the 'msccl' profile's limit of 32 channels").line ==
          1);
    CHECK(load(text, weft_limits()).ok());
  }
  SECTION("sending and receiving threadblocks per channel") {
    // Rank 0 sends one message to each of 33 peers, all on channel 0.
    Algorithm algo;
    algo.ngpus = 34;
    algo.nchunksperloop = 1;
    algo.gpus.resize(34);
    for (int r = 0; r < 34; ++r) {
      algo.gpus[static_cast<std::size_t>(r)].id = r;
      Step step;
      step.count = 1;
      Threadblock tb;
      if (r == 0) {
        for (int peer = 1; peer < 34; ++peer) {
          tb.id = peer - 1;
          tb.send = peer;
          step.type = StepType::Send;
          step.srcbuf = BufferKind::Input;
          step.srcoff = 0;
          tb.steps = {step};
          algo.gpus[0].threadblocks.push_back(tb);
        }
      } else {
        tb.recv = 0;
        step.type = StepType::Recv;
        step.dstbuf = BufferKind::Output;
        step.dstoff = 0;
        tb.steps = {step};
        algo.gpus[static_cast<std::size_t>(r)].threadblocks.push_back(tb);
      }
    }
    const Diagnostics msccl = validate(algo, msccl_limits());
    const Diagnostic d = only_error(
        msccl, "33 threadblocks send on channel 0; the 'msccl' profile allows 32 per channel");
    CHECK(d.element == "gpu 0");
    CHECK(msccl.error_count() == 1);
    CHECK_FALSE(validate(algo, weft_limits()).has_errors());
  }
}

TEST_CASE("validate: every problem of a file is reported", "[validate]") {
  std::string text = edit_line(pair(), 3, "send=\"1\"", "send=\"0\"");
  text = edit_line(text, 19, "dstoff=\"0\"", "dstoff=\"9\"");
  text = edit_line(text, 15, "hasdep=\"1\"", "hasdep=\"0\"");
  const LoadResult result = load(text);
  INFO(result.diagnostics.str());
  CHECK_FALSE(result.ok());
  CHECK(only_error(result.diagnostics, "send peer 0 is the rank itself").line == 3);
  CHECK(only_error(result.diagnostics, "destination o[9..10)").line == 19);
  CHECK(only_error(result.diagnostics, "lacks hasdep").line == 18);
}

TEST_CASE("validate: an avalanche of problems is capped", "[validate]") {
  Algorithm algo;
  algo.ngpus = 1;
  algo.gpus.resize(1);
  Threadblock tb;
  Step bad;
  bad.type = StepType::Copy;
  bad.count = 1;  // source and destination missing: two problems per step
  tb.steps.assign(1000, bad);
  algo.gpus[0].threadblocks.push_back(tb);
  const Diagnostics found = validate(algo, weft_limits());
  REQUIRE(found.items.size() == 201);
  CHECK(found.items.back().message.find("and 1800 more problem(s) not listed") !=
        std::string::npos);
}

TEST_CASE("validate: a file that cannot be read is not validated", "[validate]") {
  // The missing cnt is the only finding: no guesses about the default it would have had.
  const LoadResult result = load(edit_line(pair(), 14, "cnt=\"1\" ", ""));
  CHECK_FALSE(result.ok());
  CHECK(result.diagnostics.items.size() == 1);
  // Warnings pass through a successful load.
  const LoadResult warned =
      load(edit_line(pair(), 1, "coll=\"allreduce\"", "coll=\"allreduce\" colour=\"blue\""));
  CHECK(warned.ok());
  CHECK(warned.diagnostics.items.size() == 1);
  CHECK(warned.diagnostics.items[0].severity == Severity::Warning);
}
