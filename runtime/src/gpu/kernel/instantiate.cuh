// Included once per element type by kernel/types_<type>.cu: takes the addresses of the
// interpreter's instantiations for that type, which makes nvcc compile them in that unit.
#pragma once

#include <type_traits>

#include "interpreter.cuh"
#include "kernels.h"

namespace weft::gpu::device {

template <class Type, class Op>
const void* kernel_for_protocol(ir::Protocol protocol) {
  switch (protocol) {
    case ir::Protocol::Simple:
      return reinterpret_cast<const void*>(&interpreter_kernel<Type, Op, kSimple>);
    case ir::Protocol::LL:
      return reinterpret_cast<const void*>(&interpreter_kernel<Type, Op, kLL>);
    case ir::Protocol::LL128:
      return reinterpret_cast<const void*>(&interpreter_kernel<Type, Op, kLL128>);
  }
  return nullptr;
}

template <class Type>
const void* kernel_for(ReduceOp op, ir::Protocol protocol) {
  constexpr bool floating = std::is_floating_point_v<typename Type::Compute>;
  switch (op) {
    case ReduceOp::Sum:
      return kernel_for_protocol<Type, SumOp>(protocol);
    case ReduceOp::Prod:
      return kernel_for_protocol<Type, ProdOp>(protocol);
    case ReduceOp::Max:
      return kernel_for_protocol<Type, MaxOp>(protocol);
    case ReduceOp::Min:
      return kernel_for_protocol<Type, MinOp>(protocol);
    case ReduceOp::Avg:
      return floating ? kernel_for_protocol<Type, SumOp>(protocol) : nullptr;
  }
  return nullptr;
}

template <class Type>
const void* scale_for() {
  if constexpr (std::is_floating_point_v<typename Type::Compute>) {
    return reinterpret_cast<const void*>(&scale_kernel<Type>);
  } else {
    return nullptr;
  }
}

}  // namespace weft::gpu::device

#define WEFT_DEFINE_KERNELS(name, type)                                       \
  namespace weft::gpu::device {                                               \
  const void* interpreter_kernel_##name(ReduceOp op, ir::Protocol protocol) { \
    return kernel_for<type>(op, protocol);                                    \
  }                                                                           \
  const void* scale_kernel_##name() {                                         \
    return scale_for<type>();                                                 \
  }                                                                           \
  }
