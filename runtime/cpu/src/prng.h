// SplitMix64: a small, fast generator and mixing function with no global state. The scheduler
// draws from it; input values and the schedule fingerprint use its mixing step as a hash.
#pragma once

#include <cstdint>

namespace weft::cpu::detail {

constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return mix64(state_);
  }
  // In [0, bound) for bound > 0; the modulo bias is far below 2^-32 for the bounds used here.
  std::uint64_t below(std::uint64_t bound) { return next() % bound; }

 private:
  std::uint64_t state_;
};

}  // namespace weft::cpu::detail
