// Avg's premultiplication, a kernel of its own launched before the interpreter (kernels.h's
// scale_kernel_<type>; instantiate.cuh instantiates it for the floating types).
#pragma once

#include <cstdint>

#include "portability.h"
#include "weft/program/device_abi.h"

namespace weft::gpu::device {
inline namespace WEFT_KERNEL_BUILD {

// Avg's premultiplication (NCCL's PreMulSum, as the CPU reference does it): every input element
// times 1/ngpus, rounded to the type, before the algorithm's sums.
template <class Type>
__global__ void scale_kernel(const ScaleArgs args) {
  using S = typename Type::Storage;
  using C = typename Type::Compute;
  const S* source = reinterpret_cast<const S*>(args.source);
  S* destination = reinterpret_cast<S*>(args.destination);
  const C factor = static_cast<C>(args.factor);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < args.elements; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    destination[i] = Type::encode(Type::decode(source[i]) * factor);
  }
}

}  // namespace WEFT_KERNEL_BUILD
}  // namespace weft::gpu::device
