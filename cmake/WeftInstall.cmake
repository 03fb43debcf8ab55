# `cmake --install <build> --prefix <dir>` gives a folder that can be copied to GPU machines that
# lack the build's Debian packages: the NCCL shim and the tools find the shared libraries they
# were linked against (fmt has no static archive in Debian) beside them, through RUNPATH.
include(GNUInstallDirs)

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

# Copy only what a GPU machine may lack; the C and C++ runtimes and the CUDA driver belong to the
# machine, never to this folder.
install(RUNTIME_DEPENDENCY_SET weft_runtime_dependencies
  PRE_INCLUDE_REGEXES "fmt" "pugixml"
  PRE_EXCLUDE_REGEXES ".*"
  DESTINATION ${CMAKE_INSTALL_LIBDIR})
