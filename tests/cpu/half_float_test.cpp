// Conversions of half and bfloat16 to and from float: exact one way, round-to-nearest-even the
// other, as GPUs do.
#include <bit>
#include <cmath>
#include <cstdint>

#include <catch2/catch.hpp>

#include "weft/ir/half_float.h"

namespace weft::cpu {
namespace {

bool half_is_nan(std::uint16_t h) {
  return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0;
}

TEST_CASE("every half converts to float and back unchanged", "[cpu][half]") {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = half_to_float(bits);
    if (half_is_nan(bits)) {
      CHECK(std::isnan(f));
      CHECK(half_is_nan(float_to_half(f)));
    } else {
      REQUIRE(float_to_half(f) == bits);
    }
  }
}

TEST_CASE("float to half rounds to nearest, ties to even", "[cpu][half]") {
  CHECK(float_to_half(1.0f) == 0x3C00);
  CHECK(float_to_half(-2.0f) == 0xC000);
  CHECK(float_to_half(-0.0f) == 0x8000);
  CHECK(float_to_half(65504.0f) == 0x7BFF);
  CHECK(float_to_half(65519.0f) == 0x7BFF);
  CHECK(float_to_half(65520.0f) == 0x7C00);  // the tie goes to the even neighbour: infinity
  CHECK(float_to_half(INFINITY) == 0x7C00);
  CHECK(float_to_half(1.0f + 0x1p-11f) == 0x3C00);      // tie, down to even
  CHECK(float_to_half(1.0f + 3 * 0x1p-11f) == 0x3C02);  // tie, up to even
  CHECK(float_to_half(1.0f + 0x1p-11f + 0x1p-20f) == 0x3C01);
  CHECK(float_to_half(0x1p-24f) == 0x0001);  // smallest subnormal
  CHECK(float_to_half(0x1p-25f) == 0x0000);  // tie, down to zero
  CHECK(float_to_half(0x1p-25f * 1.0001f) == 0x0001);
  CHECK(float_to_half(3 * 0x1p-25f) == 0x0002);         // tie between 1 and 2 units
  CHECK(float_to_half(0x1p-14f - 0x1p-26f) == 0x0400);  // rounds up into the normals
  CHECK(float_to_half(1e-10f) == 0x0000);
  CHECK(half_is_nan(float_to_half(std::nanf(""))));
}

TEST_CASE("float to half at every halfway point and between", "[cpu][half]") {
  // Between each pair of neighbouring finite halves: the midpoint goes to the even one, a hair
  // off it to the nearer one.
  for (std::uint32_t h = 0; h < 0x7BFF; ++h) {
    const float low = half_to_float(static_cast<std::uint16_t>(h));
    const float high = half_to_float(static_cast<std::uint16_t>(h + 1));
    const float middle = (low + high) / 2;  // exact in float
    const auto even = static_cast<std::uint16_t>((h & 1u) == 0 ? h : h + 1);
    REQUIRE(float_to_half(middle) == even);
    REQUIRE(float_to_half(std::nextafter(middle, 0.0f)) == h);
    REQUIRE(float_to_half(std::nextafter(middle, INFINITY)) == h + 1);
    REQUIRE(float_to_half(-middle) == (even | 0x8000u));
  }
}

TEST_CASE("bfloat16 converts exactly to float and rounds to nearest even back", "[cpu][half]") {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float f = bfloat16_to_float(bits);
    CHECK(std::bit_cast<std::uint32_t>(f) == b << 16);
    if (!std::isnan(f)) REQUIRE(float_to_bfloat16(f) == bits);
  }
  CHECK(float_to_bfloat16(1.0f) == 0x3F80);
  CHECK(float_to_bfloat16(std::bit_cast<float>(0x3F808000u)) == 0x3F80);  // tie, to even
  CHECK(float_to_bfloat16(std::bit_cast<float>(0x3F818000u)) == 0x3F82);  // tie, to even
  CHECK(float_to_bfloat16(std::bit_cast<float>(0x3F808001u)) == 0x3F81);
  CHECK(float_to_bfloat16(std::bit_cast<float>(0x7F7FFFFFu)) == 0x7F80);  // overflow: infinity
  const std::uint16_t nan = float_to_bfloat16(std::bit_cast<float>(0x7F800001u));
  CHECK(std::isnan(bfloat16_to_float(nan)));  // a NaN whose payload sits in the dropped bits
}

}  // namespace
}  // namespace weft::cpu
