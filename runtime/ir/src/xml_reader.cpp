// Reading MSCCL XML into the IR. Both dialects load: msccl-tools' (no outofplace, minBytes,
// maxBytes; "reduce_scatter") and the executor's. Every problem is reported with file, line and
// element path; the reader never stops at the first one and never throws, since it also reads
// whatever a fuzzer or a broken tool hands it.
#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "diagnostic_sink.h"
#include "weft/ir/xml.h"
#include "weft/ir/xml_text.h"

namespace weft::ir {
namespace {

using detail::DiagnosticSink;
using detail::LineIndex;
using detail::NumberError;
using detail::parse_decimal;
using detail::quote_value;

// Where an element is: its line and its position path. The path text is only built for a
// message, since a large file has hundreds of thousands of steps.
struct Where {
  int line = 0;
  int gpu = -1;
  int tb = -1;
  int step = -1;
  std::string path() const { return gpu < 0 ? std::string() : element_path(gpu, tb, step); }
};

// The attributes of one element, looked up once by name in a fixed list.
template <std::size_t N>
struct Attributes {
  std::array<const char*, N> values{};  // nullptr: absent
};

constexpr std::array<std::string_view, 13> kAlgoAttributes{
    "name",    "proto",      "nchannels", "nchunksperloop", "ngpus",    "coll",  "inplace",
    "outofplace", "minBytes", "maxBytes", "nthreads",       "root",     "nnodes"};
enum AlgoAttr {
  kName,
  kProto,
  kNchannels,
  kNchunksperloop,
  kNgpus,
  kColl,
  kInplace,
  kOutofplace,
  kMinBytes,
  kMaxBytes,
  kNthreads,
  kRoot,
  kNnodes
};

constexpr std::array<std::string_view, 4> kGpuAttributes{"id", "i_chunks", "o_chunks", "s_chunks"};
enum GpuAttr { kGpuId, kIChunks, kOChunks, kSChunks };

constexpr std::array<std::string_view, 4> kTbAttributes{"id", "send", "recv", "chan"};
enum TbAttr { kTbId, kSend, kRecv, kChan };

constexpr std::array<std::string_view, 10> kStepAttributes{
    "s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"};
enum StepAttr { kS, kType, kSrcbuf, kSrcoff, kDstbuf, kDstoff, kCnt, kDepid, kDeps, kHasdep };

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

class Reader {
 public:
  Reader(std::string_view text, DiagnosticSink& sink) : lines_(text), sink_(sink) {}

  std::optional<Algorithm> read(const pugi::xml_document& doc, std::string source) {
    pugi::xml_node root;
    for (pugi::xml_node node : doc.children()) {
      if (node.type() == pugi::node_element) {
        if (!root) {
          root = node;
        } else {
          sink_.error(line_of(node), "",
                      fmt::format("unexpected second top-level element <{}>; a file holds one "
                                  "<algo>",
                                  clipped_name(node)));
        }
      } else {
        check_text(node, Where{});
      }
    }
    if (!root) {
      sink_.error(0, "", "no <algo> element in the document");
      return std::nullopt;
    }
    if (std::string_view(root.name()) != "algo") {
      sink_.error(line_of(root), "",
                  fmt::format("root element is <{}>, expected <algo>", clipped_name(root)));
      return std::nullopt;
    }
    Algorithm algo;
    algo.source = std::move(source);
    read_algo(root, algo);
    return algo;
  }

 private:
  int line_of(const pugi::xml_node& node) const { return lines_.line_of(node.offset_debug()); }

  static std::string clipped_name(const pugi::xml_node& node) {
    const std::string quoted = quote_value(node.name());
    return quoted.substr(1, quoted.size() - 2);
  }

  // Text between elements is never meaningful in MSCCL XML; say so rather than drop it silently.
  void check_text(const pugi::xml_node& node, const Where& where) {
    if (node.type() != pugi::node_pcdata && node.type() != pugi::node_cdata) return;
    if (is_blank(node.value())) return;
    const int line = line_of(node);
    sink_.warning(line > 0 ? line : where.line, where.path(),
                  fmt::format("text {} ignored", quote_value(node.value())));
  }

  template <std::size_t N>
  Attributes<N> collect(const pugi::xml_node& node, const std::array<std::string_view, N>& names,
                        const Where& where, std::string_view tag) {
    Attributes<N> found;
    for (pugi::xml_attribute attribute : node.attributes()) {
      const std::string_view name = attribute.name();
      const auto known = std::find(names.begin(), names.end(), name);
      if (known == names.end()) {
        sink_.warning(where.line, where.path(),
                      fmt::format("unknown attribute {} on <{}> ignored", quote_value(name), tag));
        continue;
      }
      const auto index = static_cast<std::size_t>(known - names.begin());
      if (found.values[index] != nullptr) {
        sink_.error(where.line, where.path(),
                    fmt::format("attribute '{}' given twice on <{}>", name, tag));
        continue;
      }
      found.values[index] = attribute.value();
    }
    return found;
  }

  void missing(const Where& where, std::string_view attribute, std::string_view tag) {
    sink_.errorf(where.line, where.path(), "missing attribute '{}' on <{}>", attribute, tag);
  }

  template <typename T>
  bool number(const char* value, const Where& where, std::string_view attribute,
              std::string_view tag, T& out) {
    if (value == nullptr) {
      missing(where, attribute, tag);
      return false;
    }
    const NumberError error = parse_decimal(std::string_view(value), out);
    if (error == NumberError::None) return true;
    // An if-chain, not a switch: clang 14 destroys temporaries of a case it never ran when
    // several cases format with consteval format strings (found by fuzzing under ASan).
    std::string problem;
    if (error == NumberError::Empty) {
      problem = fmt::format("attribute '{}' on <{}> is empty", attribute, tag);
    } else if (error == NumberError::OutOfRange) {
      problem = fmt::format("attribute {}={} on <{}> is out of range", attribute,
                            quote_value(value), tag);
    } else {
      problem =
          fmt::format("attribute {}={} on <{}> is not {}integer", attribute, quote_value(value),
                      tag, std::is_signed_v<T> ? "an " : "a non-negative ");
    }
    sink_.error(where.line, where.path(), std::move(problem));
    return false;
  }

  // Optional attributes keep `out` unchanged when absent.
  template <typename T>
  void optional_number(const char* value, const Where& where, std::string_view attribute,
                       std::string_view tag, T& out) {
    if (value != nullptr) number(value, where, attribute, tag, out);
  }

  bool flag(const char* value, const Where& where, std::string_view attribute, std::string_view tag,
            bool& out) {
    if (value == nullptr) {
      missing(where, attribute, tag);
      return false;
    }
    const std::string_view text(value);
    if (text == "0" || text == "1") {
      out = text == "1";
      return true;
    }
    sink_.errorf(where.line, where.path(), "attribute {}={} on <{}> must be 0 or 1", attribute,
                 quote_value(text), tag);
    return false;
  }

  void read_algo(const pugi::xml_node& node, Algorithm& algo) {
    const Where where{line_of(node)};
    algo.where.line = where.line;
    const auto a = collect(node, kAlgoAttributes, where, "algo");
    const auto& v = a.values;

    if (v[kName] != nullptr) algo.name = v[kName];
    if (v[kProto] == nullptr) {
      missing(where, "proto", "algo");
    } else if (auto proto = parse_protocol(v[kProto])) {
      algo.protocol = *proto;
    } else {
      sink_.errorf(where.line, "", "unknown protocol proto={} (expected Simple, LL or LL128)",
                   quote_value(v[kProto]));
    }
    if (v[kColl] == nullptr) {
      missing(where, "coll", "algo");
    } else if (auto coll = parse_collective(v[kColl])) {
      algo.collective = *coll;
      algo.collective_name = v[kColl];
    } else {
      sink_.errorf(where.line, "",
                   "unknown collective coll={} (expected allreduce, allgather, reducescatter, "
                   "alltoall, broadcast, reduce or custom)",
                   quote_value(v[kColl]));
    }
    number(v[kNchannels], where, "nchannels", "algo", algo.nchannels);
    number(v[kNchunksperloop], where, "nchunksperloop", "algo", algo.nchunksperloop);
    number(v[kNgpus], where, "ngpus", "algo", algo.ngpus);
    // msccl-tools writes only `inplace`; an algorithm it marks in-place is not out-of-place.
    if (flag(v[kInplace], where, "inplace", "algo", algo.inplace)) algo.outofplace = !algo.inplace;
    if (v[kOutofplace] != nullptr)
      flag(v[kOutofplace], where, "outofplace", "algo", algo.outofplace);
    optional_number(v[kMinBytes], where, "minBytes", "algo", algo.min_bytes);
    optional_number(v[kMaxBytes], where, "maxBytes", "algo", algo.max_bytes);
    optional_number(v[kNthreads], where, "nthreads", "algo", algo.nthreads);
    optional_number(v[kRoot], where, "root", "algo", algo.root);
    optional_number(v[kNnodes], where, "nnodes", "algo", algo.nnodes);

    for (pugi::xml_node child : node.children()) {
      if (child.type() != pugi::node_element) {
        check_text(child, where);
        continue;
      }
      if (std::string_view(child.name()) != "gpu") {
        unexpected_child(child, where, "algo", "gpu");
        continue;
      }
      const int position = static_cast<int>(algo.gpus.size());
      read_gpu(child, position, algo.gpus.emplace_back());
    }
  }

  void unexpected_child(const pugi::xml_node& child, const Where& parent, std::string_view tag,
                        std::string_view expected) {
    sink_.error(line_of(child), parent.path(),
                fmt::format("unexpected element <{}> inside <{}> (expected <{}>)",
                            clipped_name(child), tag, expected));
  }

  void read_gpu(const pugi::xml_node& node, int position, Gpu& gpu) {
    const Where where{line_of(node), position};
    gpu.where.line = where.line;
    gpu.id = position;
    const auto a = collect(node, kGpuAttributes, where, "gpu");
    number(a.values[kGpuId], where, "id", "gpu", gpu.id);
    number(a.values[kIChunks], where, "i_chunks", "gpu", gpu.input_chunks);
    number(a.values[kOChunks], where, "o_chunks", "gpu", gpu.output_chunks);
    number(a.values[kSChunks], where, "s_chunks", "gpu", gpu.scratch_chunks);

    for (pugi::xml_node child : node.children()) {
      if (child.type() != pugi::node_element) {
        check_text(child, where);
        continue;
      }
      if (std::string_view(child.name()) != "tb") {
        unexpected_child(child, where, "gpu", "tb");
        continue;
      }
      const int tb_position = static_cast<int>(gpu.threadblocks.size());
      read_threadblock(child, position, tb_position, gpu.threadblocks.emplace_back());
    }
  }

  void read_threadblock(const pugi::xml_node& node, int gpu, int position, Threadblock& tb) {
    const Where where{line_of(node), gpu, position};
    tb.where.line = where.line;
    tb.id = position;
    const auto a = collect(node, kTbAttributes, where, "tb");
    number(a.values[kTbId], where, "id", "tb", tb.id);
    number(a.values[kSend], where, "send", "tb", tb.send);
    number(a.values[kRecv], where, "recv", "tb", tb.recv);
    number(a.values[kChan], where, "chan", "tb", tb.channel);

    for (pugi::xml_node child : node.children()) {
      if (child.type() != pugi::node_element) {
        check_text(child, where);
        continue;
      }
      if (std::string_view(child.name()) != "step") {
        unexpected_child(child, where, "tb", "step");
        continue;
      }
      const int step_position = static_cast<int>(tb.steps.size());
      read_step(child, Where{line_of(child), gpu, position, step_position},
                tb.steps.emplace_back());
    }
  }

  bool buffer(const char* value, const Where& where, std::string_view attribute, BufferKind& out) {
    if (value == nullptr) {
      missing(where, attribute, "step");
      return false;
    }
    if (auto kind = parse_buffer(value)) {
      out = *kind;
      return true;
    }
    sink_.errorf(where.line, where.path(), "unknown buffer {}={} (expected i, o or s)", attribute,
                 quote_value(value));
    return false;
  }

  void read_step(const pugi::xml_node& node, const Where& where, Step& step) {
    step.where.line = where.line;
    const auto a = collect(node, kStepAttributes, where, "step");
    const auto& v = a.values;

    int index = where.step;
    if (number(v[kS], where, "s", "step", index) && index != where.step) {
      sink_.errorf(where.line, where.path(),
                   "step index s={} does not match its position {} in the threadblock", index,
                   where.step);
    }
    if (v[kType] == nullptr) {
      missing(where, "type", "step");
    } else if (auto type = parse_step_type(v[kType])) {
      step.type = *type;
    } else {
      sink_.errorf(where.line, where.path(),
                   "unknown step type type={} (expected s, r, rcs, rrs, rrc, rrcs, cpy, re or nop)",
                   quote_value(v[kType]));
    }
    buffer(v[kSrcbuf], where, "srcbuf", step.srcbuf);
    number(v[kSrcoff], where, "srcoff", "step", step.srcoff);
    buffer(v[kDstbuf], where, "dstbuf", step.dstbuf);
    number(v[kDstoff], where, "dstoff", "step", step.dstoff);
    number(v[kCnt], where, "cnt", "step", step.count);
    number(v[kDepid], where, "depid", "step", step.depid);
    number(v[kDeps], where, "deps", "step", step.deps);
    flag(v[kHasdep], where, "hasdep", "step", step.hasdep);
    // Offset -1 means the operand is unused (MSCCL's files still name a buffer, e.g. nops carry
    // srcbuf="i" srcoff="-1"); the IR says so with BufferKind::None.
    if (step.srcoff == -1) step.srcbuf = BufferKind::None;
    if (step.dstoff == -1) step.dstbuf = BufferKind::None;

    for (pugi::xml_node child : node.children()) {
      if (child.type() == pugi::node_element) {
        unexpected_child(child, where, "step", "no child element");
      } else {
        check_text(child, where);
      }
    }
  }

  LineIndex lines_;
  DiagnosticSink& sink_;
};

std::string describe_parse_error(const pugi::xml_parse_result& result) {
  return fmt::format("malformed XML: {}", result.description());
}

}  // namespace

namespace {

void read_into(std::string_view text, std::string source_name, ReadResult& result) {
  DiagnosticSink sink(result.diagnostics, source_name);
  try {
    pugi::xml_document doc;
    // UTF-8 without conversion keeps node offsets equal to offsets in `text`, which is how
    // lines are found.
    const pugi::xml_parse_result parsed =
        doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) {
      if (parsed.status == pugi::status_no_document_element) {
        sink.error(0, "", "no <algo> element in the document");
      } else {
        sink.error(LineIndex(text).line_of(parsed.offset), "", describe_parse_error(parsed));
      }
      return;
    }
    Reader reader(text, sink);
    result.algorithm = reader.read(doc, std::move(source_name));
  } catch (const std::bad_alloc&) {
    result.algorithm.reset();
    sink.error(0, "", "out of memory while reading the XML");
  }
}

}  // namespace

ReadResult read_xml_string(std::string_view text, std::string source_name) {
  ReadResult result;
  read_into(text, std::move(source_name), result);
  return result;
}

ReadResult read_xml_file(const std::string& path, const FileReadPolicy& policy) {
  TextFile file = read_text_file(path, policy);
  if (!file.ok()) {
    ReadResult result;
    result.diagnostics.error(path, 0, "", "cannot be read: " + file.error);
    return result;
  }
  return read_xml_string(file.text, path);
}

}  // namespace weft::ir
