# `cmake --install <build> --prefix <dir>` gives two things:
#  - a folder that can be copied to GPU machines that lack the build's Debian packages: the NCCL
#    shim and the tools find the shared libraries they were linked against (Weft's own, and fmt,
#    which has no static archive in Debian) beside them, through RUNPATH;
#  - a package for the user's own builds: headers, libraries, find_package(Weft CONFIG) with the
#    imported targets Weft::dsl, Weft::compiler, Weft::runtime, Weft::algorithms (and Weft::weft,
#    the GPU runtime's C API, where CUDA was built), and pkg-config files for other build systems.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(WEFT_INSTALL_TARGETS weftc)
set_target_properties(weftc PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
if(TARGET weft-perf)
  list(APPEND WEFT_INSTALL_TARGETS weft-perf)
  set_target_properties(weft-perf PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endif()
if(TARGET weft_nccl)
  list(APPEND WEFT_INSTALL_TARGETS weft_nccl)
  set_target_properties(weft_nccl PROPERTIES INSTALL_RPATH "$ORIGIN")
endif()

install(TARGETS ${WEFT_INSTALL_TARGETS}
  RUNTIME_DEPENDENCY_SET weft_runtime_dependencies
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# The package's libraries (cmake/WeftPackage.cmake) and the interface target Weft::runtime.
get_property(WEFT_PACKAGE_TARGETS GLOBAL PROPERTY WEFT_PACKAGE_TARGETS)
install(TARGETS ${WEFT_PACKAGE_TARGETS} weft_runtime
  EXPORT WeftTargets
  RUNTIME_DEPENDENCY_SET weft_runtime_dependencies
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Copy only what a GPU machine may lack; the C and C++ runtimes and the CUDA driver belong to the
# machine, never to this folder. (Weft's own libraries are installed above.)
install(RUNTIME_DEPENDENCY_SET weft_runtime_dependencies
  PRE_INCLUDE_REGEXES "fmt" "pugixml"
  PRE_EXCLUDE_REGEXES ".*"
  DESTINATION ${CMAKE_INSTALL_LIBDIR})

# Public headers: those each package library registered (weft_install_headers), and the
# generated weft/version.h. Of the GPU runtime, the device program's headers (weft/program/, which
# the predictor's use) and the C API (weft/weft.h) are installed; the communicator, the kernel
# and the CUDA runtime are internal to it.
get_property(WEFT_INSTALLED_HEADER_DIRS GLOBAL PROPERTY WEFT_INSTALLED_HEADER_DIRS)
install(DIRECTORY ${WEFT_INSTALLED_HEADER_DIRS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft)
install(FILES ${WEFT_GENERATED_INCLUDE_DIR}/weft/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft)
set(WEFT_HAVE_C_API FALSE)
if(TARGET weft_c_api)
  set(WEFT_HAVE_C_API TRUE)
  install(TARGETS weft_c_api EXPORT WeftTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/gpu/cuda/include/weft/weft.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft)
endif()

set(WEFT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Weft)
install(EXPORT WeftTargets NAMESPACE Weft:: DESTINATION ${WEFT_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/WeftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/WeftConfig.cmake
  INSTALL_DESTINATION ${WEFT_CMAKE_DIR})
# Before 1.0 a minor release may change the API; patch releases of one minor version agree (the
# loader of algorithm libraries still asks for the exact version, which the soname carries).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/WeftConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/WeftConfig.cmake
              ${PROJECT_BINARY_DIR}/package/WeftConfigVersion.cmake
        DESTINATION ${WEFT_CMAKE_DIR})

# pkg-config: weft-dsl (what a library of algorithms needs), weft-runtime (XML, validation, the
# CPU reference executor), weft-compiler (everything a standalone program needs), weft-predict
# (topologies, the simulator, NCCL's model), weft-tuning (bands, the tuner table, the tuning
# loop).
file(RELATIVE_PATH WEFT_PC_INCLUDEDIR /root/${CMAKE_INSTALL_LIBDIR}
     /root/${CMAKE_INSTALL_INCLUDEDIR})
foreach(module IN ITEMS dsl runtime compiler predict tuning)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/weft-${module}.pc.in
                 ${PROJECT_BINARY_DIR}/package/weft-${module}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/weft-${module}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
