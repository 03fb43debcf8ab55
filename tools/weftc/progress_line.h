// One line of progress on stderr for weftc's long commands (tune, compile, synthesize): what is
// running and for how long, redrawn in place. Only on a terminal: piped or redirected, stderr
// gets nothing from it, so logs and tests see the same output as before. WEFT_PROGRESS=1 forces
// it on (for a test), WEFT_PROGRESS=0 off.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace weft::weftc {

class ProgressLine {
 public:
  // `command` starts every line ("weftc tune"). `out` is where it draws (stderr).
  explicit ProgressLine(std::string command, std::FILE* out = stderr);
  ~ProgressLine();  // clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // What is running now ("candidate 3 of 40: allreduce_ring LL i1 c2"); the line shows it with
  // the seconds since the command started, redrawn every half second while nothing else moves.
  void set(std::string what);
  // Clears the line, so that the next thing printed starts on a clean one.
  void clear();

 private:
  void draw_locked();
  void tick();

  std::string command_;
  std::FILE* out_;
  bool enabled_ = false;
  std::chrono::steady_clock::time_point started_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string what_;
  bool drawn_ = false;
  bool stopping_ = false;
  std::thread ticker_;
};

// Whether progress is drawn on `out`: WEFT_PROGRESS when set (1 or 0), else whether `out` is a
// terminal that can redraw a line (TERM not "dumb").
bool progress_wanted(std::FILE* out);

}  // namespace weft::weftc
