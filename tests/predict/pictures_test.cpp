// The pictures of a run and of an IR (weft/predict/pictures.h), on inputs made by hand so
// that every count is known: the SVG parses as XML and has a bar per step record and an arrow
// per message; the trace parses as JSON and its flows pair up; the DOT has the edges the IR
// implies.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <pugixml.hpp>

#include "weft/predict/pictures.h"

using namespace weft;
using namespace weft::predict;

namespace {

StepRecord record(int rank, int tb, int channel, int tile, int step, ir::StepType type,
                  double start, double end, int cause, bool critical) {
  StepRecord r;
  r.rank = rank;
  r.threadblock = tb;
  r.channel = channel;
  r.tile = tile;
  r.step = step;
  r.type = type;
  r.bytes = 1024;
  r.start_us = start;
  r.end_us = end;
  r.cause = cause;
  r.critical = critical;
  return r;
}

// Rank 0 sends to rank 1 in two tiles; rank 1 also copies on a second threadblock. The critical
// path is the first message, then rank 1's second receive after its first (program order), so
// only the first message is on it.
SimulationResult two_rank_result() {
  SimulationResult r;
  r.bytes = 4096;
  r.time_us = 12.5;
  r.steps = {
      record(0, 0, 0, 0, 0, ir::StepType::Send, 0, 2, -1, true),
      record(1, 1, 1, 0, 0, ir::StepType::Copy, 0, 1, -1, false),
      record(1, 0, 0, 0, 0, ir::StepType::Recv, 3, 5, 0, true),
      record(0, 0, 0, 1, 0, ir::StepType::Send, 2, 4, 0, false),
      record(1, 0, 0, 1, 0, ir::StepType::Recv, 5, 7, 2, true),
  };
  r.messages = {{0, 2, 2.0, 3.0}, {3, 4, 4.0, 4.5}};
  r.critical_path = {0, 2, 4};
  return r;
}

std::size_t count_class(const pugi::xml_document& doc, const char* element, const char* cls) {
  const std::string query = std::string("//") + element + "[@class='" + cls + "']";
  return doc.select_nodes(query.c_str()).size();
}

// A small JSON reader: enough to prove the trace is well-formed and to look inside it.
struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  const Json* find(std::string_view key) const {
    for (const auto& [k, v] : object) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  // Fails the test, naming the offset, on anything RFC 8259 does not allow.
  Json document() {
    Json value = parse_value();
    skip_space();
    INFO("trailing characters at offset " << at_);
    REQUIRE(at_ == text_.size());
    return value;
  }

 private:
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t')) {
      ++at_;
    }
  }
  char peek() {
    skip_space();
    INFO("unexpected end at offset " << at_);
    REQUIRE(at_ < text_.size());
    return text_[at_];
  }
  void expect(char c) {
    INFO("expected '" << c << "' at offset " << at_);
    REQUIRE(peek() == c);
    ++at_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      INFO("unterminated string at offset " << at_);
      REQUIRE(at_ < text_.size());
      const char c = text_[at_++];
      if (c == '"') return out;
      INFO("raw control character at offset " << at_ - 1);
      REQUIRE(static_cast<unsigned char>(c) >= 0x20);
      if (c != '\\') {
        out += c;
        continue;
      }
      REQUIRE(at_ < text_.size());
      const char e = text_[at_++];
      const std::string_view simple = "\"\\/bfnrt";
      if (simple.find(e) != std::string_view::npos) {
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        continue;
      }
      INFO("bad escape at offset " << at_ - 1);
      REQUIRE(e == 'u');
      REQUIRE(at_ + 4 <= text_.size());
      for (int k = 0; k < 4; ++k)
        REQUIRE(std::isxdigit(static_cast<unsigned char>(text_[at_ + k])));
      out += static_cast<char>(std::stoi(std::string(text_.substr(at_, 4)), nullptr, 16));
      at_ += 4;
    }
  }
  Json parse_value() {
    Json v;
    const char c = peek();
    if (c == '{') {
      v.kind = Json::Kind::Object;
      ++at_;
      if (peek() == '}') {
        ++at_;
        return v;
      }
      while (true) {
        std::string key = parse_string();
        expect(':');
        v.object.emplace_back(std::move(key), parse_value());
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::Kind::Array;
      ++at_;
      if (peek() == ']') {
        ++at_;
        return v;
      }
      while (true) {
        v.array.push_back(parse_value());
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::String;
      v.string = parse_string();
      return v;
    }
    if (literal("true") || literal("false")) {
      v.kind = Json::Kind::Bool;
      v.boolean = text_[at_ - 1] == 'e' && text_[at_ - 2] == 'u';
      return v;
    }
    if (literal("null")) return v;
    // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    static const std::regex number(R"(^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
    std::cmatch m;
    const std::string rest(text_.substr(at_, std::min<std::size_t>(64, text_.size() - at_)));
    INFO("bad value at offset " << at_ << ": " << rest.substr(0, 20));
    REQUIRE(std::regex_search(rest.c_str(), m, number));
    v.kind = Json::Kind::Number;
    v.number = std::stod(m.str());
    at_ += static_cast<std::size_t>(m.length());
    return v;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

std::size_t count_lines(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::size_t n = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (std::regex_search(text.substr(begin, end - begin), re)) ++n;
    begin = end + 1;
  }
  return n;
}

ir::Step step(ir::StepType type, ir::BufferKind src, int srcoff, ir::BufferKind dst, int dstoff) {
  ir::Step s;
  s.type = type;
  s.srcbuf = src;
  s.srcoff = srcoff;
  s.dstbuf = dst;
  s.dstoff = dstoff;
  s.count = 1;
  return s;
}

// Two ranks exchanging two chunks each way on one connection pair: per rank, threadblock 0 sends,
// receives-reduces, sends, receives; threadblock 1 copies once threadblock 0's first receive is
// done (an explicit dependency).
ir::Algorithm two_rank_algorithm() {
  using B = ir::BufferKind;
  using T = ir::StepType;
  ir::Algorithm a;
  a.name = "pair \"exchange\"";
  a.collective = ir::Collective::AllReduce;
  a.ngpus = 2;
  a.nchunksperloop = 2;
  for (int r = 0; r < 2; ++r) {
    const int p = 1 - r;
    ir::Gpu g;
    g.id = r;
    g.input_chunks = 2;
    g.output_chunks = 2;
    ir::Threadblock t0;
    t0.id = 0;
    t0.send = p;
    t0.recv = p;
    t0.steps = {step(T::Send, B::Input, p, B::Input, p),
                step(T::RecvReduceCopy, B::Input, r, B::Input, r),
                step(T::Send, B::Input, r, B::Input, r), step(T::Recv, B::None, -1, B::Input, p)};
    t0.steps[1].hasdep = true;
    ir::Threadblock t1;
    t1.id = 1;
    t1.steps = {step(T::Copy, B::Input, r, B::Output, r)};
    t1.steps[0].depid = 0;
    t1.steps[0].deps = 1;
    g.threadblocks = {t0, t1};
    a.gpus.push_back(g);
  }
  return a;
}

}  // namespace

TEST_CASE("pictures: the timeline SVG has a bar per step and an arrow per message", "[pictures]") {
  TimelineOptions options;
  options.algorithm = "ring <&> \"test\"";
  const std::string svg = timeline_svg(two_rank_result(), options);
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_string(svg.c_str());
  INFO(parsed.description() << " at offset " << parsed.offset);
  REQUIRE(parsed);
  REQUIRE(std::string(doc.first_child().name()) == "svg");

  CHECK(count_class(doc, "rect", "step") == 2);
  CHECK(count_class(doc, "rect", "step critical") == 3);
  for (const pugi::xpath_node& n : doc.select_nodes("//rect[@class='step critical']")) {
    CHECK(std::string(n.node().attribute("stroke-width").value()) == "2");
  }
  CHECK(count_class(doc, "line", "message") == 1);
  CHECK(count_class(doc, "line", "message critical") == 1);
  // Every bar tells what it is.
  for (const pugi::xpath_node& n : doc.select_nodes("//rect[starts-with(@class, 'step')]")) {
    CHECK(std::string(n.node().child("title").text().get()).find("rank ") == 0);
  }
  // Lanes grouped by rank, each with its channel.
  std::vector<std::string> lanes;
  for (const pugi::xpath_node& n : doc.select_nodes("//text[@class='lane']")) {
    lanes.emplace_back(n.node().text().get());
  }
  CHECK(lanes == std::vector<std::string>{"rank 0 / tb 0 (ch 0)", "rank 1 / tb 0 (ch 0)",
                                          "rank 1 / tb 1 (ch 1)"});
  // The title came through XML escaping intact.
  CHECK(std::string(doc.first_child().child("title").text().get()) ==
        "ring <&> \"test\": 4096 bytes, predicted 12.500 µs");
  // The legend names every step type.
  std::string all_text;
  for (const pugi::xpath_node& n : doc.select_nodes("//text")) {
    all_text += n.node().text().get();
    all_text += '|';
  }
  for (const char* type : {"s|", "r|", "rcs|", "rrs|", "rrc|", "rrcs|", "cpy|", "re|", "nop|"}) {
    CHECK(all_text.find(std::string("|") + type) != std::string::npos);
  }
  CHECK(count_class(doc, "text", "note") == 0);
}

TEST_CASE("pictures: a timeline with too many steps draws the first tiles and says so",
          "[pictures]") {
  const SimulationResult result = two_rank_result();
  TimelineOptions options;
  options.max_steps = 3;  // tile 0 has three records, tile 1 two
  pugi::xml_document doc;
  REQUIRE(doc.load_string(timeline_svg(result, options).c_str()));
  CHECK(doc.select_nodes("//rect[starts-with(@class, 'step')]").size() == 3);
  CHECK(doc.select_nodes("//line[starts-with(@class, 'message')]").size() == 1);
  const std::string note = doc.select_node("//text[@class='note']").node().text().get();
  CHECK(note.find("tiles 0..0 of 2") != std::string::npos);
  CHECK(note.find("3 of 5 step executions") != std::string::npos);

  options.max_steps = 2;  // even tile 0 is too large: the first records to start
  REQUIRE(doc.load_string(timeline_svg(result, options).c_str()));
  CHECK(doc.select_nodes("//rect[starts-with(@class, 'step')]").size() == 2);
  CHECK(doc.select_nodes("//line[starts-with(@class, 'message')]").size() == 0);
  CHECK(std::string(doc.select_node("//text[@class='note']").node().text().get())
            .find("first 2 of 5") != std::string::npos);
}

TEST_CASE("pictures: a timeline without records or without a prediction says why", "[pictures]") {
  SimulationResult empty;
  pugi::xml_document doc;
  REQUIRE(doc.load_string(timeline_svg(empty, {}).c_str()));
  CHECK(std::string(
            doc.select_node("//text[starts-with(., 'No step records')]").node().text().get()) !=
        "");
  SimulationResult failed;
  failed.error = "count 6 is not a multiple of <4> chunks";
  REQUIRE(doc.load_string(timeline_svg(failed, {}).c_str()));
  CHECK(doc.select_node("//text[contains(., 'not a multiple of <4>')]"));
}

TEST_CASE("pictures: the Chrome trace is JSON with a slice per step and paired flows",
          "[pictures]") {
  TraceOptions options;
  options.algorithm = "tab\tquote\"back\\slash\x01";
  const std::string text = chrome_trace_json(two_rank_result(), options);
  const Json doc = JsonReader(text).document();
  REQUIRE(doc.kind == Json::Kind::Object);
  const Json* other = doc.find("otherData");
  REQUIRE(other != nullptr);
  CHECK(other->find("algorithm")->string == "tab\tquote\"back\\slash\x01");
  const Json* events = doc.find("traceEvents");
  REQUIRE(events != nullptr);
  REQUIRE(events->kind == Json::Kind::Array);

  std::size_t slices = 0;
  std::size_t critical = 0;
  std::map<std::string, std::size_t> metadata;
  // Flow id -> (phase -> (pid, tid, ts)).
  std::map<double, std::map<std::string, std::tuple<double, double, double>>> flows;
  std::map<std::tuple<double, double, double>, std::string> slice_starts;  // (pid, tid, ts)
  for (const Json& e : events->array) {
    REQUIRE(e.kind == Json::Kind::Object);
    const std::string ph = e.find("ph")->string;
    REQUIRE(e.find("pid") != nullptr);
    if (ph == "M") {
      ++metadata[e.find("name")->string];
      continue;
    }
    REQUIRE(e.find("ts") != nullptr);
    const auto where =
        std::make_tuple(e.find("pid")->number, e.find("tid")->number, e.find("ts")->number);
    if (ph == "X") {
      ++slices;
      REQUIRE(e.find("dur") != nullptr);
      CHECK(e.find("dur")->number >= 0);
      const Json* args = e.find("args");
      REQUIRE(args != nullptr);
      for (const char* key :
           {"rank", "threadblock", "step", "tile", "bytes", "channel", "critical"}) {
        CHECK(args->find(key) != nullptr);
      }
      if (args->find("critical")->boolean) ++critical;
      slice_starts[where] = e.find("cat")->string;
    } else {
      REQUIRE((ph == "s" || ph == "f"));
      REQUIRE(e.find("id") != nullptr);
      if (ph == "f") CHECK(e.find("bp")->string == "e");
      flows[e.find("id")->number][ph] = where;
      // Bound to a slice on its thread that starts there, in the same category.
      REQUIRE(slice_starts.contains(where));
      CHECK(slice_starts[where] == e.find("cat")->string);
    }
  }
  CHECK(slices == 5);
  CHECK(critical == 3);
  CHECK(metadata["process_name"] == 2);
  CHECK(metadata["thread_name"] == 3);
  REQUIRE(flows.size() == 2);
  for (const auto& [id, ends] : flows) {
    CHECK(ends.size() == 2);  // one start, one end
  }
  // The first message: rank 0 tb 0 at 0 µs to rank 1 tb 0 at 3 µs (ids are rank + 1, tb + 1).
  CHECK(flows[0]["s"] == std::make_tuple(1.0, 1.0, 0.0));
  CHECK(flows[0]["f"] == std::make_tuple(2.0, 1.0, 3.0));
  // No process or thread 0, which viewers reserve for the kernel.
  for (const Json& e : events->array) {
    CHECK(e.find("pid")->number >= 1);
    if (e.find("tid") != nullptr) CHECK(e.find("tid")->number >= 1);
  }
}

TEST_CASE("pictures: trace times are whole nanoseconds, so one threadblock's slices never overlap",
          "[pictures]") {
  SimulationResult r;
  r.steps = {record(0, 0, 0, 0, 0, ir::StepType::Send, 0.00049, 1.0004999, -1, false),
             record(0, 0, 0, 0, 1, ir::StepType::Send, 1.0004999, 2.0, 0, false)};
  const Json doc = JsonReader(chrome_trace_json(r, {})).document();
  std::vector<std::pair<double, double>> spans;
  for (const Json& e : doc.find("traceEvents")->array) {
    if (e.find("ph")->string == "X") {
      spans.emplace_back(e.find("ts")->number, e.find("ts")->number + e.find("dur")->number);
    }
  }
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].second <= spans[1].first);
  CHECK(spans[0].first == Approx(0.0));
  CHECK(spans[1].first == Approx(1.0));
}

TEST_CASE("pictures: the step graph has program order, dependencies and paired messages",
          "[pictures]") {
  const std::string dot = step_graph_dot(two_rank_algorithm(), {});
  INFO(dot);
  CHECK(dot.rfind("digraph \"pair \\\"exchange\\\"\" {", 0) == 0);
  CHECK(dot.find("subgraph cluster_r0 {") != std::string::npos);
  CHECK(dot.find("subgraph cluster_r1_t1 {") != std::string::npos);
  CHECK(count_lines(dot, R"(^ +r\d+_t\d+_s\d+ \[label=)") == 10);
  CHECK(count_lines(dot, R"(-> .*weight=10)") == 6);
  CHECK(count_lines(dot, R"(-> .*style=dashed.*label="dep")") == 2);
  CHECK(count_lines(dot, R"(-> .*style=bold)") == 4);
  // The k-th send of a connection goes to its k-th receive.
  CHECK(dot.find("r0_t0_s0 -> r1_t0_s1 [style=bold") != std::string::npos);
  CHECK(dot.find("r0_t0_s2 -> r1_t0_s3 [style=bold") != std::string::npos);
  CHECK(dot.find("r1_t0_s0 -> r0_t0_s1 [style=bold") != std::string::npos);
  CHECK(dot.find("r1_t0_s2 -> r0_t0_s3 [style=bold") != std::string::npos);
  CHECK(dot.find("r0_t0_s1 -> r0_t1_s0 [style=dashed") != std::string::npos);
  // What each step does.
  CHECK(dot.find("r0_t0_s1 [label=\"1: rrc  cnt 1\\nr1 ⊕ i[0] → i[0]\"") != std::string::npos);
  CHECK(dot.find("not paired") == std::string::npos);
}

TEST_CASE("pictures: a step graph of some ranks shows their peers as placeholders", "[pictures]") {
  DotOptions options;
  options.ranks = {0};
  const std::string dot = step_graph_dot(two_rank_algorithm(), options);
  INFO(dot);
  CHECK(count_lines(dot, R"(^ +r\d+_t\d+_s\d+ \[label=)") == 5);
  CHECK(dot.find("r1_t") == std::string::npos);
  CHECK(count_lines(dot, R"(^ +rank_1 \[label=)") == 1);
  CHECK(count_lines(dot, R"(-> rank_1 .*style=bold)") == 2);
  CHECK(count_lines(dot, R"(rank_1 -> .*style=bold)") == 2);
  CHECK(count_lines(dot, R"(-> .*weight=10)") == 3);
}

TEST_CASE("pictures: a step graph refuses unknown ranks and too many nodes, saying why",
          "[pictures]") {
  DotOptions options;
  options.ranks = {0, 5};
  CHECK_THROWS_WITH(step_graph_dot(two_rank_algorithm(), options),
                    Catch::Contains("rank 5 is not in") && Catch::Contains("2 ranks"));
  options.ranks = {};
  options.max_nodes = 4;
  CHECK_THROWS_AS(step_graph_dot(two_rank_algorithm(), options), PictureError);
  CHECK_THROWS_WITH(step_graph_dot(two_rank_algorithm(), options),
                    Catch::Contains("10 steps") && Catch::Contains("limit of 4"));
}

TEST_CASE("pictures: a step graph of a broken IR still draws and notes what it cannot pair",
          "[pictures]") {
  ir::Algorithm a = two_rank_algorithm();
  a.gpus[1].threadblocks[0].steps.pop_back();  // rank 1 receives once less than rank 0 sends
  const std::string dot = step_graph_dot(a, {});
  CHECK(dot.find("// not paired: channel 0 0 → 1: 2 sends, 1 receives") != std::string::npos);
  CHECK(count_lines(dot, R"(-> .*style=bold)") == 3);
}
