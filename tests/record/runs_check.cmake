# SPDX-License-Identifier: Apache-2.0
# test_runs_check times two CPU runs of the same code and expects SAME: it runs
# alone (RUN_SERIAL) so other tests do not load the machine meanwhile.
set_tests_properties(test_runs_check PROPERTIES RUN_SERIAL TRUE)
# The gate's same-code and 20%-slower plugin copies (tests/harness/plugins/slow_plugin.c):
# tests/plugins/libgate_same.so and libgate_slow20.so, for test_runs_calibrate and
# bench/gate_pairs.sh.
foreach(pct 0 20)
  if(pct EQUAL 0)
    set(name gate_same)
  else()
    set(name gate_slow${pct})
  endif()
  add_library(${name} MODULE ${PROJECT_SOURCE_DIR}/tests/harness/plugins/slow_plugin.c)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(${name} PRIVATE SLOW_PERCENT=${pct})
  target_link_libraries(${name} PRIVATE libropegrad)
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/plugins)
  add_dependencies(test_runs_check ${name})
endforeach()
# test_runs_calibrate times three short runs back to back: alone too.
set_tests_properties(test_runs_calibrate PROPERTIES RUN_SERIAL TRUE)
