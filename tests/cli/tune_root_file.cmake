# A user's broadcast file for root 2 (in place, as the library writes it) joins `weftc tune` and wins (nothing else contends): its
# proof is for the root the file names, so it is written, not refused as wrong for root 0.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${WEFTC} compile broadcast_chain --ranks 4 --root 2 -o ${OUT}/root2.xml
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "compile broadcast_chain --root 2 exited ${code}\n${out}${err}")
endif()
execute_process(COMMAND ${WEFTC} tune -t h100-nvswitch --ranks 4 -c broadcast --no-library
                        --no-nccl --in-place --xml ${OUT}/root2.xml -b 1K -e 64K -o ${OUT}/tuned
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "1 proved")
  message(FATAL_ERROR "tune did not prove and write the root-2 file (exit ${code})\n${out}${err}")
endif()
file(GLOB written ${OUT}/tuned/*.xml)
if(NOT written)
  message(FATAL_ERROR "no XML written to ${OUT}/tuned\n${out}")
endif()
