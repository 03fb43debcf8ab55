// The CUDA build's kernel table (kernels.h), for the host code of weft_gpu, which the C++
// compiler builds and which therefore cannot see the kernels' namespace itself.
#include "cuda_kernels.h"
#include "kernels.h"

namespace weft::gpu {

const void* cuda_interpreter_kernel(DataType dtype, ReduceOp op, ir::Protocol protocol) {
  return device::interpreter_kernel(dtype, op, protocol);
}

const void* cuda_scale_kernel(DataType dtype) {
  return device::scale_kernel(dtype);
}

}  // namespace weft::gpu
