// The tuner table's vocabulary: NCCL's ncclFunc_t, NCCL_ALGO_* and NCCL_PROTO_* values as the
// tuner plugin receives them, and the names NCCL's example tuner's CSV format gives them (which
// WEFT_TUNER_CONFIG uses). Spelled out rather than taken from NCCL's headers, which do not
// declare them (they belong to the tuner interface); the NCCL shim, built with NCCL's headers
// and its copy of the tuner ABI, checks them (plugin/src/nccl_enums.cpp).
#pragma once

#include <optional>
#include <string_view>

namespace weft::tuning {

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

}  // namespace weft::tuning
