# Runs COMMAND and checks it as expect.cmake does, then the folder of pass dumps it wrote: DIR must
# hold exactly the files FILES (a ;-list of names), and where COMPARE is given, DIR/COMPARE must be
# byte for byte the file COMPARE_WITH. DIR is removed first, so that files left by an earlier run
# cannot pass.
file(REMOVE_RECURSE "${DIR}")
include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)
file(GLOB written RELATIVE "${DIR}" "${DIR}/*")
list(SORT written)
set(expected ${FILES})
list(SORT expected)
if(NOT written STREQUAL expected)
  message(FATAL_ERROR "${DIR} holds '${written}', expected '${expected}'\n--- output ---\n${all}")
endif()
if(COMPARE)
  file(READ "${DIR}/${COMPARE}" dumped)
  file(READ "${COMPARE_WITH}" output)
  if(NOT dumped STREQUAL output)
    message(FATAL_ERROR "${DIR}/${COMPARE} differs from ${COMPARE_WITH}")
  endif()
endif()
