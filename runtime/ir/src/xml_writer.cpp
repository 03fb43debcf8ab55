// Writing the IR as MSCCL XML, executor dialect, every attribute present. The text is built
// directly rather than through a DOM: the compiler writes files of hundreds of thousands of steps.
#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "weft/ir/text_file.h"
#include "weft/ir/xml.h"
#include "weft/ir/xml_text.h"

namespace weft::ir {
namespace {

// MSCCL's reader insists on a buffer name even for an unused operand; its own files write
// srcbuf="i" and dstbuf="o" with offset -1 there, and so do we.
char buffer_name(BufferKind buffer, char unused) {
  return buffer == BufferKind::None ? unused : to_char(buffer);
}

void append_step(fmt::memory_buffer& out, int index, const Step& step) {
  fmt::format_to(fmt::appender(out),
                 "      <step s=\"{}\" type=\"{}\" srcbuf=\"{}\" srcoff=\"{}\" dstbuf=\"{}\" "
                 "dstoff=\"{}\" cnt=\"{}\" depid=\"{}\" deps=\"{}\" hasdep=\"{}\"/>\n",
                 index, to_string(step.type), buffer_name(step.srcbuf, 'i'),
                 step.srcbuf == BufferKind::None ? -1 : step.srcoff, buffer_name(step.dstbuf, 'o'),
                 step.dstbuf == BufferKind::None ? -1 : step.dstoff, step.count, step.depid,
                 step.deps, step.hasdep ? 1 : 0);
}

std::size_t estimated_size(const Algorithm& algo) {
  std::size_t steps = 0;
  std::size_t threadblocks = 0;
  for (const Gpu& gpu : algo.gpus) {
    threadblocks += gpu.threadblocks.size();
    for (const Threadblock& tb : gpu.threadblocks) steps += tb.steps.size();
  }
  return 512 + algo.gpus.size() * 80 + threadblocks * 64 + steps * 150;
}

void append(fmt::memory_buffer& out, std::string_view text) {
  out.append(text);
}

// The text in pieces of about a megabyte, in order: a compile's file for thousands of ranks is
// tens of megabytes, and building it whole (then copying it into a string) faulted in twice
// that in fresh pages.
void emit(const Algorithm& algo, const TextSink& sink) {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  fmt::memory_buffer out;
  out.reserve(std::min(estimated_size(algo), kPiece + 4096));
  auto flush_if_full = [&] {
    if (out.size() < kPiece) return;
    sink(std::string_view(out.data(), out.size()));
    out.clear();
  };
  std::string name;
  detail::append_escaped(name, algo.name);
  fmt::format_to(
      fmt::appender(out),
      "<algo name=\"{}\" proto=\"{}\" nchannels=\"{}\" nchunksperloop=\"{}\" ngpus=\"{}\" "
      "coll=\"{}\" inplace=\"{}\" outofplace=\"{}\" minBytes=\"{}\" maxBytes=\"{}\"",
      name, to_string(algo.protocol), algo.nchannels, algo.nchunksperloop, algo.ngpus,
      to_string(algo.collective), algo.inplace ? 1 : 0, algo.outofplace ? 1 : 0, algo.min_bytes,
      algo.max_bytes);
  // Optional attributes only when they say something: older runtimes read nthreads, and root is
  // Weft's extension for broadcast/reduce.
  if (algo.nthreads > 0) fmt::format_to(fmt::appender(out), " nthreads=\"{}\"", algo.nthreads);
  if (algo.root >= 0) fmt::format_to(fmt::appender(out), " root=\"{}\"", algo.root);
  // Weft's extension: the nodes the algorithm was written for (NCCL's shim matches it against
  // the hosts a communicator spans); MSCCL's reader ignores it.
  if (algo.nnodes > 0) fmt::format_to(fmt::appender(out), " nnodes=\"{}\"", algo.nnodes);
  append(out, ">\n");
  for (const Gpu& gpu : algo.gpus) {
    fmt::format_to(fmt::appender(out),
                   "  <gpu id=\"{}\" i_chunks=\"{}\" o_chunks=\"{}\" s_chunks=\"{}\">\n", gpu.id,
                   gpu.input_chunks, gpu.output_chunks, gpu.scratch_chunks);
    for (const Threadblock& tb : gpu.threadblocks) {
      fmt::format_to(fmt::appender(out), "    <tb id=\"{}\" send=\"{}\" recv=\"{}\" chan=\"{}\">\n",
                     tb.id, tb.send, tb.recv, tb.channel);
      int index = 0;
      for (const Step& step : tb.steps) append_step(out, index++, step);
      append(out, "    </tb>\n");
      flush_if_full();
    }
    append(out, "  </gpu>\n");
  }
  append(out, "</algo>\n");
  sink(std::string_view(out.data(), out.size()));
}

}  // namespace

std::string write_xml(const Algorithm& algo) {
  std::string text;
  text.reserve(estimated_size(algo));
  emit(algo, [&text](std::string_view piece) { text.append(piece); });
  return text;
}

bool write_xml_file(const Algorithm& algo, const std::string& path, std::string* error) {
  return write_text_file(
      path, [&algo](const TextSink& sink) { emit(algo, sink); }, error);
}

}  // namespace weft::ir
