# Runs `weftc synthesize` (WEFTC; ARGS a ;-list) into OUT and reads its table: at every size of
# SIZES (a ;-list of the table's size labels, 64M;1G) the chosen algorithm's % of the bound must be
# at least the matching entry of LEAST (a ;-list of percents). Fails naming the size, the figure
# and the chosen algorithm, or a size the table does not have.
include(${CMAKE_CURRENT_LIST_DIR}/synthesize_run.cmake)
string(REPLACE "\n" ";" lines "${out}")
list(LENGTH SIZES count)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  list(GET SIZES ${i} size)
  list(GET LEAST ${i} least)
  set(found "")
  foreach(line IN LISTS lines)
    # "     64M        302.0        314.7     96%  ...  synth_rails_direct_p64_c4_nic5 Simple"
    if(line MATCHES "^ *${size} .* ([0-9]+)% .* ([A-Za-z0-9_]+ (Simple|LL|LL128))$")
      set(found "${CMAKE_MATCH_1}")
      set(chosen "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  if(found STREQUAL "")
    message(FATAL_ERROR "no row for ${size} in the table\n${out}")
  endif()
  if(found LESS least)
    message(FATAL_ERROR "${size}: ${chosen} reaches ${found}% of the bound, less than ${least}%\n${out}")
  endif()
  message(STATUS "${size}: ${chosen} at ${found}% of the bound (at least ${least}%)")
endforeach()
