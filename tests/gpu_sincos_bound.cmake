# SPDX-License-Identifier: Apache-2.0
# gpu_sincos_bound: dev/common/sincos_bound.cu as a test. It runs the forward ops'
# device math (src/op/rope_math.cuh, compiled as the library compiles it) on
# every float argument of the fast path and fails if any value the rounding
# test certifies, or either refinement gives, is not the nearest bf16, or if
# the float error ever reaches the bound the test assumes at scale 1 (which
# only this exhaustive check justifies). Skips (77) without a GPU; without
# nvcc it cannot be built, and says so.
if(ROPEGRAD_HAVE_CUDA)
  add_executable(sincos_bound ${PROJECT_SOURCE_DIR}/dev/common/sincos_bound.cu)
  target_include_directories(sincos_bound PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src/op)
  target_compile_options(sincos_bound PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${RG_CUDA_WERROR}>)
  set_target_properties(sincos_bound PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests
    CUDA_RUNTIME_LIBRARY Static)
  add_test(NAME gpu_sincos_bound COMMAND sincos_bound)
else()
  add_test(NAME gpu_sincos_bound COMMAND sh -c "echo 'skip: built without CUDA (no nvcc), so dev/common/sincos_bound.cu is not built'; exit 77")
endif()
set_tests_properties(gpu_sincos_bound PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
