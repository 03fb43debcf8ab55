// Misuse throws a DslError naming the call site (file and line of the caller) and what is wrong.
#include <catch2/catch.hpp>

#include <string>

#include "weft/dsl/dsl.h"

namespace dsl = weft::dsl;

namespace {

// Runs `record` (which makes one DSL call on line `line` of this file) and returns the error.
template <typename F>
dsl::DslError error_from(F&& record) {
  try {
    record();
  } catch (const dsl::DslError& e) {
    return e;
  }
  FAIL("no DslError was thrown");
  throw;  // unreachable
}

void check_names_caller(const dsl::DslError& e, int line, const std::string& call) {
  CHECK(std::string(e.where().file_name()).find("errors_test.cpp") != std::string::npos);
  CHECK(static_cast<int>(e.where().line()) == line);
  CHECK(e.call() == call);
  CHECK_THAT(e.what(), Catch::Contains("errors_test.cpp:" + std::to_string(line) + ": " + call));
}

}  // namespace

TEST_CASE("a rank out of range names the call and the rank", "[dsl][errors]") {
  dsl::Program p("t", dsl::Collective::allreduce(4, 1));
  int line = 0;
  const dsl::DslError e = error_from([&] {
    line = __LINE__ + 1;
    p.chunk(0, dsl::input, 0).copy(9, dsl::input, 0);
  });
  check_names_caller(e, line, "copy");
  CHECK_THAT(e.reason(), Catch::Contains("rank 9 is out of range"));

  int line2 = 0;
  const dsl::DslError e2 = error_from([&] {
    line2 = __LINE__ + 1;
    p.chunk(-1, dsl::input, 0);
  });
  check_names_caller(e2, line2, "chunk");
}

TEST_CASE("an index out of range names the buffer and its size", "[dsl][errors]") {
  dsl::Program p("t", dsl::Collective::allgather(4, 2, false));
  int line = 0;
  const dsl::DslError e = error_from([&] {
    line = __LINE__ + 1;
    p.chunk(1, dsl::input, 1, 2);
  });
  check_names_caller(e, line, "chunk");
  CHECK_THAT(e.reason(), Catch::Contains("index 1 (size 2) is out of range"));
  CHECK_THAT(e.reason(), Catch::Contains("has 2 chunks"));
}

TEST_CASE("reading an empty slot names the slot", "[dsl][errors]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 2, false));
  int line = 0;
  const dsl::DslError e = error_from([&] {
    line = __LINE__ + 1;
    p.chunk(0, dsl::output, 1).copy(1, dsl::output, 1);
  });
  check_names_caller(e, line, "copy");
  CHECK_THAT(e.reason(), Catch::Contains("rank 0 output[1]"));
  CHECK_THAT(e.reason(), Catch::Contains("holds no data"));

  SECTION("a reduce reads its destination too") {
    const dsl::DslError r =
        error_from([&] { p.chunk(1, dsl::output, 0).reduce(p.chunk(0, dsl::input, 0)); });
    CHECK(r.call() == "reduce");
    CHECK_THAT(r.reason(), Catch::Contains("rank 1 output[0]"));
  }
  SECTION("and scratch slots never written") {
    const dsl::DslError r = error_from([&] { p.chunk(0, "tmp", 3).copy(1, dsl::output, 0); });
    CHECK_THAT(r.reason(), Catch::Contains("scratch 'tmp'[3]"));
  }
  SECTION("and inputs the custom precondition leaves empty") {
    dsl::CustomCollective c;
    c.name = "half";
    c.ranks = 2;
    c.input_chunks = {2, 2};
    c.output_chunks = {2, 2};
    c.precondition = [](int, int index) { return index == 0; };
    c.postcondition = [](int, int) { return std::vector<weft::ChunkId>{}; };
    dsl::Program q("t", dsl::Collective::custom(c));
    q.chunk(0, dsl::input, 0).copy(1, dsl::output, 0);
    const dsl::DslError r = error_from([&] { q.chunk(0, dsl::input, 1).copy(1, dsl::output, 1); });
    CHECK_THAT(r.reason(), Catch::Contains("rank 0 input[1]"));
  }
}

TEST_CASE("mismatched sizes name both sides", "[dsl][errors]") {
  dsl::Program p("t", dsl::Collective::allreduce(2, 4));
  int line = 0;
  const dsl::DslError e = error_from([&] {
    line = __LINE__ + 1;
    p.chunk(0, dsl::input, 0, 2).reduce(p.chunk(1, dsl::input, 0, 3));
  });
  check_names_caller(e, line, "reduce");
  CHECK_THAT(e.reason(), Catch::Contains("sizes differ"));
  CHECK_THAT(e.reason(), Catch::Contains("rank 1 input[0..3)"));
}

TEST_CASE("copying a chunk onto itself is refused", "[dsl][errors]") {
  SECTION("the same place") {
    dsl::Program p("t", dsl::Collective::allreduce(2, 4));
    int line = 0;
    const dsl::DslError e = error_from([&] {
      line = __LINE__ + 1;
      p.chunk(0, dsl::input, 1).copy(0, dsl::input, 1);
    });
    check_names_caller(e, line, "copy");
    CHECK_THAT(e.reason(), Catch::Contains("copied onto itself"));
  }
  SECTION("through an in-place alias") {
    dsl::Program p("t", dsl::Collective::allreduce(2, 4, true));
    const dsl::DslError e = error_from([&] { p.chunk(0, dsl::input, 1).copy(0, dsl::output, 1); });
    CHECK_THAT(e.reason(), Catch::Contains("in-place"));
  }
  SECTION("overlapping ranges") {
    dsl::Program p("t", dsl::Collective::allreduce(2, 4));
    const dsl::DslError e =
        error_from([&] { p.chunk(0, dsl::input, 0, 2).copy(0, dsl::input, 1); });
    CHECK_THAT(e.reason(), Catch::Contains("overlaps"));
  }
  SECTION("reducing a chunk with itself") {
    dsl::Program p("t", dsl::Collective::allreduce(2, 4));
    const dsl::DslError e =
        error_from([&] { p.chunk(1, dsl::input, 2).reduce(p.chunk(1, dsl::input, 2)); });
    CHECK(e.call() == "reduce");
    CHECK_THAT(e.reason(), Catch::Contains("reduced with itself"));
  }
}

TEST_CASE("bad collectives, options and helpers are refused where they are made", "[dsl][errors]") {
  CHECK_THROWS_AS(dsl::Collective::allreduce(0, 1), dsl::DslError);
  CHECK_THROWS_AS(dsl::Collective::broadcast(4, 4), dsl::DslError);
  CHECK_THROWS_AS(dsl::Collective::reduce(4, -1), dsl::DslError);
  dsl::Options options;
  options.instances = 0;
  CHECK_THROWS_AS(dsl::Program("t", dsl::Collective::allreduce(2), options), dsl::DslError);
  options.instances = 1;
  options.limits = "nonsense";
  CHECK_THROWS_WITH(dsl::Program("t", dsl::Collective::allreduce(2), options),
                    Catch::Contains("unknown limits profile 'nonsense'"));
  dsl::Program p("t", dsl::Collective::allreduce(2, 4));
  CHECK_THROWS_WITH(p.chunk(0, dsl::input, 0, 3).split(2),
                    Catch::Contains("3 chunks cannot be split"));
  CHECK_THROWS_WITH(p.chunk(0, dsl::input, 0, 2).slice(1, 2), Catch::Contains("not inside"));
  CHECK_THROWS_WITH(
      dsl::group(std::vector<dsl::ChunkRef>{p.chunk(0, dsl::input, 0), p.chunk(0, dsl::input, 2)}),
      Catch::Contains("not right after"));
  CHECK_THROWS_WITH(p.chunk(0, dsl::input, 0).copy(1, dsl::input, 0, {.channel = -5}),
                    Catch::Contains("hint channel = -5"));
  CHECK_THROWS_WITH(p.chunk(0, dsl::input, 0).copy(1, dsl::input, 0, {.sendtb = 1 << 30}),
                    Catch::Contains("hint sendtb = 1073741824 must be -1 (none) or a number in"));
  dsl::Program other("u", dsl::Collective::allreduce(2, 4));
  CHECK_THROWS_WITH(p.chunk(0, dsl::input, 0).copy(other.chunk(1, dsl::input, 0)),
                    Catch::Contains("different programs"));
}

TEST_CASE("a custom postcondition naming missing chunks is refused", "[dsl][errors]") {
  dsl::CustomCollective c;
  c.name = "bad";
  c.ranks = 2;
  c.input_chunks = {1, 1};
  c.output_chunks = {1, 1};
  c.postcondition = [](int, int) { return std::vector<weft::ChunkId>{{0, 3}}; };
  CHECK_THROWS_WITH(dsl::Collective::custom(c), Catch::Contains("names input chunk r0c3"));
  c.postcondition = [](int, int) { return std::vector<weft::ChunkId>{{0, 0}, {0, 0}}; };
  CHECK_THROWS_WITH(dsl::Collective::custom(c), Catch::Contains("twice"));
  c.postcondition = nullptr;
  CHECK_THROWS_WITH(dsl::Collective::custom(c), Catch::Contains("needs a postcondition"));
}

TEST_CASE("a program built for another language names that language's place", "[dsl][errors]") {
  // The Python face passes its user's file:line before each call: errors, operations and the
  // postcondition's report name it instead of the C++ caller.
  dsl::Program p("t", dsl::Collective::allgather(2, 1, false));
  p.set_origin("ring.py:7");
  const dsl::DslError e = error_from([&] { p.chunk(0, dsl::input, 0).copy(5, dsl::output, 0); });
  CHECK(e.origin() == "ring.py:7");
  CHECK_THAT(e.what(), Catch::StartsWith("ring.py:7: copy: destination rank 5"));
  p.set_origin("ring.py:8");
  p.chunk(0, dsl::input, 0).copy(1, dsl::output, 1);
  CHECK(dsl::describe(p.operations().back()) == "copy at ring.py:8");
  CHECK_THAT(dsl::check_postcondition(p).str(),
             Catch::Contains("(last written by copy at ring.py:8)"));
  p.set_origin("");
  const dsl::DslError cpp = error_from([&] { p.chunk(0, dsl::input, 3); });
  CHECK(cpp.origin().empty());
  CHECK_THAT(cpp.what(), Catch::StartsWith("errors_test.cpp:"));
}
