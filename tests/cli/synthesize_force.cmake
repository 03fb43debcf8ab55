# An earlier `weftc synthesize --all` leaves its sketches in OUT/sketches: a second run into the
# same folder refuses without --force, naming that folder, and with --force leaves only its own.
file(REMOVE_RECURSE ${OUT})
set(args synthesize -t a100-nvswitch --nodes 2 --gpus-per-node 2 -c allgather -b 64M -e 64M -o ${OUT})
execute_process(COMMAND ${WEFTC} ${args} --all RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the first run exited ${code}\n${out}${err}")
endif()
file(GLOB first ${OUT}/sketches/*.xml)
list(GET first 0 one)
file(COPY_FILE ${one} ${OUT}/sketches/stale_from_an_older_run.xml)
file(GLOB top ${OUT}/*.xml)
file(REMOVE ${top} ${OUT}/tuner.csv ${OUT}/bands.csv ${OUT}/report.md ${OUT}/report.svg)
execute_process(COMMAND ${WEFTC} ${args} RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT code EQUAL 3 OR NOT err MATCHES "sketches: already holds [0-9]+ sketch\\(es\\) from an earlier run; --force replaces them")
  message(FATAL_ERROR "a run over an earlier run's sketches did not refuse (exit ${code})\n${out}${err}")
endif()
execute_process(COMMAND ${WEFTC} ${args} --force RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the run with --force exited ${code}\n${out}${err}")
endif()
file(GLOB left ${OUT}/sketches/*.xml)
if(left)
  message(FATAL_ERROR "--force left an earlier run's sketches: ${left}")
endif()
