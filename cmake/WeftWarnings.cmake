# Warnings for Weft's own targets; third-party headers are included as system headers.
add_library(weft_warnings INTERFACE)
target_compile_options(weft_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion
                            -Wno-sign-conversion -Wimplicit-fallthrough>)
if(WEFT_WERROR)
  target_compile_options(weft_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
