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
  target_link_libraries(${NAME} PRIVATE tb_common_cfg Qt6::Test ${A_LIBS})
  add_test(NAME ${NAME} COMMAND ${NAME} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 600)
  endif()
  set_tests_properties(${NAME} PROPERTIES LABELS "${A_LABELS}" TIMEOUT ${A_TIMEOUT}
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;TB_SOURCE_DIR=${CMAKE_SOURCE_DIR};${A_ENV}")
endfunction()
