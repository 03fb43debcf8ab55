// The interpreter's instantiations for uint64 elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(uint64, NativeType<std::uint64_t>)
