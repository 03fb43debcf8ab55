// Private to weft_gpu: the compiled kernels, as addresses the host code (compiled by the C++
// compiler) passes to cudaLaunchKernel and the occupancy calculator.
#pragma once

#include "weft/ir/ir.h"
#include "weft/ir/types.h"

namespace weft::gpu {

// The interpreter for (type, operator, protocol); nullptr for a pair the runtime does not
// support (avg on integers). Avg returns the sum kernel: the premultiplication is the scale kernel.
const void* cuda_interpreter_kernel(DataType dtype, ReduceOp op, ir::Protocol protocol);
// The avg premultiplication for a floating type; nullptr otherwise.
const void* cuda_scale_kernel(DataType dtype);

}  // namespace weft::gpu
