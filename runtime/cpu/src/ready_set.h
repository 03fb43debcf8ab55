// The runnable threadblocks of a schedule and the seeded policy that picks the next one to run:
// PCT (probabilistic concurrency testing). Each threadblock gets a random priority and the
// highest runnable one always runs, except that at a few random step counts the one running
// drops below all others. Some threadblocks thus run far ahead of others, which is what exposes
// a missing dependency within a few seeds; uniformly random picks keep threadblocks in near
// lockstep and rarely do (on the all-pairs files of the MSCCL corpus the default verify sweep
// caught about half of the removable dependencies with uniform picks, nearly all with PCT).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "prng.h"

namespace weft::cpu::detail {

// The pick is the runnable threadblock of highest (priority, index), as a max-heap of those pairs
// would give. It is kept as a set of ranks in that order: every threadblock's place among the
// initial priorities, found once by sorting, and below them one place per change point, in the
// order they come (each later change outranks the earlier ones and none of the initial
// priorities). The set is a bitset with a summary word per 64 words, two levels up: adding and
// picking touch a few words, where a heap of a million threadblocks missed the cache on every
// level of every pick (a fifth of proving a 1,024-rank alltoall).
class ReadySet {
 public:
  // `executions`: the step executions a complete run makes, over which the change points are
  // spread. With `groups` (a group per threadblock), every threadblock of a group outranks every
  // one of the groups after it, and no change point reorders them: each group runs to its end
  // (or blocks for good) before the next one starts. The race check runs the components that
  // happens-before joins this way (race_detector.h), so that only one component's clocks are
  // held at a time.
  ReadySet(std::size_t threadblocks, std::uint64_t seed, std::uint64_t executions,
           const std::vector<std::uint32_t>* groups = nullptr)
      : present_(threadblocks, 0), rank_(threadblocks), by_rank_(threadblocks + kChangePoints, -1) {
    SplitMix64 rng(seed);
    // Initial priorities lie above every value a change point gives.
    std::vector<std::pair<std::uint64_t, int>> order(threadblocks);
    for (std::size_t g = 0; g < threadblocks; ++g) {
      std::uint64_t priority = rng.next() | (std::uint64_t{1} << 63);
      if (groups) {
        // The group in the high half (the first group highest), a random draw in the low half.
        const std::uint64_t group = (*groups)[g];
        priority = (std::uint64_t{1} << 63) | ((std::uint64_t{0x7fffffff} - group) << 32) |
                   (priority & 0xffffffffu);
      }
      order[g] = {priority, static_cast<int>(g)};
    }
    for (int k = 0; k < kChangePoints && executions > 0 && groups == nullptr; ++k) {
      change_points_.push_back(1 + rng.below(executions));
    }
    std::sort(change_points_.begin(), change_points_.end(), std::greater<>());
    std::sort(order.begin(), order.end());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto place = static_cast<std::uint32_t>(k + kChangePoints);
      rank_[static_cast<std::size_t>(order[k].second)] = place;
      by_rank_[place] = order[k].second;
    }
    const std::size_t places = threadblocks + kChangePoints;
    for (std::size_t words = places; words > 1 || levels_.empty();) {
      words = (words + 63) / 64;
      levels_.emplace_back(words, 0);
    }
  }

  bool empty() const { return count_ == 0; }

  void add(int g) {
    auto& flag = present_[static_cast<std::size_t>(g)];
    if (flag != 0) return;
    flag = 1;
    ++count_;
    std::size_t place = rank_[static_cast<std::size_t>(g)];
    for (auto& level : levels_) {
      std::uint64_t& word = level[place / 64];
      const bool was_empty = word == 0;
      word |= std::uint64_t{1} << (place % 64);
      if (!was_empty) break;  // the levels above already show this word
      place /= 64;
    }
  }

  // Removes and returns the threadblock to try next. Not empty().
  int pick() {
    std::size_t place = 0;
    for (std::size_t level = levels_.size(); level-- > 0;) {
      const std::uint64_t word = levels_[level][place];
      place = place * 64 + static_cast<std::size_t>(63 - std::countl_zero(word));
    }
    const int g = by_rank_[place];
    for (auto& level : levels_) {
      std::uint64_t& word = level[place / 64];
      word &= ~(std::uint64_t{1} << (place % 64));
      if (word != 0) break;
      place /= 64;
    }
    present_[static_cast<std::size_t>(g)] = 0;
    --count_;
    return g;
  }

  // `g` (picked, not yet added back) has run a step.
  void ran(int g) {
    ++executions_;
    while (!change_points_.empty() && executions_ == change_points_.back()) {
      change_points_.pop_back();
      // Below every initial priority, above the earlier changes: the next free low place.
      const auto place = static_cast<std::uint32_t>(changes_++);
      by_rank_[rank_[static_cast<std::size_t>(g)]] = -1;
      rank_[static_cast<std::size_t>(g)] = place;
      by_rank_[place] = g;
    }
  }

 private:
  static constexpr int kChangePoints = 3;

  std::vector<char> present_;
  std::vector<std::uint32_t> rank_;                 // per threadblock: its place in pick order
  std::vector<int> by_rank_;                        // per place: its threadblock, or -1
  std::vector<std::vector<std::uint64_t>> levels_;  // the bitset of places, then its summaries
  std::vector<std::uint64_t> change_points_;        // descending: the next one is at the back
  std::size_t count_ = 0;
  std::uint64_t executions_ = 0;
  std::uint64_t changes_ = 0;
};

}  // namespace weft::cpu::detail
