# Warnings for Weft's own targets; third-party headers are included as system headers.
add_library(weft_warnings INTERFACE)
target_compile_options(weft_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion
                            -Wno-sign-conversion -Wimplicit-fallthrough>)
if(WEFT_WERROR)
  target_compile_options(weft_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
# GCC 12 at -O3 (a Release build) warns that appending `" " + std::string(...)` may copy
# overlapping bytes (-Wrestrict), inside libstdc++'s char_traits: a false positive of that
# compiler on string concatenation, which -Werror made fatal in four places; the default
# RelWithDebInfo (-O2) never raised it. Kept to GCC before 13.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(weft_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
