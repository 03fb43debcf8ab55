// Element types and reduction operators shared by the CPU reference executor, the GPU runtime and
// the NCCL shim. Values of DataType and ReduceOp match NCCL's ncclDataType_t / ncclRedOp_t and the
// C API's (weft.h), which converts by cast; the NCCL shim maps NCCL's values one by one
// (weft/plugin/nccl_enums.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace weft {

enum class DataType : int {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Half = 6,
  Float = 7,
  Double = 8,
  Bfloat16 = 9,
};

enum class ReduceOp : int { Sum = 0, Prod = 1, Max = 2, Min = 3, Avg = 4 };

inline constexpr DataType kAllDataTypes[] = {
    DataType::Int8,   DataType::Uint8, DataType::Int32, DataType::Uint32, DataType::Int64,
    DataType::Uint64, DataType::Half,  DataType::Float, DataType::Double, DataType::Bfloat16};
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max,
                                             ReduceOp::Min, ReduceOp::Avg};

std::size_t size_of(DataType type);
bool is_floating(DataType type);
std::string_view to_string(DataType type);
std::string_view to_string(ReduceOp op);
// Accepts Weft's names ("float", "bfloat16", "int32") and nccl-tests' ("float32", "bf16", "fp16").
std::optional<DataType> parse_data_type(std::string_view name);
std::optional<ReduceOp> parse_reduce_op(std::string_view name);

}  // namespace weft
