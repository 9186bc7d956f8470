# SPDX-License-Identifier: Apache-2.0
# test_plugin (`bench|check --impl`): the example plugin (examples/plugin-014)
# and one broken plugin per refusal (tests/plugins/bad_plugin.c, built once
# per BAD_* variant into tests/plugins/libbad_<variant>.so).
# One test plugin per variant of a source: PREFIX_<variant>, built with
# -D<MACRO>_<VARIANT> into tests/plugins/libPREFIX_<variant>.so, for TEST.
function(rg_test_plugin_variants test source prefix macro)
  foreach(v ${ARGN})
    string(TOUPPER ${v} V)
    add_library(${prefix}_${v} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/${source})
    target_include_directories(${prefix}_${v} PRIVATE ${PROJECT_SOURCE_DIR}/include)
    target_compile_definitions(${prefix}_${v} PRIVATE ${macro}_${V})
    set_target_properties(${prefix}_${v} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/plugins)
    add_dependencies(${test} ${prefix}_${v})
  endforeach()
endfunction()
rg_test_plugin_variants(test_plugin bad_plugin.c bad BAD
  no_descriptor null_descriptor wrong_abi wrong_op null_cpu null_cuda name null_version hang_cpu)
add_dependencies(test_plugin plain014)
set_tests_properties(test_plugin PROPERTIES TIMEOUT 900)
# test_plugin_gpu: a kernel that faults and one that hangs (CUDA builds only;
# the test skips without a GPU).
if(ROPEGRAD_HAVE_CUDA)
  foreach(v fault hang)
    string(TOUPPER ${v} V)
    add_library(gpu_${v} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/gpu_bad.cu)
    target_include_directories(gpu_${v} PRIVATE ${PROJECT_SOURCE_DIR}/include)
    target_compile_definitions(gpu_${v} PRIVATE GPU_${V})
    target_link_libraries(gpu_${v} PRIVATE CUDA::cudart)
    set_target_properties(gpu_${v} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/plugins)
    add_dependencies(test_plugin_gpu gpu_${v})
  endforeach()
  target_compile_definitions(test_plugin_gpu PRIVATE RG_TEST_GPU_PLUGINS)
endif()
add_dependencies(test_plugin_gpu plain014)
set_tests_properties(test_plugin_gpu PROPERTIES TIMEOUT 300)
