# SPDX-License-Identifier: Apache-2.0
# Runs one command-line test (see tb_add_cli_test in cmake/TbHelpers.cmake) and passes only when
# the command exits with the expected status (a crash never passes) AND its output (stdout and stderr, merged) matches a regex. ctest's
# PASS_REGULAR_EXPRESSION alone ignores the exit status, so a command that crashes or fails after
# printing the expected line would pass.
#
# Usage: cmake -DCLI_TEST=<file> -P run_cli_test.cmake
# <file> is CMake code that sets COMMAND_LINE (the command and its arguments, a list), PASS_REGEX and
# EXIT_STATUS. The test comes in a file, not on this command line, so that the regex
# reaches this script byte for byte and cmake does not read the command's options as its own.
if(NOT CLI_TEST)
  message(FATAL_ERROR "run_cli_test.cmake: CLI_TEST is not set")
endif()
include("${CLI_TEST}")
if(NOT COMMAND_LINE OR NOT DEFINED PASS_REGEX OR NOT DEFINED EXIT_STATUS)
  message(FATAL_ERROR "run_cli_test.cmake: ${CLI_TEST} must set COMMAND_LINE, PASS_REGEX and EXIT_STATUS")
endif()

list(JOIN COMMAND_LINE " " shown)
message("command: ${shown}")
execute_process(COMMAND ${COMMAND_LINE} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
# The command's output as it printed it (ctest shows it with --output-on-failure / -V).
string(REGEX REPLACE "\n$" "" shown "${output}")
message("${shown}")

set(failures)
if(NOT status STREQUAL "${EXIT_STATUS}")
  # A number for an exit code, a word ("Segmentation fault", "Child aborted") for a signal.
  list(APPEND failures "the command exited with status '${status}' (want ${EXIT_STATUS})")
endif()
if(NOT output MATCHES "${PASS_REGEX}")
  list(APPEND failures "its output does not match the regex: ${PASS_REGEX}")
endif()
if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "FAIL: ${text}")
endif()
message(STATUS "PASS: exit status ${EXIT_STATUS} and the output matches")
