# Build step of tools/man: run HELP_COMMAND (a tool's --help), turn its text
# into a man page with help2man.awk, write OUT.  Fails if the tool fails or
# prints nothing, so a broken --help cannot ship an empty page.
execute_process(COMMAND ${HELP_COMMAND} OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "'${HELP_COMMAND}' failed (${rc}) or printed nothing")
endif()
string(REPLACE ";" " " HELP_COMMAND_TEXT "${HELP_COMMAND}")
file(WRITE ${OUT}.help "${help}")
execute_process(COMMAND ${AWK} -f ${SCRIPT} -v name=${NAME} -v section=1
                        -v "summary=${SUMMARY}" -v version=${VERSION} -v "aliases=${SEE_ALSO}"
                INPUT_FILE ${OUT}.help OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
file(REMOVE ${OUT}.help)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man.awk failed on the output of '${HELP_COMMAND_TEXT}'")
endif()
file(RENAME ${OUT}.tmp ${OUT})
