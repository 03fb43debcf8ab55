// The predicted run as Chrome trace events (pictures.h), for Perfetto and chrome://tracing.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "weft/predict/pictures.h"

namespace weft::predict {
namespace {

using Buffer = fmt::memory_buffer;

void append(Buffer& out, std::string_view text) {
  out.append(text.data(), text.data() + text.size());
}

// A JSON string literal, quotes included (RFC 8259: quote, backslash and control characters).
void append_json_string(Buffer& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        append(out, "\\\"");
        break;
      case '\\':
        append(out, "\\\\");
        break;
      case '\n':
        append(out, "\\n");
        break;
      case '\r':
        append(out, "\\r");
        break;
      case '\t':
        append(out, "\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(fmt::appender(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// Times as integral nanoseconds, printed as µs with three decimals. A slice's end is its start
// plus its duration in the viewer: rounding start and end (not start and duration) keeps
// consecutive steps of one threadblock from overlapping by a rounding error, which the viewers
// report as badly nested slices. JSON has no NaN or infinity; such a time becomes 0.
std::int64_t to_ns(double us) {
  if (!std::isfinite(us)) return 0;
  return static_cast<std::int64_t>(std::llround(us * 1000.0));
}

void append_us(Buffer& out, std::int64_t ns) {
  if (ns < 0) {
    out.push_back('-');
    ns = -ns;
  }
  fmt::format_to(fmt::appender(out), "{}.{:03}", ns / 1000, ns % 1000);
}

// Process and thread ids: rank + 1 and threadblock + 1. Perfetto treats pid 0 (and tid 0) as the
// kernel's idle task and merges or hides its tracks; names and args carry the real numbers.
int pid_of(int rank) {
  return rank + 1;
}
int tid_of(int threadblock) {
  return threadblock + 1;
}

}  // namespace

std::string chrome_trace_json(const SimulationResult& result, const TraceOptions& options) {
  const std::vector<StepRecord>& steps = result.steps;
  Buffer out;
  append(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"algorithm\":");
  append_json_string(out, options.algorithm);
  fmt::format_to(fmt::appender(out), ",\"bytes\":{},\"predicted_us\":", result.bytes);
  append_us(out, to_ns(result.time_us));
  append(out, ",\"error\":");
  append_json_string(out, result.error);
  append(out, "},\n\"traceEvents\":[");
  bool first = true;
  const auto begin_event = [&] {
    append(out, first ? "\n" : ",\n");
    first = false;
  };

  // Names for processes (ranks) and threads (threadblocks), sorted as the numbers are.
  std::map<int, std::set<std::pair<int, int>>> lanes;  // rank -> {(threadblock, channel)}
  for (const StepRecord& s : steps) lanes[s.rank].insert({s.threadblock, s.channel});
  for (const auto& [rank, threadblocks] : lanes) {
    begin_event();
    fmt::format_to(fmt::appender(out),
                   "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{0},"
                   "\"args\":{{\"name\":\"rank {1}\"}}}},\n"
                   "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{0},"
                   "\"args\":{{\"sort_index\":{1}}}}}",
                   pid_of(rank), rank);
    for (const auto& [tb, channel] : threadblocks) {
      begin_event();
      fmt::format_to(fmt::appender(out),
                     "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{0},\"tid\":{1},"
                     "\"args\":{{\"name\":\"tb {2} (ch {3})\"}}}},\n"
                     "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{0},\"tid\":{1},"
                     "\"args\":{{\"sort_index\":{2}}}}}",
                     pid_of(rank), tid_of(tb), tb, channel);
    }
  }

  // Flows bind to slices differently in each viewer: Perfetto takes the slice that encloses the
  // flow event's time on its thread ("bp":"e" asks the same of the end), Chrome's DevTools the
  // slice with the same category, thread and start. A flow event at its slice's start, in its
  // category and just after it in the file, satisfies both.
  std::vector<std::vector<std::size_t>> sent(steps.size());
  std::vector<std::vector<std::size_t>> received(steps.size());
  for (std::size_t m = 0; m < result.messages.size(); ++m) {
    const MessageRecord& msg = result.messages[m];
    const auto valid = [&](int r) { return r >= 0 && static_cast<std::size_t>(r) < steps.size(); };
    if (!valid(msg.from) || !valid(msg.to)) continue;
    sent[static_cast<std::size_t>(msg.from)].push_back(m);
    received[static_cast<std::size_t>(msg.to)].push_back(m);
  }

  for (std::size_t i = 0; i < steps.size(); ++i) {
    const StepRecord& s = steps[i];
    const std::int64_t start = to_ns(s.start_us);
    const std::int64_t end = std::max(to_ns(s.end_us), start);
    begin_event();
    fmt::format_to(fmt::appender(out), "{{\"name\":\"{}\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":",
                   ir::to_string(s.type));
    append_us(out, start);
    append(out, ",\"dur\":");
    append_us(out, end - start);
    fmt::format_to(fmt::appender(out),
                   ",\"pid\":{},\"tid\":{},\"args\":{{\"rank\":{},\"threadblock\":{},\"step\":{},"
                   "\"tile\":{},\"bytes\":{},\"channel\":{},\"critical\":{}}}}}",
                   pid_of(s.rank), tid_of(s.threadblock), s.rank, s.threadblock, s.step, s.tile,
                   s.bytes, s.channel, s.critical ? "true" : "false");
    for (const bool outgoing : {true, false}) {
      for (const std::size_t m : outgoing ? sent[i] : received[i]) {
        begin_event();
        fmt::format_to(fmt::appender(out),
                       "{{\"name\":\"message\",\"cat\":\"step\",\"ph\":\"{}\",\"id\":{},{}\"ts\":",
                       outgoing ? "s" : "f", m, outgoing ? "" : "\"bp\":\"e\",");
        append_us(out, start);
        fmt::format_to(fmt::appender(out), ",\"pid\":{},\"tid\":{}}}", pid_of(s.rank),
                       tid_of(s.threadblock));
      }
    }
  }
  append(out, "\n]}\n");
  return fmt::to_string(out);
}

}  // namespace weft::predict
