// The interpreter's instantiations for double elements.
#include "instantiate.cuh"

WEFT_DEFINE_KERNELS(double, NativeType<double>)
