# SPDX-License-Identifier: Apache-2.0
# test_plugin (`bench|check --impl`): the example plugin (examples/plugin-014)
# and one broken plugin per refusal (tests/plugins/bad_plugin.c, built once
# per BAD_* variant into tests/plugins/libbad_<variant>.so).
set(RG_BAD_PLUGINS no_descriptor null_descriptor wrong_abi wrong_op null_cpu null_cuda name null_version hang_cpu)
foreach(v ${RG_BAD_PLUGINS})
  string(TOUPPER ${v} V)
  add_library(bad_${v} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/bad_plugin.c)
  target_include_directories(bad_${v} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(bad_${v} PRIVATE BAD_${V})
  set_target_properties(bad_${v} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/plugins)
  add_dependencies(test_plugin bad_${v})
endforeach()
add_dependencies(test_plugin plain014)
set_tests_properties(test_plugin PROPERTIES TIMEOUT 900)
