# Helpers shared by the Catch2 registration (WeftCatchAddTests.cmake) and its check
# (tests/registration_check.cmake): both must read listings and build selectors alike.

# weft_catch_split_lines(TEXT OUT): the non-empty lines of TEXT as OUT_0 .. OUT_<n-1> and their
# number as OUT_count, in the caller's scope. No CMake list is involved, so `;`, `[` and `]`
# inside a line stay where they are.
function(weft_catch_split_lines text out)
  set(n 0)
  set(rest "${text}")
  while(NOT rest STREQUAL "")
    string(FIND "${rest}" "\n" newline)
    if(newline EQUAL -1)
      set(line "${rest}")
      set(rest "")
    else()
      string(SUBSTRING "${rest}" 0 ${newline} line)
      math(EXPR next "${newline} + 1")
      string(SUBSTRING "${rest}" ${next} -1 rest)
    endif()
    string(REPLACE "\r" "" line "${line}")
    if(NOT line STREQUAL "")
      set(${out}_${n} "${line}" PARENT_SCOPE)
      math(EXPR n "${n} + 1")
    endif()
  endwhile()
  set(${out}_count ${n} PARENT_SCOPE)
endfunction()

# weft_catch_selector(NAME OUT): the command-line test spec that selects exactly the test case
# NAME. Catch2 v2 reads `\` as an escape and `,` `[` `]` `"` as syntax.
function(weft_catch_selector name out)
  set(selector "${name}")
  foreach(special "\\" "," "[" "]" "\"")
    string(REPLACE "${special}" "\\${special}" selector "${selector}")
  endforeach()
  set(${out} "${selector}" PARENT_SCOPE)
endfunction()

# weft_catch_check_selectable(NAME OUT): why NAME cannot be selected exactly on Catch2's command
# line, or empty.
function(weft_catch_check_selectable name out)
  set(problem "")
  if(name MATCHES "^[~#-]")
    set(problem "starts with '~', '#' or '-', which Catch2 reads as an exclusion, a file tag or an option")
  elseif(name MATCHES "^\\*" OR name MATCHES "\\*$")
    set(problem "starts or ends with '*', which Catch2 reads as a wildcard")
  elseif(name MATCHES "^[ \t]" OR name MATCHES "[ \t]$")
    set(problem "starts or ends with white space, which Catch2 trims from a test spec")
  endif()
  set(${out} "${problem}" PARENT_SCOPE)
endfunction()
