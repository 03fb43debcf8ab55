# Weft as a package, as a user outside its tree uses it: install the build into PREFIX, build
# examples/user-algorithms (a CMake project of its own) against the install with find_package(Weft),
# and the CMakeLists.txt that docs/dsl.md and the README show, verbatim,
# load its library into the installed weftc, compile and prove its algorithm, and run its
# standalone program; then the same library built by hand with pkg-config; a program of the
# user's that links the predictor (examples/predict: a topology loaded, an algorithm simulated,
# its table printed), by find_package and by pkg-config; every installed public header compiled
# on its own; and where CUDA was built, a C program against Weft::weft.
#
# Arguments: BUILD_DIR PREFIX WORK SOURCE_DIR CXX C GENERATOR LIBDIR SANITIZE_FLAGS WITH_C_API
file(REMOVE_RECURSE "${PREFIX}" "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "${what} failed (${status}): ${command}\n${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}")
foreach(file IN ITEMS "${LIBDIR}/cmake/Weft/WeftConfig.cmake"
                      "${LIBDIR}/cmake/Weft/WeftConfigVersion.cmake"
                      "${LIBDIR}/pkgconfig/weft-dsl.pc" "include/weft/version.h"
                      "include/weft/dsl/dsl.h" "include/weft/compiler/compiler.h"
                      "${LIBDIR}/pkgconfig/weft-predict.pc" "${LIBDIR}/pkgconfig/weft-tuning.pc"
                      "include/weft/predict/simulator.h" "include/weft/tuning/tune.h")
  if(NOT EXISTS "${PREFIX}/${file}")
    message(FATAL_ERROR "the install lacks ${file}")
  endif()
endforeach()

# 1. The user's project, configured as its README says: nothing but CMAKE_PREFIX_PATH.
set(user_flags "")
if(SANITIZE_FLAGS)
  set(user_flags "-DCMAKE_CXX_FLAGS=${SANITIZE_FLAGS}" "-DCMAKE_C_FLAGS=${SANITIZE_FLAGS}")
endif()
run("configuring examples/user-algorithms against the install"
    "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/user-algorithms" -B "${WORK}/user" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${PREFIX}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF ${user_flags})
if(NOT run_output MATCHES "Configuring done")
  message(FATAL_ERROR "configure said:\n${run_output}")
endif()
run("building the user's project" "${CMAKE_COMMAND}" --build "${WORK}/user")

# One copy of the DSL in weftc's process: the user's library names the installed libweft_dsl.so
# (the one weftc has loaded) and holds no DSL code of its own.
run("readelf" readelf -d "${WORK}/user/libmy_algorithms.so")
if(NOT run_output MATCHES "NEEDED[^\n]*\\[libweft_dsl\\.so\\.[0-9]")
  message(FATAL_ERROR "libmy_algorithms.so does not link libweft_dsl.so:\n${run_output}")
endif()
run("nm" nm -D --defined-only "${WORK}/user/libmy_algorithms.so")
if(run_output MATCHES "_ZN4weft3dsl8Registry3add")
  message(FATAL_ERROR "libmy_algorithms.so carries a copy of the DSL (Registry::add):\n${run_output}")
endif()

set(weftc "${PREFIX}/bin/weftc")
run("weftc compile --load (the user's library)" "${weftc}" compile
    --load "${WORK}/user/libmy_algorithms.so" my_allgather_reverse_ring --ranks 6
    -o "${WORK}/reverse_ring.xml")
run("weftc verify (the user's algorithm)" "${weftc}" verify "${WORK}/reverse_ring.xml")
if(NOT run_output MATCHES " 0 fail")
  message(FATAL_ERROR "weftc verify said:\n${run_output}")
endif()
run("the user's standalone program" "${WORK}/user/my_standalone" "${WORK}/star.xml" 5)
run("weftc verify (the standalone program's algorithm)" "${weftc}" verify "${WORK}/star.xml")

# The user's programs use the installed libraries, not the build tree's.
run("ldd" ldd "${WORK}/user/my_standalone")
string(REGEX MATCHALL "libweft_[a-z]+\\.so[^ ]* => [^ ]+" resolved "${run_output}")
if(NOT resolved)
  message(FATAL_ERROR "my_standalone links no Weft library:\n${run_output}")
endif()
foreach(entry IN LISTS resolved)
  if(NOT entry MATCHES " => ${PREFIX}/${LIBDIR}/")
    message(FATAL_ERROR "my_standalone does not use the installed libraries (${entry}):\n${run_output}")
  endif()
endforeach()

# 1b. The CMakeLists.txt that docs/dsl.md shows, taken from the page verbatim, and the README's
#     find_package lines in the least project around them: both build against the install with
#     nothing the page does not say (no C++ standard set by the user; the targets carry C++20).
file(READ "${SOURCE_DIR}/docs/dsl.md" page)
string(FIND "${page}" "The whole `CMakeLists.txt`" at)
if(at EQUAL -1)
  message(FATAL_ERROR "docs/dsl.md no longer shows a whole CMakeLists.txt ('The whole `CMakeLists.txt`')")
endif()
string(SUBSTRING "${page}" ${at} -1 page)
if(NOT page MATCHES "```cmake\n([^`]*)```")
  message(FATAL_ERROR "docs/dsl.md: no ```cmake block after 'The whole `CMakeLists.txt`'")
endif()
file(WRITE "${WORK}/docs-dsl/CMakeLists.txt" "${CMAKE_MATCH_1}")
file(READ "${SOURCE_DIR}/README.md" readme)
if(NOT readme MATCHES "```cmake\n(find_package\\(Weft[^`]*)```")
  message(FATAL_ERROR "README.md: no ```cmake block starting with find_package(Weft")
endif()
file(WRITE "${WORK}/docs-readme/CMakeLists.txt"
     "cmake_minimum_required(VERSION 3.25)\nproject(readme LANGUAGES CXX)\n"
     "add_library(my_algorithms MODULE my_algorithms.cpp)\n${CMAKE_MATCH_1}")
foreach(snippet IN ITEMS docs-dsl docs-readme)
  file(COPY "${SOURCE_DIR}/examples/user-algorithms/my_algorithms.cpp"
            "${SOURCE_DIR}/examples/user-algorithms/standalone.cpp" DESTINATION "${WORK}/${snippet}")
  run("configuring the ${snippet} snippet against the install"
      "${CMAKE_COMMAND}" -S "${WORK}/${snippet}" -B "${WORK}/${snippet}/build" -G "${GENERATOR}"
      "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${PREFIX}" -DCMAKE_BUILD_TYPE=Release
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF ${user_flags})
  run("building the ${snippet} snippet" "${CMAKE_COMMAND}" --build "${WORK}/${snippet}/build")
endforeach()
run("weftc list --load (the docs' snippet)" "${PREFIX}/bin/weftc" list
    --load "${WORK}/docs-dsl/build/libmy_algorithms.so")
if(NOT run_output MATCHES "my_allgather_reverse_ring")
  message(FATAL_ERROR "weftc list --load did not show the snippet's algorithm:\n${run_output}")
endif()

# 2. The same library built without CMake, from the pkg-config file.
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${LIBDIR}/pkgconfig")
run("pkg-config weft-dsl" "${PKG_CONFIG}" --cflags --libs weft-dsl)
string(STRIP "${run_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(sanitize UNIX_COMMAND "${SANITIZE_FLAGS}")
run("building the user's library with pkg-config flags" "${CXX}" -std=c++20 -shared -fPIC ${sanitize}
    "${SOURCE_DIR}/examples/user-algorithms/my_algorithms.cpp" -o "${WORK}/libmine.so" ${pc_flags})
run("weftc list --load (the pkg-config build)" "${weftc}" list --load "${WORK}/libmine.so")
if(NOT run_output MATCHES "my_allgather_reverse_ring")
  message(FATAL_ERROR "weftc list --load did not show the library's algorithm:\n${run_output}")
endif()

# 3. The predictor from a program of the user's: examples/predict against the install, run on a
#    4-rank ring on the h100-nvswitch preset. Its table must hold a prediction for every size,
#    and the same program built with pkg-config's flags must print the same table.
run("configuring examples/predict against the install"
    "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/predict" -B "${WORK}/predict" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${PREFIX}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF ${user_flags})
run("building examples/predict" "${CMAKE_COMMAND}" --build "${WORK}/predict")
set(ring "${SOURCE_DIR}/tests/data/xml/ring_allreduce_4r.xml")
run("predict_sizes (find_package build)" "${WORK}/predict/predict_sizes" "${ring}" h100-nvswitch)
set(predicted "${run_output}")
string(REGEX MATCHALL "
 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+" rows "${predicted}")
list(LENGTH rows row_count)
if(NOT predicted MATCHES "h100-nvswitch \\(4 ranks\\)" OR NOT row_count EQUAL 10)
  message(FATAL_ERROR "predict_sizes printed ${row_count} rows, not 10:\n${predicted}")
endif()
run("pkg-config weft-predict" "${PKG_CONFIG}" --cflags --libs weft-predict)
string(STRIP "${run_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run("building examples/predict with pkg-config flags" "${CXX}" -std=c++20 ${sanitize}
    "${SOURCE_DIR}/examples/predict/predict_sizes.cpp" -o "${WORK}/predict_sizes_pc" ${pc_flags})
run("predict_sizes (pkg-config build)" "${WORK}/predict_sizes_pc" "${ring}" h100-nvswitch)
if(NOT run_output STREQUAL predicted)
  message(FATAL_ERROR "the pkg-config build printed:\n${run_output}\nthe CMake build:\n${predicted}")
endif()
run("pkg-config weft-tuning" "${PKG_CONFIG}" --cflags --libs weft-tuning)

# 4. Every installed public header compiles on its own (included first and alone, twice), with
#    the warnings Weft builds with: a header that relies on what its includer included first fails
#    here.
file(GLOB_RECURSE headers RELATIVE "${PREFIX}/include" "${PREFIX}/include/weft/*.h")
list(LENGTH headers header_count)
if(header_count LESS 40)
  message(FATAL_ERROR "only ${header_count} headers installed under ${PREFIX}/include/weft")
endif()
set(sources "")
foreach(header IN LISTS headers)
  string(MAKE_C_IDENTIFIER "${header}" unit)
  file(WRITE "${WORK}/headers/${unit}.cpp" "#include \"${header}\"\n#include \"${header}\"\n")
  list(APPEND sources "${unit}.cpp")
endforeach()
string(REPLACE ";" " " sources "${sources}")
file(WRITE "${WORK}/headers/CMakeLists.txt" "cmake_minimum_required(VERSION 3.25)
project(weft_headers LANGUAGES CXX)
find_package(Weft CONFIG REQUIRED)
add_library(each_header OBJECT ${sources})
target_link_libraries(each_header PRIVATE Weft::predict Weft::tuning Weft::compiler
                      Weft::algorithms)
target_compile_options(each_header PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                       -Wno-sign-conversion -Werror)
")
run("configuring the header check"
    "${CMAKE_COMMAND}" -S "${WORK}/headers" -B "${WORK}/headers/build" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run("compiling each installed header on its own (${header_count})"
    "${CMAKE_COMMAND}" --build "${WORK}/headers/build" -j 2)

# 5. The GPU runtime's C API: a C program links Weft::weft and checks the library's version
#    against its header's, and that weftCommInitRank gives up on a rendezvous no rank 0 serves
#    after WEFT_BOOTSTRAP_TIMEOUT_S, or the config's bootstrapTimeoutSeconds, not after the
#    default minute (no GPU needed for any of that: the rendezvous comes first).
if(WITH_C_API)
  file(WRITE "${WORK}/c_api/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.25)
project(weft_c_api_user LANGUAGES C)
find_package(Weft CONFIG REQUIRED)
add_executable(c_api_version main.c)
target_link_libraries(c_api_version PRIVATE Weft::weft)
]=])
  file(WRITE "${WORK}/c_api/main.c" [=[
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "weft/weft.h"
static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
/* Rank 1 of 2 at a rendezvous nobody serves: fails, within `within` seconds. */
static int gives_up(const weftCommConfig_t* config, double within, const char* how) {
  char rendezvous[64];
  if (weftMakeRendezvous(rendezvous, sizeof rendezvous) != weftSuccess) return 0;
  weftComm_t comm = NULL;
  const double start = seconds();
  const weftResult_t result = weftCommInitRank(&comm, 2, 1, rendezvous, config);
  const double took = seconds() - start;
  if (result == weftSuccess || comm != NULL || took > within) {
    fprintf(stderr, "%s: weftCommInitRank returned %d after %.1f s\n", how, (int)result, took);
    return 0;
  }
  return 1;
}
int main(void) {
  int version = 0;
  if (weftGetVersion(&version) != weftSuccess || version != WEFT_VERSION_CODE) {
    fprintf(stderr, "libweft.so says %d, weft.h says %d\n", version, WEFT_VERSION_CODE);
    return 1;
  }
  char rendezvous[64];
  if (weftMakeRendezvous(rendezvous, sizeof rendezvous) != weftSuccess ||
      strncmp(rendezvous, "unix:weft-", 10) != 0 ||
      weftMakeRendezvous(rendezvous, 8) != weftInvalidArgument) {
    fprintf(stderr, "weftMakeRendezvous: '%s'\n", rendezvous);
    return 1;
  }
  char reason[512] = "";
  weftCommConfig_t config = WEFT_COMM_CONFIG_INITIALIZER;
  config.errorBuffer = reason;
  config.errorBufferSize = sizeof reason;
  setenv("WEFT_BOOTSTRAP_TIMEOUT_S", "0.5", 1);
  if (!gives_up(&config, 5.0, "WEFT_BOOTSTRAP_TIMEOUT_S=0.5")) return 1;
  unsetenv("WEFT_BOOTSTRAP_TIMEOUT_S");
  config.bootstrapTimeoutSeconds = 0.5;
  if (!gives_up(&config, 5.0, "bootstrapTimeoutSeconds = 0.5")) return 1;
  if (strstr(reason, "rank 1") == NULL) {
    fprintf(stderr, "weftCommInitRank's reason does not name the rank: '%s'\n", reason);
    return 1;
  }
  setenv("WEFT_BOOTSTRAP_TIMEOUT_S", "soon", 1);
  config.bootstrapTimeoutSeconds = 0;
  if (weftCommInitRank(&(weftComm_t){NULL}, 2, 1, "unix:weft-x", &config) !=
          weftInvalidArgument ||
      strstr(reason, "WEFT_BOOTSTRAP_TIMEOUT_S") == NULL) {
    fprintf(stderr, "a malformed WEFT_BOOTSTRAP_TIMEOUT_S: '%s'\n", reason);
    return 1;
  }
  printf("%s\n", weftGetErrorString(weftTimeout));
  return 0;
}
]=])
  run("configuring a C program against Weft::weft"
      "${CMAKE_COMMAND}" -S "${WORK}/c_api" -B "${WORK}/c_api/build" -G "${GENERATOR}"
      "-DCMAKE_C_COMPILER=${C}" "-DCMAKE_PREFIX_PATH=${PREFIX}" ${user_flags})
  run("building it" "${CMAKE_COMMAND}" --build "${WORK}/c_api/build")
  run("running it" "${WORK}/c_api/build/c_api_version")
  if(NOT run_output MATCHES "weftTimeout")
    message(FATAL_ERROR "the C program said:\n${run_output}")
  endif()
endif()
message(STATUS "the user's project built against the install in ${PREFIX}; its algorithms "
               "compiled, loaded and proved; the predictor linked and simulated; "
               "${header_count} installed headers compiled on their own")
