# Finds NCCL (nccl.h and libnccl) for the NCCL shim, its tests and the NCCL example.
#
#   WEFT_NCCL_HOME   (cache) a prefix holding include/nccl.h and lib/ or lib64/ with
#                    libnccl.so or libnccl.so.2. Set it to choose; it must then hold NCCL.
#
# Left empty, the first of these that holds nccl.h is used:
#   1. $NCCL_HOME;
#   2. the CUDA toolkit (some toolkits carry NCCL in their own prefix);
#   3. nvidia/nccl under the active Python's sys.path: where PyTorch's nvidia-nccl-cu12/-cu13
#      wheels put it (include/nccl.h, lib/libnccl.so.2 only);
#   4. the system (/usr, /usr/local: Debian's libnccl-dev).
#
# Sets WEFT_NCCL_FOUND, WEFT_NCCL_INCLUDE_DIR, WEFT_NCCL_LIBRARY (empty when the prefix has the
# header only: the shim needs no library, the example does), WEFT_NCCL_VERSION and
# WEFT_NCCL_HEADER, and says where NCCL came from.
set(WEFT_NCCL_HOME "" CACHE PATH
    "NCCL prefix (include/nccl.h, lib/libnccl.so*); empty: NCCL_HOME, the CUDA toolkit, a Python wheel, the system")

# weft_nccl_probe(PREFIX INCLUDE_DIR LIB_DIRS...): sets weft_nccl_include and weft_nccl_library
# when INCLUDE_DIR holds nccl.h (the library is the first libnccl.so or libnccl.so.2 found).
function(weft_nccl_probe include_dir)
  set(weft_nccl_include "" PARENT_SCOPE)
  set(weft_nccl_library "" PARENT_SCOPE)
  if(NOT include_dir OR NOT EXISTS "${include_dir}/nccl.h")
    return()
  endif()
  set(weft_nccl_include "${include_dir}" PARENT_SCOPE)
  foreach(dir IN LISTS ARGN)
    foreach(file libnccl.so libnccl.so.2)
      if(EXISTS "${dir}/${file}")
        set(weft_nccl_library "${dir}/${file}" PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
endfunction()

function(weft_nccl_probe_prefix prefix)
  weft_nccl_probe("${prefix}/include" "${prefix}/lib" "${prefix}/lib64"
                  "${prefix}/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
  set(weft_nccl_include "${weft_nccl_include}" PARENT_SCOPE)
  set(weft_nccl_library "${weft_nccl_library}" PARENT_SCOPE)
endfunction()

set(weft_nccl_include "")
set(weft_nccl_library "")
set(weft_nccl_source "")
if(WEFT_NCCL_HOME)
  weft_nccl_probe_prefix("${WEFT_NCCL_HOME}")
  if(NOT weft_nccl_include)
    message(FATAL_ERROR "WEFT_NCCL_HOME=${WEFT_NCCL_HOME} holds no include/nccl.h")
  endif()
  set(weft_nccl_source "WEFT_NCCL_HOME")
endif()
if(NOT weft_nccl_include AND DEFINED ENV{NCCL_HOME} AND NOT "$ENV{NCCL_HOME}" STREQUAL "")
  weft_nccl_probe_prefix("$ENV{NCCL_HOME}")
  set(weft_nccl_source "NCCL_HOME")
endif()
if(NOT weft_nccl_include)
  if(NOT CUDAToolkit_FOUND)
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND)
    foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
      weft_nccl_probe("${dir}" "${CUDAToolkit_LIBRARY_DIR}" "${CUDAToolkit_LIBRARY_ROOT}/lib64"
                      "${CUDAToolkit_LIBRARY_ROOT}/lib")
      if(weft_nccl_include)
        set(weft_nccl_source "the CUDA toolkit")
        break()
      endif()
    endforeach()
  endif()
endif()
if(NOT weft_nccl_include)
  # The Python on PATH, as `pip install` and an activated virtual environment arrange it.
  find_program(WEFT_PYTHON3 NAMES python3 python NO_CACHE)
  if(WEFT_PYTHON3)
    execute_process(
      COMMAND "${WEFT_PYTHON3}" -c "import sys; print('\\n'.join(p for p in sys.path if p))"
      OUTPUT_VARIABLE python_paths
      RESULT_VARIABLE python_result
      ERROR_QUIET)
    if(python_result EQUAL 0)
      string(REPLACE "\n" ";" python_paths "${python_paths}")
      foreach(dir IN LISTS python_paths)
        weft_nccl_probe_prefix("${dir}/nvidia/nccl")
        if(weft_nccl_include)
          set(weft_nccl_source "the Python wheel in ${dir} (${WEFT_PYTHON3})")
          break()
        endif()
      endforeach()
    endif()
  endif()
endif()
if(NOT weft_nccl_include)
  foreach(prefix /usr /usr/local)
    weft_nccl_probe_prefix("${prefix}")
    if(weft_nccl_include)
      set(weft_nccl_source "the system")
      break()
    endif()
  endforeach()
endif()

set(WEFT_NCCL_INCLUDE_DIR "${weft_nccl_include}")
set(WEFT_NCCL_LIBRARY "${weft_nccl_library}")
set(WEFT_NCCL_VERSION "")
if(WEFT_NCCL_INCLUDE_DIR)
  set(WEFT_NCCL_FOUND ON)
  set(WEFT_NCCL_HEADER "${WEFT_NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${WEFT_NCCL_HEADER}" version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${part} ([0-9]+)" unused "${version_lines}")
    set(nccl_${part} "${CMAKE_MATCH_1}")
  endforeach()
  set(WEFT_NCCL_VERSION "${nccl_MAJOR}.${nccl_MINOR}.${nccl_PATCH}")
  if(WEFT_NCCL_LIBRARY)
    set(library_text "${WEFT_NCCL_LIBRARY}")
  else()
    set(library_text "no libnccl beside it")
  endif()
  message(STATUS "Weft: NCCL ${WEFT_NCCL_VERSION} from ${weft_nccl_source}: "
                 "${WEFT_NCCL_INCLUDE_DIR}, ${library_text}")
else()
  set(WEFT_NCCL_FOUND OFF)
  set(WEFT_NCCL_HEADER "")
  message(STATUS "Weft: NCCL not found (set WEFT_NCCL_HOME or NCCL_HOME to its prefix); "
                 "the NCCL shim and the NCCL example are not built")
endif()
