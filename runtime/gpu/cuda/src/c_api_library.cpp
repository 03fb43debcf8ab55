// libweft.so, the C API of weft/weft.h as a shared library: its functions (c_api.cpp) come whole
// from the weft_gpu archive. This unit only checks, at build time, that the header still declares
// what the library exports.
#include "weft/weft.h"

namespace {
[[maybe_unused]] constexpr weftResult_t (*kExported[])(int*) = {&weftGetVersion};
}  // namespace
