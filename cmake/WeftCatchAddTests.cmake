# Run after a Catch2 test binary is linked (see WeftCatchTests.cmake): lists its test cases and
# writes the CTest file that registers each as "<prefix>: <name>".
#   cmake -D WEFT_CATCH_PARAMETERS=<generated parameters file> -P WeftCatchAddTests.cmake
# The listing is read line by line, never as a CMake list: test case names may hold `;`, `[` and
# `]`, which a list would split or pair up. Every test may end as skipped: WEFT_TEST_SKIP_EXIT
# tells tests/support/skip.h the code (77) that CTest reads as Skipped.
include("${WEFT_CATCH_PARAMETERS}")
include("${CMAKE_CURRENT_LIST_DIR}/WeftCatchNames.cmake")

execute_process(
  COMMAND "${executable}" --list-test-names-only
  OUTPUT_VARIABLE listing
  ERROR_VARIABLE listing_errors
  RESULT_VARIABLE result
  WORKING_DIRECTORY "${working_directory}")
# Catch2 v2 exits with the number of test cases listed (capped), so only a failure to start or a
# crash is an error here.
if(NOT result MATCHES "^[0-9]+$")
  message(FATAL_ERROR "${executable} --list-test-names-only failed (${result}):\n${listing_errors}")
endif()

weft_catch_split_lines("${listing}" names)
set(script "")
set(count 0)
foreach(index RANGE ${names_count})
  if(index EQUAL names_count)
    break()
  endif()
  set(name "${names_${index}}")
  weft_catch_check_selectable("${name}" problem)
  if(problem)
    message(FATAL_ERROR "${executable}: test case '${name}' ${problem}; rename it")
  endif()
  weft_catch_selector("${name}" selector)
  string(APPEND script
    "add_test([==[${prefix}: ${name}]==] [==[${executable}]==] [==[${selector}]==] --warn NoTests)\n"
    "set_tests_properties([==[${prefix}: ${name}]==] PROPERTIES WORKING_DIRECTORY "
    "[==[${working_directory}]==] SKIP_RETURN_CODE 77 ENVIRONMENT_MODIFICATION "
    "WEFT_TEST_SKIP_EXIT=set:77${property_args})\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${executable} lists no test cases")
endif()
file(WRITE "${tests_file}" "${script}")
