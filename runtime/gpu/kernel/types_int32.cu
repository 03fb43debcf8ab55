// The interpreter's instantiations for int32 elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(int32, NativeType<std::int32_t>)
