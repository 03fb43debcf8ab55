// `weftc --version`: Weft's version, the NCCL the shim of this build was compiled against, and the
// NCCL found at run time here.
#pragma once

#include <string>

namespace weft::weftc {

std::string version_text();

}  // namespace weft::weftc
