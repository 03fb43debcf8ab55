// WEFT_DEBUG logging in NCCL's style ("host:pid:tid [dev] WEFT INFO ..."), so that a user who
// reads NCCL_DEBUG output reads ours the same way and can interleave the two by grepping.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace weft::plugin {

// Ordered: a logger at level L prints messages of every level up to L.
enum class LogLevel { None = 0, Warn = 1, Info = 2, Trace = 3 };

// "WARN", "INFO", "TRACE" (any case), "NONE" or empty for None, like NCCL_DEBUG ("VERSION" counts
// as Warn). Nothing for anything else, so a typo is reported instead of silencing the log.
std::optional<LogLevel> parse_log_level(std::string_view text);
std::string_view to_string(LogLevel level);

// A message as a log line shows it: control characters (from environment values, file names,
// XML names) written as \xNN, continuation lines indented, at most kMaxLogMessageBytes shown.
inline constexpr std::size_t kMaxLogMessageBytes = 64 * 1024;
std::string printable_log_message(std::string_view message);

class Logger {
 public:
  // Receives each finished line without its newline.
  using Sink = std::function<void(std::string_view line)>;

  Logger() = default;
  // `sink` defaults to stderr.
  explicit Logger(LogLevel level, Sink sink = {});

  LogLevel level() const { return level_; }
  bool enabled(LogLevel level) const { return level != LogLevel::None && level <= level_; }
  // The CUDA device shown in brackets, asked for each line: NCCL prints the calling thread's
  // current device. Without a probe the brackets hold -1.
  using DeviceProbe = std::function<int()>;
  void set_device_probe(DeviceProbe probe) { device_probe_ = std::move(probe); }

  void write(LogLevel level, std::string_view message) const;

  template <class... Args>
  void warn(fmt::format_string<Args...> format, Args&&... args) const {
    if (enabled(LogLevel::Warn))
      write(LogLevel::Warn, fmt::format(format, std::forward<Args>(args)...));
  }
  template <class... Args>
  void info(fmt::format_string<Args...> format, Args&&... args) const {
    if (enabled(LogLevel::Info))
      write(LogLevel::Info, fmt::format(format, std::forward<Args>(args)...));
  }
  template <class... Args>
  void trace(fmt::format_string<Args...> format, Args&&... args) const {
    if (enabled(LogLevel::Trace))
      write(LogLevel::Trace, fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  LogLevel level_ = LogLevel::None;
  DeviceProbe device_probe_;
  Sink sink_;
};

}  // namespace weft::plugin
