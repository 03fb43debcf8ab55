// Private to weft_ir: collects findings about one input into a Diagnostics, listing at most a
// fixed number so that a badly broken file of 100,000 steps gives a readable report instead of
// a hundred thousand lines. Everything past the cap is only counted.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "weft/ir/diagnostics.h"

namespace weft::ir::detail {

class DiagnosticSink {
 public:
  static constexpr std::size_t kDefaultCap = 200;

  DiagnosticSink(Diagnostics& out, std::string file, std::size_t cap = kDefaultCap)
      : out_(out), file_(std::move(file)), cap_(cap) {}
  DiagnosticSink(const DiagnosticSink&) = delete;
  DiagnosticSink& operator=(const DiagnosticSink&) = delete;
  ~DiagnosticSink() { finish(); }

  void error(int line, std::string element, std::string message) {
    ++errors_;
    if (!admit()) return;
    out_.error(file_, line, std::move(element), std::move(message));
  }
  void warning(int line, std::string element, std::string message) {
    if (!admit()) return;
    out_.warning(file_, line, std::move(element), std::move(message));
  }
  // An error whose text is only built when it will be listed.
  template <typename... Args>
  void errorf(int line, const std::string& element, fmt::format_string<Args...> format,
              Args&&... args) {
    ++errors_;
    if (!admit()) return;
    out_.error(file_, line, element, fmt::format(format, std::forward<Args>(args)...));
  }

  std::size_t errors() const { return errors_; }
  const std::string& file() const { return file_; }

  // Adds the "and N more" line once; safe to call again.
  void finish() {
    if (suppressed_ == 0) return;
    out_.error(file_, 0, "",
               fmt::format("and {} more problem(s) not listed (only the first {} are shown)",
                           suppressed_, cap_));
    suppressed_ = 0;
  }

 private:
  bool admit() {
    if (listed_ < cap_) {
      ++listed_;
      return true;
    }
    ++suppressed_;
    return false;
  }

  Diagnostics& out_;
  std::string file_;
  std::size_t cap_;
  std::size_t listed_ = 0;
  std::size_t suppressed_ = 0;
  std::size_t errors_ = 0;
};

}  // namespace weft::ir::detail
