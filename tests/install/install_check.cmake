# Installs the build into PREFIX and checks what a user copying that folder to another machine
# relies on.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${status}):\n${out}")
endif()

function(require_runpath file expected)
  file(READ "${file}" elf HEX LIMIT 4)
  if(NOT elf STREQUAL "7f454c46")
    message(FATAL_ERROR "${file} is not an ELF file")
  endif()
  execute_process(COMMAND readelf -d "${file}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "readelf -d ${file} failed")
  endif()
  string(FIND "${dynamic}" "[${expected}]" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${file}: RUNPATH is not ${expected}:\n${dynamic}")
  endif()
  # Every NEEDED library that is neither part of the C/C++ runtime, CUDA's driver nor OpenSSL's
  # libcrypto must lie in the installed lib folder. libcrypto (the rendezvous's MAC) is the
  # system's: a cryptographic library is taken from the machine, which keeps it patched, never
  # copied beside Weft.
  string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" needed "${dynamic}")
  foreach(entry IN LISTS needed)
    string(REGEX REPLACE "Shared library: \\[(.*)\\]" "\\1" name "${entry}")
    if(name MATCHES "^(libc|libm|libgcc_s|libstdc\\+\\+|ld-linux|libdl|libpthread|librt|libcuda|libasan|libubsan|liblsan|libtsan|libcrypto)[.-]")
      continue()
    endif()
    if(NOT EXISTS "${PREFIX}/${LIBDIR}/${name}")
      message(FATAL_ERROR "${file} needs ${name}, which is not installed in ${PREFIX}/${LIBDIR}")
    endif()
  endforeach()
endfunction()

require_runpath("${PREFIX}/bin/weftc" "$ORIGIN/../${LIBDIR}")
if(WITH_SHIM)
  require_runpath("${PREFIX}/${LIBDIR}/libweft_nccl.so" "$ORIGIN")
endif()

# The installed compiler runs from there.
execute_process(COMMAND "${PREFIX}/bin/weftc" list RESULT_VARIABLE status OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(NOT status EQUAL 0 OR NOT out MATCHES "ring")
  message(FATAL_ERROR "installed weftc list failed (${status}):\n${out}")
endif()
# The installed weft-perf runs too, in host mode (no GPU needed): the interpreter on CPU threads,
# checked against the CPU reference.
require_runpath("${PREFIX}/bin/weft-perf" "$ORIGIN/../${LIBDIR}")
execute_process(COMMAND "${PREFIX}/bin/weft-perf" --device host --builtin ring --ranks 2
                        -b 1K -e 1K -n 1 -w 0
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0 OR NOT out MATCHES "Out of bounds values : 0 OK")
  message(FATAL_ERROR "installed weft-perf --device host failed (${status}):\n${out}")
endif()
# The Python package, where the bindings were built: it imports from the installed folder alone
# and the MSCCLang runner answers.
if(PYTHON_DIR)
  file(GLOB module "${PREFIX}/${PYTHON_DIR}/weft/_weft*.so")
  if(NOT module)
    message(FATAL_ERROR "the Python module weft._weft is not installed in ${PREFIX}/${PYTHON_DIR}/weft")
  endif()
  require_runpath("${module}" "$ORIGIN/${PYTHON_TO_LIB}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${PREFIX}/${PYTHON_DIR}" PYTHONDONTWRITEBYTECODE=1
            "${PYTHON}" -c "import weft, weft.mscclang.core; print('weft', weft.__version__)"
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0 OR NOT out MATCHES "weft [0-9]")
    message(FATAL_ERROR "the installed Python package does not import (${status}):\n${out}")
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${PREFIX}/${PYTHON_DIR}" PYTHONDONTWRITEBYTECODE=1
            "${PYTHON}" -m weft.mscclang --help
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0 OR NOT out MATCHES "MSCCLang")
    message(FATAL_ERROR "python3 -m weft.mscclang --help failed from the install (${status}):\n${out}")
  endif()
endif()
message(STATUS "installed into ${PREFIX}; RUNPATHs and bundled libraries are in place")
