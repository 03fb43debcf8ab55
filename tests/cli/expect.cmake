# Runs COMMAND (a ;-list), then checks its exit code against EXIT and its combined output against
# every regular expression in MATCH (a ;-list, may be empty).
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT code STREQUAL "${EXIT}")
  message(FATAL_ERROR "exit code ${code}, expected ${EXIT}\n--- output ---\n${all}")
endif()
foreach(pattern IN LISTS MATCH)
  if(NOT all MATCHES "${pattern}")
    message(FATAL_ERROR "output does not match '${pattern}'\n--- output ---\n${all}")
  endif()
endforeach()
