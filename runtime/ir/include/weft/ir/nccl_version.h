// NCCL's version codes (ncclGetVersion, NCCL_VERSION_CODE) in words.
#pragma once

#include <string>

namespace weft::ir {

// "2.28.9" for 22809. NCCL counts MAJOR * 10000 + MINOR * 100 + PATCH since 2.9, and
// MAJOR * 1000 + MINOR * 100 + PATCH before.
inline std::string nccl_version_text(int code) {
  const bool new_scheme = code >= 20900;
  const int major = new_scheme ? code / 10000 : code / 1000;
  const int minor = new_scheme ? code % 10000 / 100 : code % 1000 / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace weft::ir
