# A user's own algorithms join the contest of `weftc synthesize` (--candidates DIR): a file that
# fits the collective and the machine contends beside the sketches (report.md predicts it), and a
# file that does not is listed as left out with why.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${WEFTC} synthesize -t h100-nvswitch --gpus-per-node 4 -c allreduce
                        -b 1K -e 64K --candidates ${CANDIDATES} -o ${OUT}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "synthesize --candidates exited ${code}\n${out}${err}")
endif()
file(READ ${OUT}/report.md report)
if(NOT report MATCHES "\\| ring_allreduce_4r\\.xml \\|")
  message(FATAL_ERROR "report.md does not predict the user's file ring_allreduce_4r.xml:\n${report}")
endif()
if(NOT report MATCHES "pair_allreduce\\.xml: allreduce on 2 ranks, not allreduce on 4 ranks")
  message(FATAL_ERROR "report.md does not list the 2-rank file as left out, with why:\n${report}")
endif()
message(STATUS "the user's file contended, the one that does not fit was left out and named")
