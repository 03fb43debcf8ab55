#include "weft/ir/half_float.h"

#include <bit>
#include <cmath>

namespace weft::cpu {

namespace {
constexpr std::uint32_t kFloatExponentMask = 0x7F800000u;
constexpr std::uint32_t kFloatAbsMask = 0x7FFFFFFFu;
}  // namespace

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa × 2^-24, exact in float.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1F) return std::bit_cast<float>(sign | kFloatExponentMask | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t float_to_half(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & kFloatAbsMask;
  if (abs > kFloatExponentMask) {
    // NaN: keep it a NaN (quiet bit set) whatever the payload.
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
  }
  // 65520 (0x477FF000) lies halfway between the largest half, 65504, and 2^16; the tie goes to
  // the even neighbour, which is infinity.
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (abs < 0x38800000u) {
    // Below the smallest normal half (2^-14): a subnormal in units of 2^-24. 2^-25 and below
    // round to zero (2^-25 itself is a tie, and zero is even).
    if (abs <= 0x33000000u) return sign;
    const std::uint32_t exponent = abs >> 23;  // 102..112 here
    const std::uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - exponent;  // value = mantissa × 2^(exponent-126) × 2^-24
    std::uint32_t result = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (result & 1u) != 0)) ++result;
    return static_cast<std::uint16_t>(sign | result);
  }
  // Normal: rebias the exponent (127 → 15) and drop 13 mantissa bits, rounding to nearest even.
  // A carry out of the mantissa correctly bumps the exponent.
  std::uint32_t result = (abs >> 13) - (112u << 10);
  const std::uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u) != 0)) ++result;
  return static_cast<std::uint16_t>(sign | result);
}

float bfloat16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bfloat16(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & kFloatAbsMask) > kFloatExponentMask) {
    return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  }
  // Adding 0x7FFF plus the lowest kept bit rounds to nearest even; overflow becomes infinity.
  const std::uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

}  // namespace weft::cpu
