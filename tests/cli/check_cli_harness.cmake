# SPDX-License-Identifier: Apache-2.0
# The CLI test harness itself (run_cli_test.cmake): a command that prints the expected line passes
# only if it also exits with the expected status (0 by default); another exit status or a crash
# after the expected line fails, and so does the right status without the line.
# Usage: cmake -DRUNNER=<run_cli_test.cmake> -DWORK=<scratch dir> -P check_cli_harness.cmake
# (The shell scripts below separate commands by newlines: ';' would split a CMake argument.)
file(MAKE_DIRECTORY "${WORK}")
set(failures)

# run_case(NAME EXIT_STATUS WANT_PASS WANT_MESSAGE command...): runs the harness on the command
# with that expected exit status; WANT_MESSAGE must occur in the harness output.
function(run_case name exit_status want_pass want_message)
  list(JOIN ARGN "]==] [==[" command)
  file(WRITE "${WORK}/${name}.cmake" "set(EXIT_STATUS ${exit_status})
set(PASS_REGEX [==[records: [0-9]+, valid]==])
set(COMMAND_LINE [==[${command}]==])
")
  execute_process(COMMAND ${CMAKE_COMMAND} -DCLI_TEST=${WORK}/${name}.cmake -P ${RUNNER}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(want_pass)
    if(NOT rc STREQUAL "0")
      set(bad "harness failed, want pass")
    endif()
  elseif(rc STREQUAL "0")
    set(bad "harness passed, want fail")
  endif()
  string(FIND "${out}" "${want_message}" at)
  if(at EQUAL -1)
    set(bad "${bad} (no '${want_message}' in its output)")
  endif()
  if(bad)
    message("${name}: ${bad}; harness output:\n${out}")
    set(failures ${failures} ${name} PARENT_SCOPE)
  else()
    message("${name}: ok")
  endif()
endfunction()

run_case(exit_0_and_match 0 ON "PASS: exit status 0"
  sh -c "echo 'records: 3, valid: 3'")
run_case(exit_3_after_match 0 OFF "exited with status '3' (want 0)"
  sh -c "echo 'records: 3, valid: 3'\nexit 3")
run_case(crash_after_match 0 OFF "exited with status 'Segmentation fault' (want 0)"
  sh -c "echo 'records: 3, valid: 3'\nkill -SEGV $$")
run_case(exit_0_no_match 0 OFF "does not match the regex"
  sh -c "echo 'records: none'")
# An expected failure (EXIT_STATUS 2) passes only with that status.
run_case(want_2_got_2 2 ON "PASS: exit status 2"
  sh -c "echo 'records: 3, valid: 3'\nexit 2")
run_case(want_2_got_0 2 OFF "exited with status '0' (want 2)"
  sh -c "echo 'records: 3, valid: 3'")
run_case(want_2_got_crash 2 OFF "exited with status 'Segmentation fault' (want 2)"
  sh -c "echo 'records: 3, valid: 3'\nkill -SEGV $$")

if(failures)
  message(FATAL_ERROR "FAIL: ${failures}")
endif()
