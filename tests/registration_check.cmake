# Checks that CTest runs every Catch2 test case of every test binary, each selected by a spec
# that names exactly that case.
#   cmake -DCTEST_COMMAND=ctest -DBUILD_DIR=<build> -DSUITES=<exe|prefix>,<exe|prefix>,...
#         -P registration_check.cmake
# For each binary: the cases its `--list-test-names-only` prints are compared with the tests
# `ctest -N` would run with that binary; a case that is missing, registered twice, registered
# under another name, or a registered test that selects no case fails the check.
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/WeftCatchNames.cmake")

execute_process(
  COMMAND "${CTEST_COMMAND}" -N --show-only=json-v1
  WORKING_DIRECTORY "${BUILD_DIR}"
  OUTPUT_VARIABLE json
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "ctest -N --show-only=json-v1 failed in ${BUILD_DIR} (${result})")
endif()

# Every registered test as "<executable>\t<selector>\t<name>\n" lines, one string to search.
string(JSON tests_json GET "${json}" tests)
string(JSON test_count LENGTH "${tests_json}")
set(registered "\n")
math(EXPR last "${test_count} - 1")
foreach(k RANGE ${last})
  string(JSON test GET "${tests_json}" ${k})
  string(JSON name GET "${test}" name)
  string(JSON argc ERROR_VARIABLE no_command LENGTH "${test}" command)
  if(no_command OR argc LESS 2)
    continue()
  endif()
  string(JSON executable GET "${test}" command 0)
  string(JSON selector GET "${test}" command 1)
  string(APPEND registered "${executable}\t${selector}\t${name}\n")
endforeach()

set(failures "")
set(summary "")
string(REPLACE "," ";" suites "${SUITES}")
foreach(suite IN LISTS suites)
  string(FIND "${suite}" "|" bar)
  string(SUBSTRING "${suite}" 0 ${bar} executable)
  math(EXPR after "${bar} + 1")
  string(SUBSTRING "${suite}" ${after} -1 prefix)
  if(NOT EXISTS "${executable}")
    string(APPEND failures "${executable}: not built\n")
    continue()
  endif()
  execute_process(COMMAND "${executable}" --list-test-names-only
                  OUTPUT_VARIABLE listing RESULT_VARIABLE listed)
  if(NOT listed MATCHES "^[0-9]+$")
    string(APPEND failures "${executable} --list-test-names-only failed (${listed})\n")
    continue()
  endif()
  weft_catch_split_lines("${listing}" cases)

  # Tests registered with this binary.
  set(mine "")
  set(remaining "${registered}")
  set(registered_count 0)
  while(TRUE)
    string(FIND "${remaining}" "\n${executable}\t" at)
    if(at EQUAL -1)
      break()
    endif()
    math(EXPR start "${at} + 1")
    string(SUBSTRING "${remaining}" ${start} -1 remaining)
    string(FIND "${remaining}" "\n" end)
    string(SUBSTRING "${remaining}" 0 ${end} line)
    string(SUBSTRING "${remaining}" ${end} -1 remaining)
    string(APPEND mine "${line}\n")
    math(EXPR registered_count "${registered_count} + 1")
  endwhile()

  set(matched 0)
  foreach(index RANGE ${cases_count})
    if(index EQUAL cases_count)
      break()
    endif()
    set(name "${cases_${index}}")
    weft_catch_selector("${name}" selector)
    set(expected "${executable}\t${selector}\t${prefix}: ${name}\n")
    string(FIND "\n${mine}" "\n${expected}" first)
    string(FIND "\n${mine}" "\n${expected}" again REVERSE)
    if(first EQUAL -1)
      string(APPEND failures "${prefix}: '${name}' is not registered with CTest, or not under that name\n")
    elseif(NOT first EQUAL again)
      string(APPEND failures "${prefix}: '${name}' is registered more than once\n")
    else()
      math(EXPR matched "${matched} + 1")
    endif()
  endforeach()
  if(NOT registered_count EQUAL cases_count)
    string(APPEND failures
      "${prefix}: the binary lists ${cases_count} test cases, CTest runs ${registered_count}\n")
  endif()
  string(APPEND summary "  ${prefix}: ${cases_count} test cases, ${registered_count} CTest tests, ${matched} matched\n")
endforeach()

message("${summary}")
if(failures)
  message(FATAL_ERROR "Catch2 test cases and CTest tests disagree:\n${failures}")
endif()
message("every Catch2 test case runs under CTest")
