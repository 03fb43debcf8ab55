// Helpers for tests of the built libweft_nccl.so: opening it as a preload would be opened, and
// capturing what it writes to stderr (its WEFT_DEBUG log).
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

#include "../plugin_test_support.h"

namespace weft::plugin::testing {

inline void* open_shim() {
  void* handle = dlopen(WEFT_NCCL_SHIM, RTLD_NOW | RTLD_LOCAL);
  INFO((handle == nullptr ? dlerror() : ""));
  REQUIRE(handle != nullptr);
  return handle;
}

template <class Function>
Function symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  INFO(name);
  REQUIRE(address != nullptr);
  return reinterpret_cast<Function>(address);
}

// Sends file descriptor 2 to a file for the object's life, then reads what was written.
class CapturedStderr {
 public:
  explicit CapturedStderr(const TempDir& dir) : path_(dir.file("stderr.txt")) {
    std::fflush(stderr);
    saved_ = dup(2);
    const int fd = open(path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    REQUIRE(fd >= 0);
    dup2(fd, 2);
    close(fd);
  }
  ~CapturedStderr() { restore(); }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;

  std::string text() {
    restore();
    return read_text(path_);
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

}  // namespace weft::plugin::testing
