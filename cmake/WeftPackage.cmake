# The libraries Weft installs as a CMake package (find_package(Weft), cmake/WeftInstall.cmake).
#
# weft_add_package_library(TARGET EXPORT_NAME SOURCES...) adds a shared library that is also
# Weft::EXPORT_NAME, both here and for users of the installed package. Shared, not static, so that
# weftc, the algorithm libraries it loads (which link Weft::dsl) and the user's programs all use
# one copy: a Registry or a Program made by one is safe to use in another. The soname carries the
# exact version (libweft_dsl.so.0.1.0): before 1.0 any release may change the ABI, and a library
# built against another version then cannot bind to this one by accident.
include(GNUInstallDirs)

set(WEFT_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.h.in ${WEFT_GENERATED_INCLUDE_DIR}/weft/version.h
               @ONLY)

function(weft_add_package_library target export_name)
  add_library(${target} SHARED ${ARGN})
  add_library(Weft::${export_name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${export_name}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION}
    # Installed side by side: each finds the others (and fmt, where it is copied) beside itself.
    INSTALL_RPATH "$ORIGIN")
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # Its headers are C++20 (<=>, concepts, std::span): a user's target that links it compiles as
  # C++20 at least, whatever its compiler's default.
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_property(GLOBAL APPEND PROPERTY WEFT_PACKAGE_TARGETS ${target})
endfunction()

# weft_install_headers(TARGET DIR): DIR (…/include/weft/<module>) holds TARGET's public headers;
# they are installed as weft/<module>/ and each is compiled on its own against the install
# (tests/install), so a header that forgets an include fails there.
function(weft_install_headers target dir)
  get_filename_component(module ${dir} NAME)
  set_property(GLOBAL APPEND PROPERTY WEFT_INSTALLED_HEADER_DIRS "${dir}")
  set_property(GLOBAL APPEND PROPERTY WEFT_INSTALLED_HEADER_MODULES "${module}")
endfunction()
