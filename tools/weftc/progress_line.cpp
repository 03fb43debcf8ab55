#include "progress_line.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

namespace weft::weftc {

bool progress_wanted(std::FILE* out) {
  if (const char* forced = std::getenv("WEFT_PROGRESS"); forced != nullptr && *forced != '\0') {
    return std::string_view(forced) != "0";
  }
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return isatty(fileno(out)) == 1;
}

ProgressLine::ProgressLine(std::string command, std::FILE* out)
    : command_(std::move(command)),
      out_(out),
      enabled_(progress_wanted(out)),
      started_(std::chrono::steady_clock::now()) {
  if (!enabled_) return;
  try {
    ticker_ = std::thread([this] { tick(); });
  } catch (const std::system_error&) {
    enabled_ = false;  // no thread to spare (a tight --max-memory): the work goes on without it
  }
}

ProgressLine::~ProgressLine() {
  if (!enabled_) return;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  ticker_.join();
  clear();
}

void ProgressLine::set(std::string what) {
  if (!enabled_) return;
  const std::lock_guard lock(mutex_);
  what_ = std::move(what);
  draw_locked();
}

void ProgressLine::clear() {
  if (!enabled_) return;
  const std::lock_guard lock(mutex_);
  if (drawn_) {
    std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
    drawn_ = false;
  }
}

void ProgressLine::draw_locked() {
  if (what_.empty()) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::string line = fmt::format("{}: {} ({:.0f} s)", command_, what_, seconds);
  // One terminal line: a wrapped line could not be redrawn in place.
  constexpr std::size_t kWidth = 110;
  if (line.size() > kWidth) line = line.substr(0, kWidth - 3) + "...";
  std::fprintf(out_, "\r%s\x1b[K", line.c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressLine::tick() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(500));
    if (!stopping_) draw_locked();
  }
}

}  // namespace weft::weftc
