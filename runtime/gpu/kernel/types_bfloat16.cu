// The interpreter's instantiations for bfloat16 elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(bfloat16, Bfloat16Type)
