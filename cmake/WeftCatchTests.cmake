# weft_catch_discover_tests(TARGET PREFIX <prefix> [PROPERTIES <ctest properties>...])
#
# Registers every Catch2 test case of TARGET as one CTest test named "<prefix>: <test case>".
# Catch2's own catch_discover_tests loses a trailing space of the prefix (it travels through a
# `cmake -D` argument) and splits test case names at `;` (it turns the listing into a CMake
# list), so that some registered tests select nothing and pass with "No tests ran". This one
# passes its parameters through a generated file, reads the listing line by line, writes every
# name as a bracket argument, and runs each test with `--warn NoTests`, so that a selection that
# matches nothing fails instead of passing. Names Catch2 cannot select exactly (a leading `~`, `-` or
# `#`, a `*` at either end) stop the build with the test's name.
#
# Every call also records TARGET and PREFIX in the global property WEFT_CATCH_SUITES, which the
# registration check (tests/registration_check.cmake) compares with what CTest runs.
set(WEFT_CATCH_ADD_TESTS_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/WeftCatchAddTests.cmake"
    CACHE INTERNAL "The script that lists a Catch2 binary's test cases and writes its CTest file")

function(weft_catch_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PREFIX" "PROPERTIES")
  if(NOT arg_PREFIX)
    message(FATAL_ERROR "weft_catch_discover_tests(${target}): PREFIX is required")
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}")
  set(parameters "${dir}/${target}-catch-parameters.cmake")
  set(tests_file "${dir}/${target}-catch-tests.cmake")
  # Properties are written one bracket argument each, so values with spaces or `;` survive.
  set(property_args "")
  foreach(word IN LISTS arg_PROPERTIES)
    string(APPEND property_args " [==[${word}]==]")
  endforeach()
  file(GENERATE OUTPUT "${parameters}" CONTENT
"set(executable [==[$<TARGET_FILE:${target}>]==])
set(prefix [==[${arg_PREFIX}]==])
set(working_directory [==[${dir}]==])
set(tests_file [==[${tests_file}]==])
set(property_args [===[${property_args}]===])
")
  add_custom_command(TARGET ${target} POST_BUILD
    BYPRODUCTS "${tests_file}"
    COMMAND "${CMAKE_COMMAND}" -D "WEFT_CATCH_PARAMETERS=${parameters}"
            -P "${WEFT_CATCH_ADD_TESTS_SCRIPT}"
    VERBATIM)

  set(include_file "${dir}/${target}-catch-include.cmake")
  file(WRITE "${include_file}"
    "if(EXISTS [==[${tests_file}]==])\n"
    "  include([==[${tests_file}]==])\n"
    "else()\n"
    "  add_test([==[${arg_PREFIX}: ${target} was not built]==] ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
  set_property(GLOBAL APPEND PROPERTY WEFT_CATCH_SUITES "${target}|${arg_PREFIX}")
endfunction()
