// IEEE binary16 ("half") and bfloat16 stored as 16-bit patterns, converted to and from float with
// round-to-nearest-even, as GPUs convert. Arithmetic on them is done in float and rounded back
// after every operation (element_ops.cpp).
#pragma once

#include <cstdint>

namespace weft::cpu {

float half_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);
float bfloat16_to_float(std::uint16_t bits);
std::uint16_t float_to_bfloat16(float value);

}  // namespace weft::cpu
