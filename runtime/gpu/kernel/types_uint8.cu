// The interpreter's instantiations for uint8 elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(uint8, NativeType<std::uint8_t>)
