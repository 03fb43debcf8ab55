// NCCL's enumerations as Weft reads them. The shim keeps NCCL's values raw (CollectiveCall's
// ncclDataType_t and ncclRedOp_t, the tuner's ncclFunc_t, algorithm and protocol) because NCCL
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

#include "weft/runtime/types.h"

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

// ---- The tuner's ncclFunc_t, NCCL_ALGO_* and NCCL_PROTO_* ---------------------------------
// Names are those of NCCL's example tuner's CSV format, which WEFT_TUNER_CONFIG uses.

inline constexpr int kNcclFuncBroadcast = 0;
inline constexpr int kNcclFuncReduce = 1;
inline constexpr int kNcclFuncAllGather = 2;
inline constexpr int kNcclFuncReduceScatter = 3;
inline constexpr int kNcclFuncAllReduce = 4;
inline constexpr int kNcclFuncSendRecv = 5;
inline constexpr int kNcclFuncSend = 6;
inline constexpr int kNcclFuncRecv = 7;
inline constexpr int kNcclFuncAllToAll = 8;
inline constexpr int kNcclFuncScatter = 9;
inline constexpr int kNcclFuncGather = 10;
inline constexpr int kNcclFuncCount = 11;  // ncclNumFuncs

constexpr std::string_view tuner_collective_name(int nccl_func) {
  switch (nccl_func) {
    case kNcclFuncBroadcast:
      return "broadcast";
    case kNcclFuncReduce:
      return "reduce";
    case kNcclFuncAllGather:
      return "allgather";
    case kNcclFuncReduceScatter:
      return "reducescatter";
    case kNcclFuncAllReduce:
      return "allreduce";
    case kNcclFuncSendRecv:
      return "sendrecv";
    case kNcclFuncSend:
      return "send";
    case kNcclFuncRecv:
      return "recv";
    case kNcclFuncAllToAll:
      return "alltoall";
    case kNcclFuncScatter:
      return "scatter";
    case kNcclFuncGather:
      return "gather";
    default:
      return "unknown";
  }
}

// The cost table NCCL hands the tuner is float[kTunerAlgorithms][kTunerProtocols].
inline constexpr int kNcclAlgoTree = 0;
inline constexpr int kNcclAlgoRing = 1;
inline constexpr int kNcclAlgoCollNetDirect = 2;
inline constexpr int kNcclAlgoCollNetChain = 3;
inline constexpr int kNcclAlgoNvls = 4;
inline constexpr int kNcclAlgoNvlsTree = 5;
inline constexpr int kNcclAlgoPat = 6;
inline constexpr int kTunerAlgorithms = 7;  // NCCL_NUM_ALGORITHMS

constexpr std::string_view tuner_algorithm_name(int nccl_algorithm) {
  switch (nccl_algorithm) {
    case kNcclAlgoTree:
      return "tree";
    case kNcclAlgoRing:
      return "ring";
    case kNcclAlgoCollNetDirect:
      return "collnet_direct";
    case kNcclAlgoCollNetChain:
      return "collnet_chain";
    case kNcclAlgoNvls:
      return "nvls";
    case kNcclAlgoNvlsTree:
      return "nvls_tree";
    case kNcclAlgoPat:
      return "pat";
    default:
      return "unknown";
  }
}

inline constexpr int kNcclProtoLL = 0;
inline constexpr int kNcclProtoLL128 = 1;
inline constexpr int kNcclProtoSimple = 2;
inline constexpr int kTunerProtocols = 3;  // NCCL_NUM_PROTOCOLS

constexpr std::string_view tuner_protocol_name(int nccl_protocol) {
  switch (nccl_protocol) {
    case kNcclProtoLL:
      return "ll";
    case kNcclProtoLL128:
      return "ll128";
    case kNcclProtoSimple:
      return "simple";
    default:
      return "unknown";
  }
}

// The value a tuner-config name stands for, by the name functions above; nothing for a name
// they do not give.
constexpr std::optional<int> tuner_collective_from_name(std::string_view name) {
  for (int value = 0; value < kNcclFuncCount; ++value) {
    if (tuner_collective_name(value) == name) return value;
  }
  return std::nullopt;
}
constexpr std::optional<int> tuner_algorithm_from_name(std::string_view name) {
  for (int value = 0; value < kTunerAlgorithms; ++value) {
    if (tuner_algorithm_name(value) == name) return value;
  }
  return std::nullopt;
}
constexpr std::optional<int> tuner_protocol_from_name(std::string_view name) {
  for (int value = 0; value < kTunerProtocols; ++value) {
    if (tuner_protocol_name(value) == name) return value;
  }
  return std::nullopt;
}

}  // namespace weft::plugin
