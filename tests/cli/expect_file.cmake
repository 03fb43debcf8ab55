# Runs COMMAND and checks it as expect.cmake does, then checks the file it wrote: FILE must exist
# and match every regular expression in FILE_MATCH (a ;-list). FILE is removed first, so that a
# file left by an earlier run cannot pass.
file(REMOVE "${FILE}")
include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${FILE} was not written\n--- output ---\n${all}")
endif()
file(READ "${FILE}" content)
foreach(pattern IN LISTS FILE_MATCH)
  if(NOT content MATCHES "${pattern}")
    message(FATAL_ERROR "${FILE} does not match '${pattern}'\n--- ${FILE} ---\n${content}")
  endif()
endforeach()
