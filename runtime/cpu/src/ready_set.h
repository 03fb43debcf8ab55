// The runnable threadblocks of a schedule and the seeded policy that picks the next one to run:
// PCT (probabilistic concurrency testing). Each threadblock gets a random priority and the
// highest runnable one always runs, except that at a few random step counts the one running
// drops below all others. Some threadblocks thus run far ahead of others, which is what exposes
// a missing dependency within a few seeds; uniformly random picks keep threadblocks in near
// lockstep and rarely do (on the all-pairs files of the MSCCL corpus the default verify sweep
// caught about half of the removable dependencies with uniform picks, nearly all with PCT).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "prng.h"

namespace weft::cpu::detail {

class ReadySet {
 public:
  // `executions`: the step executions a complete run makes, over which the change points are
  // spread.
  ReadySet(std::size_t threadblocks, std::uint64_t seed, std::uint64_t executions)
      : present_(threadblocks, 0), priority_(threadblocks) {
    SplitMix64 rng(seed);
    // Initial priorities lie above every value a change point gives.
    for (auto& p : priority_) p = rng.next() | (std::uint64_t{1} << 63);
    for (int k = 0; k < kChangePoints && executions > 0; ++k) {
      change_points_.push_back(1 + rng.below(executions));
    }
    std::sort(change_points_.begin(), change_points_.end(), std::greater<>());
  }

  bool empty() const { return heap_.empty(); }

  void add(int g) {
    auto& flag = present_[static_cast<std::size_t>(g)];
    if (flag != 0) return;
    flag = 1;
    heap_.push_back({priority_[static_cast<std::size_t>(g)], g});
    std::push_heap(heap_.begin(), heap_.end());
  }

  // Removes and returns the threadblock to try next. Not empty().
  int pick() {
    std::pop_heap(heap_.begin(), heap_.end());
    const int g = heap_.back().second;
    heap_.pop_back();
    present_[static_cast<std::size_t>(g)] = 0;
    return g;
  }

  // `g` (picked, not yet added back) has run a step.
  void ran(int g) {
    ++executions_;
    while (!change_points_.empty() && executions_ == change_points_.back()) {
      change_points_.pop_back();
      priority_[static_cast<std::size_t>(g)] = ++changes_;
    }
  }

 private:
  static constexpr int kChangePoints = 3;

  std::vector<char> present_;
  std::vector<std::uint64_t> priority_;
  std::vector<std::pair<std::uint64_t, int>> heap_;  // max-heap of (priority, threadblock)
  std::vector<std::uint64_t> change_points_;         // descending: the next one is at the back
  std::uint64_t executions_ = 0;
  std::uint64_t changes_ = 0;
};

}  // namespace weft::cpu::detail
