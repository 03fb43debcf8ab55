// nccl_enums.h spells NCCL's values out for code built without NCCL's headers; here they are
// checked against the nccl.h the shim is built with, so that an NCCL that renumbers or adds a type
// or an operator stops the build instead of having the runtime reduce the wrong type.
#include <nccl.h>

#include "weft/plugin/nccl_enums.h"

namespace weft::plugin {

static_assert(kNcclInt8 == ncclInt8);
static_assert(kNcclUint8 == ncclUint8);
static_assert(kNcclInt32 == ncclInt32);
static_assert(kNcclUint32 == ncclUint32);
static_assert(kNcclInt64 == ncclInt64);
static_assert(kNcclUint64 == ncclUint64);
static_assert(kNcclFloat16 == ncclFloat16);
static_assert(kNcclFloat32 == ncclFloat32);
static_assert(kNcclFloat64 == ncclFloat64);
static_assert(kNcclBfloat16 == ncclBfloat16);
static_assert(kNcclFloat8e4m3 == ncclFloat8e4m3);
static_assert(kNcclFloat8e5m2 == ncclFloat8e5m2);
static_assert(kNcclDataTypeCount == ncclNumTypes, "NCCL has a data type nccl_enums.h lacks");

static_assert(kNcclSum == ncclSum);
static_assert(kNcclProd == ncclProd);
static_assert(kNcclMax == ncclMax);
static_assert(kNcclMin == ncclMin);
static_assert(kNcclAvg == ncclAvg);
static_assert(kNcclBuiltInOpCount == ncclNumOps, "NCCL has an operator nccl_enums.h lacks");

// Every value NCCL defines has a name in log lines, and every built-in operator is one the
// runtime runs (only types may be missing from it).
static_assert([] {
  for (int type = 0; type < ncclNumTypes; ++type) {
    if (nccl_type_name(type) == nccl_type_name(-1)) return false;
  }
  return true;
}());
static_assert([] {
  for (int op = 0; op < ncclNumOps; ++op) {
    if (!weft_reduce_op(op)) return false;
  }
  return true;
}());

}  // namespace weft::plugin
