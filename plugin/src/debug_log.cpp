#include "weft/plugin/debug_log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace weft::plugin {

std::optional<LogLevel> parse_log_level(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper.empty() || upper == "NONE") return LogLevel::None;
  if (upper == "WARN" || upper == "VERSION") return LogLevel::Warn;
  if (upper == "INFO") return LogLevel::Info;
  if (upper == "TRACE") return LogLevel::Trace;
  return std::nullopt;
}

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::None:
      return "NONE";
    case LogLevel::Warn:
      return "WARN";
    case LogLevel::Info:
      return "INFO";
    case LogLevel::Trace:
      return "TRACE";
  }
  return "NONE";
}

std::string printable_log_message(std::string_view message) {
  std::string out;
  const std::size_t shown = std::min(message.size(), kMaxLogMessageBytes);
  out.reserve(shown + 32);
  for (std::size_t k = 0; k < shown; ++k) {
    const auto c = static_cast<unsigned char>(message[k]);
    if (c == '\n') {
      // Continuation lines are indented, so nothing in a message can pass for a line of its own.
      out += "\n  ";
    } else if (c == '\t' || (c >= 0x20 && c != 0x7f)) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (shown < message.size()) {
    out += fmt::format(" ... ({} more bytes not shown)", message.size() - shown);
  }
  return out;
}

Logger::Logger(LogLevel level, Sink sink) : level_(level), sink_(std::move(sink)) {}

void Logger::write(LogLevel level, std::string_view message) const {
  if (!enabled(level)) return;
  std::array<char, 64> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  const std::string line =
      fmt::format("{}:{}:{} [{}] WEFT {} {}", host.data(), static_cast<long>(getpid()),
                  static_cast<long>(syscall(SYS_gettid)), device_probe_ ? device_probe_() : -1,
                  to_string(level), printable_log_message(message));
  if (sink_) {
    sink_(line);
    return;
  }
  // One fwrite per line so that lines of concurrent ranks and threads do not interleave.
  const std::string with_newline = line + "\n";
  std::fwrite(with_newline.data(), 1, with_newline.size(), stderr);
}

}  // namespace weft::plugin
