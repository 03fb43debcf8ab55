// An open-addressing hash map from 64-bit keys to ints, for the passes' per-pair and
// per-connection tables: one flat array, no allocation per entry (std::unordered_map allocates
// a node per insertion, which dominated passes over millions of instructions).
#pragma once

#include <cstdint>
#include <vector>

namespace weft::compiler::detail {

class FlatMap {
 public:
  explicit FlatMap(std::size_t expected = 16) {
    std::size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    keys_.assign(capacity, kEmpty);
    values_.assign(capacity, 0);
  }

  // The value for `key`, inserted as `fallback` when absent.
  int& at_or(std::uint64_t key, int fallback) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    std::size_t slot = find_slot(key);
    if (keys_[slot] == kEmpty) {
      keys_[slot] = key;
      values_[slot] = fallback;
      ++size_;
    }
    return values_[slot];
  }

  const int* find(std::uint64_t key) const {
    const std::size_t slot = find_slot(key);
    return keys_[slot] == kEmpty ? nullptr : &values_[slot];
  }

  std::size_t size() const { return size_; }

  template <typename F>
  void for_each(F&& f) const {
    for (std::size_t k = 0; k < keys_.size(); ++k) {
      if (keys_[k] != kEmpty) f(keys_[k], values_[k]);
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
  }

  std::size_t find_slot(std::uint64_t key) const {
    const std::size_t mask = keys_.size() - 1;
    std::size_t slot = mix(key) & mask;
    while (keys_[slot] != kEmpty && keys_[slot] != key) slot = (slot + 1) & mask;
    return slot;
  }

  void grow() {
    std::vector<std::uint64_t> keys(keys_.size() * 2, kEmpty);
    std::vector<int> values(keys.size(), 0);
    keys.swap(keys_);
    values.swap(values_);
    size_ = 0;
    for (std::size_t k = 0; k < keys.size(); ++k) {
      if (keys[k] != kEmpty) at_or(keys[k], values[k]);
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<int> values_;
  std::size_t size_ = 0;
};

}  // namespace weft::compiler::detail
