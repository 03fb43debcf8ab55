// A FIFO that costs one empty vector while unused. The executor, its race detector and the
// simulator keep one per connection and per dependency target, up to millions at scale, where
// std::deque allocates its map and a first block on construction (about 600 bytes each).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace weft::cpu::detail {

template <typename T>
class LightQueue {
 public:
  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  T& operator[](std::size_t k) { return items_[head_ + k]; }
  const T& operator[](std::size_t k) const { return items_[head_ + k]; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  void push_back(T item) { items_.push_back(std::move(item)); }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= 64 && head_ * 2 >= items_.size()) {
      // Drop the consumed half, so that a long-lived queue does not grow without bound.
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;
};

}  // namespace weft::cpu::detail
