// Private to weft_gpu: the compiled kernels, as function pointers the host code (compiled by the
// C++ compiler) passes to cudaLaunchKernel and the occupancy calculator.
#pragma once

#include "weft/runtime/ir.h"
#include "weft/runtime/types.h"

namespace weft::gpu::device {

// The interpreter for (type, operator, protocol); nullptr for a pair the runtime does not
// support (avg on integers). Avg returns the sum kernel: the premultiplication is scale_kernel.
const void* interpreter_kernel(DataType dtype, ReduceOp op, ir::Protocol protocol);
// The avg premultiplication for a floating type; nullptr otherwise.
const void* scale_kernel(DataType dtype);

// One per element type, defined in kernel/types_<type>.cu.
#define WEFT_DECLARE_KERNELS(name)                                           \
  const void* interpreter_kernel_##name(ReduceOp op, ir::Protocol protocol); \
  const void* scale_kernel_##name();
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

}  // namespace weft::gpu::device
