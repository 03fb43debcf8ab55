// The interpreter's instantiations for int64 elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(int64, NativeType<std::int64_t>)
