// Element-wise work on raw byte buffers of one data type and reduction operator, computed as a
// GPU computes it: integers wrap, half and bfloat16 go through float and are rounded back after
// every operation, min and max of floating types propagate NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "weft/ir/types.h"

namespace weft::cpu::detail {

struct ElementOps {
  DataType type = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  std::size_t size = 0;  // bytes per element
  // out[k] = a[k] ⊕ b[k] for k < n; out may be a or b. Avg combines as a sum (see scale).
  void (*combine)(std::byte* out, const std::byte* a, const std::byte* b, std::size_t n) = nullptr;
  // data[k] = data[k] × factor, rounded to the type: Avg's premultiplication (floating types).
  void (*scale)(std::byte* data, std::size_t n, double factor) = nullptr;
  // One element as a number; long double holds every value of every type exactly.
  long double (*value)(const std::byte* element) = nullptr;
  // Floating types: writes `value` rounded to the type. Integer types: writes the low bits.
  void (*store_real)(std::byte* element, double value) = nullptr;
  void (*store_bits)(std::byte* element, std::uint64_t bits) = nullptr;
  std::string (*format)(const std::byte* element) = nullptr;
};

// Nothing when the type has no such reduction (avg on integer types).
std::optional<ElementOps> element_ops(DataType type, ReduceOp op);

// A byte pattern no correct run leaves in an output element: NaN for floating types, 0xA5 bytes
// for integers. Scratch and unwritten output start as it.
void fill_poison(DataType type, std::span<std::byte> bytes);
bool is_poison(DataType type, const std::byte* element);

// u: half the distance from 1 to the next value of the type.
double unit_roundoff(DataType type);
// The least positive value of the type (floating types), the unit of underflow error.
double smallest_subnormal(DataType type);

}  // namespace weft::cpu::detail
