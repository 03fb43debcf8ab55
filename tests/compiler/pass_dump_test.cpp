// Watching the passes (CompileOptions::dump_after): which passes are heard, in which order, what
// their text holds, and that dumping changes nothing the compile writes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "compiler_test_support.h"
#include "weft/ir/xml.h"

using namespace weft;

namespace {

struct Heard {
  std::vector<std::pair<std::string, std::string>> dumps;  // (pass, text), in the order heard

  const std::string& text(const std::string& pass) const {
    static const std::string none;
    for (const auto& [name, text] : dumps) {
      if (name == pass) return text;
    }
    return none;
  }
  std::vector<std::string> passes() const {
    std::vector<std::string> names;
    for (const auto& dump : dumps) names.push_back(dump.first);
    return names;
  }
};

compiler::CompileOptions watching(std::vector<std::string> passes, Heard& heard) {
  compiler::CompileOptions options = test::quick();
  options.dump_after.passes = std::move(passes);
  options.dump_after.sink = [&heard](std::string_view pass, std::string_view text) {
    heard.dumps.emplace_back(std::string(pass), std::string(text));
  };
  return options;
}

std::vector<std::string> all_passes() {
  std::vector<std::string> names;
  for (const std::string_view name : compiler::pass_names()) names.emplace_back(name);
  return names;
}

}  // namespace

TEST_CASE("dump_after all: every pass once, in the pipeline's order", "[compiler][dump]") {
  dsl::Options two;
  two.instances = 2;  // so that cut and replicate run
  Heard heard;
  const compiler::CompileResult result =
      compiler::compile(test::ring_allreduce(3, two), watching({"all"}, heard));
  INFO(result.error_text());
  REQUIRE(result.ok());
  CHECK(heard.passes() == all_passes());
  CHECK_THAT(heard.text("postcondition"), Catch::Contains("postcondition: holds") &&
                                              Catch::Contains("#0     reduce rank 0 input[0] -> "
                                                              "rank 1 input[0]"));
  CHECK_THAT(heard.text("lower"), Catch::Contains("lowered: 24 instructions over 3 ranks") &&
                                      Catch::Contains("rank 1   rrc"));
  CHECK_THAT(heard.text("cut"), Catch::StartsWith("cut for instances: "));
  CHECK_THAT(heard.text("fuse"), Catch::Contains("fused DAG: 15 instructions") &&
                                     Catch::Contains("rrcs") && Catch::Contains("fused with"));
  CHECK_THAT(heard.text("schedule"), Catch::Contains("position, longest path to a sink"));
  CHECK_THAT(heard.text("assign"),
             Catch::Contains("kept: critical path order") &&
                 Catch::Contains("channel 0: rank 0 -> rank 1: tb 0 -> tb 0, 4 messages"));
  CHECK_THAT(heard.text("dependencies"),
             Catch::StartsWith("one instance, with its dependencies: 3 ranks, 1 channel, 3 "
                               "threadblocks, 15 steps"));
  CHECK_THAT(heard.text("replicate"),
             Catch::StartsWith("2 instances: 3 ranks, 2 channels, 6 threadblocks, 30 steps"));
  // The XML as write_xml_file writes it, and the sweep case by case.
  CHECK(heard.text("emit") == ir::write_xml(*result.algorithm));
  CHECK_THAT(heard.text("verify"), Catch::StartsWith("verified: 4 cases, 0 failed") &&
                                       Catch::Contains("in place, S=37 T=8 D=8 seed 1: pass"));
}

TEST_CASE("dump_after one pass: only that pass is heard, and the output is the same",
          "[compiler][dump]") {
  const compiler::CompileResult plain = compiler::compile(test::ring_allreduce(4), test::quick());
  REQUIRE(plain.ok());
  Heard heard;
  const compiler::CompileResult watched =
      compiler::compile(test::ring_allreduce(4), watching({"fuse"}, heard));
  REQUIRE(watched.ok());
  CHECK(heard.passes() == std::vector<std::string>{"fuse"});
  CHECK(ir::write_xml(*watched.algorithm) == ir::write_xml(*plain.algorithm));
  // One instance: cut and replicate say they did not run.
  Heard skipped;
  REQUIRE(compiler::compile(test::ring_allreduce(4), watching({"cut", "replicate"}, skipped)).ok());
  CHECK(skipped.passes() == std::vector<std::string>{"cut", "replicate"});
  CHECK(skipped.text("cut") == "not run: one instance, nothing to cut\n");
  CHECK(skipped.text("replicate") == "not run: one instance, nothing to copy\n");
}

TEST_CASE("dump_after assign: the plans the channel search placed, and where it chose",
          "[compiler][dump]") {
  // 40 ranks on one channel put 79 steps on a threadblock, above msccl's 64: the search spreads.
  Heard heard;
  compiler::CompileOptions options = watching({"assign"}, heard);
  options.judge.enabled = false;
  const compiler::CompileResult result =
      compiler::compile_unverified(test::ring_allreduce(40), options);
  INFO(result.error_text());
  REQUIRE(result.algorithm);
  CHECK_THAT(heard.text("assign"),
             Catch::Contains("critical path order, paired directions, unhinted traffic on one "
                             "channel: breaks the limits: rank 0 threadblock 0 has 79 steps, "
                             "above 64") &&
                 Catch::Contains("kept: critical path order, paired directions, spread over 2 "
                                 "channels (by the critical path in steps"));
}

TEST_CASE("dump_after: a compile that stops early dumps no further", "[compiler][dump]") {
  dsl::Program p("ring", dsl::Collective::allreduce(3, 3));
  p.chunk(1, dsl::input, 0).reduce(p.chunk(0, dsl::input, 0));  // and nothing more
  Heard heard;
  const compiler::CompileResult result = compiler::compile(p, watching({"all"}, heard));
  CHECK_FALSE(result.ok());
  CHECK(heard.passes() == std::vector<std::string>{"postcondition"});
  CHECK_THAT(heard.text("postcondition"), Catch::Contains("postcondition fails") &&
                                              Catch::Contains("1 operations in program order"));
}

TEST_CASE("dump_after: a name that is not a pass is an error naming the passes",
          "[compiler][dump]") {
  CHECK_FALSE(compiler::unknown_pass("all"));
  for (const std::string_view pass : compiler::pass_names())
    CHECK_FALSE(compiler::unknown_pass(pass));
  CHECK(compiler::unknown_pass("fusion") ==
        "'fusion' is not a pass; did you mean 'fuse'? The passes: postcondition, lower, cut, "
        "forward, fuse, schedule, assign, dependencies, replicate, emit, verify, or all");
  CHECK(compiler::unknown_pass("bogus") ==
        "'bogus' is not a pass; the passes: postcondition, lower, cut, forward, fuse, schedule, "
        "assign, dependencies, replicate, emit, verify, or all");

  Heard heard;
  const compiler::CompileResult result =
      compiler::compile(test::ring_allreduce(3), watching({"lower", "fusion"}, heard));
  CHECK_FALSE(result.algorithm);
  REQUIRE(result.errors.size() == 1);
  CHECK_THAT(result.errors[0], Catch::StartsWith("dump_after: 'fusion' is not a pass"));
  CHECK(heard.dumps.empty());

  compiler::CompileOptions no_sink = test::quick();
  no_sink.dump_after.passes = {"lower"};
  const compiler::CompileResult unheard = compiler::compile(test::ring_allreduce(3), no_sink);
  CHECK_FALSE(unheard.algorithm);
  CHECK_THAT(unheard.error_text(), Catch::Contains("has no sink"));
}
