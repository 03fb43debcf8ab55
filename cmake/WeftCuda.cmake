# Decides whether the CUDA runtime is built. AUTO builds it when a CUDA compiler is found
# (the toolkit usually lives in /usr/local/cuda, outside PATH), ON requires it, OFF skips it.
set(WEFT_HAVE_CUDA OFF)
if(NOT WEFT_ENABLE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES ${WEFT_CUDA_ARCHS})
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # CMake 3.25 does not know nvcc's C++20 flag (it refuses CUDA_STANDARD 20), so CUDA targets
    # pass -std=c++20 themselves (runtime/gpu/cuda/CMakeLists.txt).
    set(WEFT_HAVE_CUDA ON)
  elseif(WEFT_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WEFT_ENABLE_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "Weft: CUDA runtime ${WEFT_HAVE_CUDA} (WEFT_ENABLE_CUDA=${WEFT_ENABLE_CUDA})")
