// The interpreter's instantiations for float elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(float, NativeType<float>)
