# `weftc synthesize` within a threadblock budget (WEFTC; ARGS a ;-list; OUT; BUDGET the figure
# expected; SOURCE a regex for where the budget came from): it prints the budget and where it came
# from, writes only files whose busiest rank runs at most BUDGET threadblocks (`weftc info`, each
# in the folder and, with --all, under sketches/), and its table and report.md have the column of
# what more threadblocks would gain.
include(${CMAKE_CURRENT_LIST_DIR}/synthesize_run.cmake)
if(NOT out MATCHES "threadblock budget: ${BUDGET} per rank \\(${SOURCE}")
  message(FATAL_ERROR "the budget (${BUDGET}, ${SOURCE}) is not printed\n${out}")
endif()
if(NOT out MATCHES "tbs/rank +over budget +chosen")
  message(FATAL_ERROR "the table has no over-budget column\n${out}")
endif()
file(READ ${OUT}/report.md report)
if(NOT report MATCHES "\\| with more threadblocks \\|")
  message(FATAL_ERROR "report.md has no column of what more threadblocks would gain")
endif()
synthesized_files(written)
foreach(xml IN LISTS written)
  execute_process(COMMAND ${WEFTC} info ${xml} RESULT_VARIABLE code OUTPUT_VARIABLE info
                  ERROR_VARIABLE err)
  if(NOT code EQUAL 0 OR NOT info MATCHES "threadblocks +[0-9]+ in all, at most ([0-9]+) per rank")
    message(FATAL_ERROR "weftc info ${xml} exited ${code}\n${info}${err}")
  endif()
  if(CMAKE_MATCH_1 GREATER BUDGET)
    message(FATAL_ERROR "${xml} runs ${CMAKE_MATCH_1} threadblocks per rank, over ${BUDGET}")
  endif()
endforeach()
