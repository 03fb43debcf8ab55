#include "kernels.h"

namespace weft::gpu::device {

const void* interpreter_kernel(DataType dtype, ReduceOp op, ir::Protocol protocol) {
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

const void* scale_kernel(DataType dtype) {
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

}  // namespace weft::gpu::device
