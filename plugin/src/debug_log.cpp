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

Logger::Logger(LogLevel level, Sink sink) : level_(level), sink_(std::move(sink)) {}

void Logger::write(LogLevel level, std::string_view message) const {
  if (!enabled(level)) return;
  std::array<char, 64> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  const std::string line =
      fmt::format("{}:{}:{} [{}] WEFT {} {}", host.data(), static_cast<long>(getpid()),
                  static_cast<long>(syscall(SYS_gettid)), device_probe_ ? device_probe_() : -1,
                  to_string(level), message);
  if (sink_) {
    sink_(line);
    return;
  }
  // One fwrite per line so that lines of concurrent ranks and threads do not interleave.
  const std::string with_newline = line + "\n";
  std::fwrite(with_newline.data(), 1, with_newline.size(), stderr);
}

}  // namespace weft::plugin
