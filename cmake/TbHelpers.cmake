# SPDX-License-Identifier: Apache-2.0
# tb_add_engine_layer(NAME SOURCES ... DEPS ...): one static library per engine layer,
# target tb_engine_<name>, alias tb::<name>. Engine layers never link Qt.
function(tb_add_engine_layer NAME)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(tb_engine_${NAME} STATIC ${A_SOURCES})
  add_library(tb::${NAME} ALIAS tb_engine_${NAME})
  target_link_libraries(tb_engine_${NAME} PUBLIC tb_common_cfg ${A_DEPS} PRIVATE ${A_PRIVATE_DEPS})
endfunction()

# tb_add_test(NAME SOURCES ... LIBS ... LABELS ... [ENV ...]): a Qt Test executable
# run by ctest from the repository root (so ../shared/... paths resolve), labelled per layer.
function(tb_add_test NAME)
  cmake_parse_arguments(A "" "TIMEOUT" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  add_executable(${NAME} ${A_SOURCES})
  set_target_properties(${NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests AUTOMOC ON)
  target_link_libraries(${NAME} PRIVATE tb_common_cfg tb_malloc Qt6::Test ${A_LIBS})
  add_test(NAME ${NAME} COMMAND ${NAME} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 600)
  endif()
  # The test's TIMEOUT bounds it; Qt Test's own watchdog (300 s per test function by default) would
  # otherwise abort a long test function (one that compiles 204 kernels) on a loaded machine.
  math(EXPR function_timeout_ms "${A_TIMEOUT} * 1000")
  set_tests_properties(${NAME} PROPERTIES LABELS "${A_LABELS}" TIMEOUT ${A_TIMEOUT}
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;TB_SOURCE_DIR=${CMAKE_SOURCE_DIR};QTEST_FUNCTION_TIMEOUT=${function_timeout_ms};${A_ENV}")
endfunction()

# tb_add_cli_test(NAME COMMAND cmd args... PASS_REGULAR_EXPRESSION regex [EXIT_STATUS n] [LABELS ...]
#                 [TIMEOUT s]): a command-line test that passes only when the command exits with
# status n (default 0) AND its output matches the regex (tests/cli/run_cli_test.cmake runs it); ctest's
# PASS_REGULAR_EXPRESSION alone ignores the exit status, so a crash after the expected line would
# pass. The command may name a target first and use generator expressions; it runs in the build
# directory. No argument may contain ';'.
function(tb_add_cli_test NAME)
  cmake_parse_arguments(A "" "PASS_REGULAR_EXPRESSION;EXIT_STATUS;TIMEOUT" "COMMAND;LABELS" ${ARGN})
  if(NOT A_COMMAND OR NOT DEFINED A_PASS_REGULAR_EXPRESSION)
    message(FATAL_ERROR "tb_add_cli_test(${NAME}): COMMAND and PASS_REGULAR_EXPRESSION are required")
  endif()
  if(NOT DEFINED A_EXIT_STATUS)
    set(A_EXIT_STATUS 0)
  endif()
  # add_test turns a target name into its file only as the first word of COMMAND; here the command
  # goes into a file (as bracket arguments: kept byte for byte), so do it by hand.
  list(GET A_COMMAND 0 program)
  if(TARGET ${program})
    list(POP_FRONT A_COMMAND)
    list(PREPEND A_COMMAND $<TARGET_FILE:${program}>)
  endif()
  set(content "set(EXIT_STATUS ${A_EXIT_STATUS})\nset(PASS_REGEX [==[${A_PASS_REGULAR_EXPRESSION}]==])\nset(COMMAND_LINE")
  foreach(arg IN LISTS A_COMMAND)
    string(APPEND content "\n  [==[${arg}]==]")
  endforeach()
  string(APPEND content ")\n")
  set(test_file ${CMAKE_CURRENT_BINARY_DIR}/${NAME}.cli_test.cmake)
  file(GENERATE OUTPUT ${test_file} CONTENT "${content}")
  add_test(NAME ${NAME} COMMAND ${CMAKE_COMMAND} -DCLI_TEST=${test_file} -P ${CMAKE_SOURCE_DIR}/tests/cli/run_cli_test.cmake)
  set_tests_properties(${NAME} PROPERTIES LABELS "${A_LABELS}")
  if(A_TIMEOUT)
    set_tests_properties(${NAME} PROPERTIES TIMEOUT ${A_TIMEOUT})
  endif()
endfunction()
