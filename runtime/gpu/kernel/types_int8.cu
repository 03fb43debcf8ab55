// The interpreter's instantiations for int8 elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(int8, NativeType<std::int8_t>)
