# SPDX-License-Identifier: Apache-2.0
# test_reward_hack: one cheating plugin per CHEAT_* variant of
# tests/plugins/cheat_plugin.c (tests/plugins/libcheat_<variant>.so), each
# correct in value, each caught by a reward-hack check of src/harness/rounds.c
# or of the checked timed calls (src/harness/timed_sets.c).
foreach(v cache lazy alias stop poison count thread scribble keyed)
  string(TOUPPER ${v} V)
  add_library(cheat_${v} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/cheat_plugin.c)
  target_include_directories(cheat_${v} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(cheat_${v} PRIVATE CHEAT_${V})
  target_link_libraries(cheat_${v} PRIVATE libropegrad Threads::Threads)
  set_target_properties(cheat_${v} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/plugins)
  add_dependencies(test_reward_hack cheat_${v})
endforeach()
add_dependencies(test_reward_hack plain014)
set_tests_properties(test_reward_hack PROPERTIES TIMEOUT 600)
# test_gpu_reward_hack: the CUDA cheats of tests/plugins/cheat_cuda.cu and a
# plugin with work on a stream of its own (tests/plugins/libgpu_cheat_<variant>.so;
# CUDA builds only: the test skips without them or without a GPU).
if(ROPEGRAD_HAVE_CUDA)
  foreach(v cache lazy alias switch side_stream poison count scribble keyed)
    string(TOUPPER ${v} V)
    add_library(gpu_cheat_${v} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/cheat_cuda.cu)
    target_include_directories(gpu_cheat_${v} PRIVATE ${PROJECT_SOURCE_DIR}/include)
    if(v STREQUAL "side_stream")
      target_compile_definitions(gpu_cheat_${v} PRIVATE SIDE_STREAM)
    else()
      target_compile_definitions(gpu_cheat_${v} PRIVATE CHEAT_${V})
    endif()
    target_link_libraries(gpu_cheat_${v} PRIVATE libropegrad CUDA::cudart)
    set_target_properties(gpu_cheat_${v} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/plugins)
    add_dependencies(test_gpu_reward_hack gpu_cheat_${v})
  endforeach()
  target_compile_definitions(test_gpu_reward_hack PRIVATE RG_TEST_GPU_PLUGINS)
endif()
add_dependencies(test_gpu_reward_hack plain014)
set_tests_properties(test_gpu_reward_hack PROPERTIES TIMEOUT 600)
