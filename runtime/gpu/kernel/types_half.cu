// The interpreter's instantiations for half elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(half, HalfType)
