// The simulator's pending events (threadblocks' attempts to run their next step, and the ends a
// step's last bytes allow), taken in order of (time, order of scheduling). Most are scheduled
// for the instant being simulated (a step's end wakes its peers and its own threadblock): those
// go into a FIFO, which their scheduling order already sorts, and only later events go through
// the binary heap. The heap's pushes and pops were a quarter of a prediction's time, and a
// compile judged by time predicts every candidate schedule at five sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace weft::predict::detail {

struct Attempt {
  double time = 0;
  std::uint64_t order = 0;
  int threadblock = 0;
  bool finish = false;  // end the threadblock's running step (its last bytes are in)
  bool operator>(const Attempt& other) const {
    return time != other.time ? time > other.time : order > other.order;
  }
};

class AttemptQueue {
 public:
  // Schedules at `time` (never before the instant of the last event taken); orders ties by
  // scheduling.
  void push(double time, int threadblock, bool finish) {
    const Attempt attempt{time, order_++, threadblock, finish};
    if (time == clock_) {
      now_.push_back(attempt);
    } else {
      later_.push(attempt);
    }
  }
  bool empty() const { return head_ == now_.size() && later_.empty(); }
  // The earliest event's time; the queue must not be empty.
  double next_time() const { return head_ < now_.size() ? now_[head_].time : later_.top().time; }
  // Takes the earliest event: those scheduled for an instant before that instant came are
  // older than the ones scheduled during it, so the heap's top goes first on a tie of times.
  Attempt pop() {
    Attempt next;
    if (head_ < now_.size() && (later_.empty() || later_.top() > now_[head_])) {
      next = now_[head_++];
      if (head_ == now_.size()) {
        now_.clear();
        head_ = 0;
      }
    } else {
      next = later_.top();
      later_.pop();
    }
    clock_ = next.time;
    return next;
  }
  // The instant of an event taken elsewhere (a flow's end): what is scheduled for it from now
  // on is in order behind anything still queued for it.
  void advance(double now) {
    if (head_ == now_.size()) clock_ = now;
  }

 private:
  std::vector<Attempt> now_;  // scheduled for clock_, in order; taken from head_
  std::size_t head_ = 0;
  std::priority_queue<Attempt, std::vector<Attempt>, std::greater<>> later_;
  double clock_ = 0;
  std::uint64_t order_ = 0;
};

}  // namespace weft::predict::detail
