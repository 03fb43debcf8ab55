// The interpreter's instantiations for uint32 elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(uint32, NativeType<std::uint32_t>)
