// Included once per element type by types_<type>.cu (nvcc) and host_types_<type>.cpp (host
// mode): defines that type's entries of kernels.h, which makes the compiler instantiate the
// interpreter for every operator and protocol in that unit.
#pragma once

#include <type_traits>

#include "element_types.cuh"
#include "interpreter.cuh"
#include "kernels.h"
#include "portability.h"
#include "scaling.cuh"
#include "weft/program/device_abi.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

template <class Entry, class Function>
Entry entry_of(Function* function) {
#if defined(__CUDACC__)
  return reinterpret_cast<Entry>(function);
#else
  return function;
#endif
}

template <class Type, class Op>
InterpreterEntry kernel_for_protocol(ir::Protocol protocol) {
  switch (protocol) {
    case ir::Protocol::Simple:
      return entry_of<InterpreterEntry>(&interpreter_kernel<Type, Op, kSimple>);
    case ir::Protocol::LL:
      return entry_of<InterpreterEntry>(&interpreter_kernel<Type, Op, kLL>);
    case ir::Protocol::LL128:
      return entry_of<InterpreterEntry>(&interpreter_kernel<Type, Op, kLL128>);
  }
  return nullptr;
}

template <class Type>
InterpreterEntry kernel_for(ReduceOp op, ir::Protocol protocol) {
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
ScaleEntry scale_for() {
  if constexpr (std::is_floating_point_v<typename Type::Compute>) {
    return entry_of<ScaleEntry>(&scale_kernel<Type>);
  } else {
    return nullptr;
  }
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device

#define WEFT_DEFINE_KERNELS(name, type)                                            \
  namespace weft::gpu::device {                                                    \
  inline namespace WEFT_KERNEL_BUILD {                                             \
  InterpreterEntry interpreter_kernel_##name(ReduceOp op, ir::Protocol protocol) { \
    return kernel_for<type>(op, protocol);                                         \
  }                                                                                \
  ScaleEntry scale_kernel_##name() {                                               \
    return scale_for<type>();                                                      \
  }                                                                                \
  }                                                                                \
  }
