// NCCL's enumerations as Weft reads them. The shim keeps NCCL's values raw (CollectiveCall's
// ncclDataType_t and ncclRedOp_t) because NCCL
// has values Weft has not: fp8 types, the PreMulSum operators ncclRedOpCreatePreMulSum hands out,
// collectives Weft never runs. Every place that turns such a value into a Weft enum or a name
// comes here, where each value is mapped by name, so Weft's own numbering may differ from
// NCCL's.
//
// The values are spelled out rather than taken from nccl.h so that code built without NCCL's
// headers (weft_nccl_core and its tests) can use them; nccl_enums.cpp, built with nccl.h,
// checks them against it. ncclFunc_t and NCCL_ALGO_* / NCCL_PROTO_* belong to NCCL's tuner
// interface, which nccl.h does not declare (tuner_abi.h copies its layout).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "weft/ir/types.h"

namespace weft::plugin {

// ---- ncclDataType_t ------------------------------------------------------------------------

inline constexpr int kNcclInt8 = 0;
inline constexpr int kNcclUint8 = 1;
inline constexpr int kNcclInt32 = 2;
inline constexpr int kNcclUint32 = 3;
inline constexpr int kNcclInt64 = 4;
inline constexpr int kNcclUint64 = 5;
inline constexpr int kNcclFloat16 = 6;
inline constexpr int kNcclFloat32 = 7;
inline constexpr int kNcclFloat64 = 8;
inline constexpr int kNcclBfloat16 = 9;
inline constexpr int kNcclFloat8e4m3 = 10;
inline constexpr int kNcclFloat8e5m2 = 11;
inline constexpr int kNcclDataTypeCount = 12;  // ncclNumTypes

// The runtime's type for an NCCL type; nothing for the fp8 types, which it has no kernels for,
// and for values NCCL does not define.
constexpr std::optional<DataType> weft_data_type(int nccl_datatype) {
  switch (nccl_datatype) {
    case kNcclInt8:
      return DataType::Int8;
    case kNcclUint8:
      return DataType::Uint8;
    case kNcclInt32:
      return DataType::Int32;
    case kNcclUint32:
      return DataType::Uint32;
    case kNcclInt64:
      return DataType::Int64;
    case kNcclUint64:
      return DataType::Uint64;
    case kNcclFloat16:
      return DataType::Half;
    case kNcclFloat32:
      return DataType::Float;
    case kNcclFloat64:
      return DataType::Double;
    case kNcclBfloat16:
      return DataType::Bfloat16;
    default:
      return std::nullopt;
  }
}

// For log lines; Weft's names where the runtime has the type.
constexpr std::string_view nccl_type_name(int nccl_datatype) {
  switch (nccl_datatype) {
    case kNcclInt8:
      return "int8";
    case kNcclUint8:
      return "uint8";
    case kNcclInt32:
      return "int32";
    case kNcclUint32:
      return "uint32";
    case kNcclInt64:
      return "int64";
    case kNcclUint64:
      return "uint64";
    case kNcclFloat16:
      return "half";
    case kNcclFloat32:
      return "float";
    case kNcclFloat64:
      return "double";
    case kNcclBfloat16:
      return "bfloat16";
    case kNcclFloat8e4m3:
      return "float8e4m3";
    case kNcclFloat8e5m2:
      return "float8e5m2";
    default:
      return "unknown type";
  }
}

// Bytes of one element of an NCCL type, 0 for a value NCCL does not define. Also for the types
// the runtime lacks: the shim still sizes buffers of calls it passes to NCCL.
inline std::size_t nccl_type_size(int nccl_datatype) {
  if (const auto type = weft_data_type(nccl_datatype)) return size_of(*type);
  if (nccl_datatype == kNcclFloat8e4m3 || nccl_datatype == kNcclFloat8e5m2) return 1;
  return 0;
}

// ---- ncclRedOp_t ---------------------------------------------------------------------------

inline constexpr int kNcclSum = 0;
inline constexpr int kNcclProd = 1;
inline constexpr int kNcclMax = 2;
inline constexpr int kNcclMin = 3;
inline constexpr int kNcclAvg = 4;
// ncclNumOps: the built-in operators end here; ncclRedOpCreatePreMulSum hands out values from it
// on, which the runtime cannot run.
inline constexpr int kNcclBuiltInOpCount = 5;

constexpr std::optional<ReduceOp> weft_reduce_op(int nccl_op) {
  switch (nccl_op) {
    case kNcclSum:
      return ReduceOp::Sum;
    case kNcclProd:
      return ReduceOp::Prod;
    case kNcclMax:
      return ReduceOp::Max;
    case kNcclMin:
      return ReduceOp::Min;
    case kNcclAvg:
      return ReduceOp::Avg;
    default:
      return std::nullopt;
  }
}

constexpr std::string_view nccl_op_name(int nccl_op) {
  switch (nccl_op) {
    case kNcclSum:
      return "sum";
    case kNcclProd:
      return "prod";
    case kNcclMax:
      return "max";
    case kNcclMin:
      return "min";
    case kNcclAvg:
      return "avg";
    default:
      return nccl_op < 0 ? "unknown operator" : "a custom operator (PreMulSum)";
  }
}

}  // namespace weft::plugin
