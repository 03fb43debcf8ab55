# The first step of the synthesize scripts (included): runs `weftc synthesize` (WEFTC; ARGS a
# ;-list) into a fresh OUT and fails unless it exits 0; leaves its output in `out` and `err`.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${WEFTC} synthesize ${ARGS} -o ${OUT} RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "weftc synthesize exited ${code}\n${out}${err}")
endif()

# Every XML file the run wrote under OUT (its sketches/ too, with --all), into `var`; fails when
# there is none.
function(synthesized_files var)
  file(GLOB_RECURSE found ${OUT}/*.xml)
  if(NOT found)
    message(FATAL_ERROR "no XML file in ${OUT}\n${out}")
  endif()
  set(${var} ${found} PARENT_SCOPE)
endfunction()
