// The interpreter's instantiations (type × operator × protocol) and the avg premultiplication,
// one translation unit per element type, looked up by what a call needs. Generic over the build:
// under nvcc the entries are kernel addresses for cudaLaunchKernel (types_<type>.cu), in host mode
// plain functions the host launcher runs on every thread (host_types_<type>.cpp).
#pragma once

#include "portability.h"
#include "weft/ir/ir.h"
#include "weft/ir/types.h"
#include "weft/program/device_abi.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

#if defined(__CUDACC__)
using InterpreterEntry = const void*;
using ScaleEntry = const void*;
#else
using InterpreterEntry = void (*)(LaunchArgs);
using ScaleEntry = void (*)(ScaleArgs);
#endif

// One per element type: the interpreter for (operator, protocol), nullptr for a pair the runtime
// does not support (avg on integers; avg gives the sum kernel, its premultiplication is the
// scale kernel); the scale kernel of a floating type, nullptr otherwise.
#define WEFT_DECLARE_KERNELS(name)                                                \
  InterpreterEntry interpreter_kernel_##name(ReduceOp op, ir::Protocol protocol); \
  ScaleEntry scale_kernel_##name();
WEFT_DECLARE_KERNELS(int8)
WEFT_DECLARE_KERNELS(uint8)
WEFT_DECLARE_KERNELS(int32)
WEFT_DECLARE_KERNELS(uint32)
WEFT_DECLARE_KERNELS(int64)
WEFT_DECLARE_KERNELS(uint64)
WEFT_DECLARE_KERNELS(half)
WEFT_DECLARE_KERNELS(float)
WEFT_DECLARE_KERNELS(double)
WEFT_DECLARE_KERNELS(bfloat16)
#undef WEFT_DECLARE_KERNELS

inline InterpreterEntry interpreter_kernel(DataType dtype, ReduceOp op, ir::Protocol protocol) {
  switch (dtype) {
    case DataType::Int8:
      return interpreter_kernel_int8(op, protocol);
    case DataType::Uint8:
      return interpreter_kernel_uint8(op, protocol);
    case DataType::Int32:
      return interpreter_kernel_int32(op, protocol);
    case DataType::Uint32:
      return interpreter_kernel_uint32(op, protocol);
    case DataType::Int64:
      return interpreter_kernel_int64(op, protocol);
    case DataType::Uint64:
      return interpreter_kernel_uint64(op, protocol);
    case DataType::Half:
      return interpreter_kernel_half(op, protocol);
    case DataType::Float:
      return interpreter_kernel_float(op, protocol);
    case DataType::Double:
      return interpreter_kernel_double(op, protocol);
    case DataType::Bfloat16:
      return interpreter_kernel_bfloat16(op, protocol);
  }
  return nullptr;
}

inline ScaleEntry scale_kernel(DataType dtype) {
  switch (dtype) {
    case DataType::Half:
      return scale_kernel_half();
    case DataType::Float:
      return scale_kernel_float();
    case DataType::Double:
      return scale_kernel_double();
    case DataType::Bfloat16:
      return scale_kernel_bfloat16();
    default:
      return nullptr;
  }
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
