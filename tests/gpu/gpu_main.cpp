// Main of the GPU tests: exits with 77 (CTest's SKIP_RETURN_CODE) when no CUDA device is
// visible, so that machines without a GPU report the tests as skipped rather than passed or
// failed. Listing the tests (CTest's discovery at build time) needs no device.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  bool listing = false;
  for (int k = 1; k < argc; ++k) listing = listing || std::strncmp(argv[k], "--list", 6) == 0;
  if (!listing) {
    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
      std::printf("no CUDA device (%s): skipping the GPU tests\n",
                  e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
