# SPDX-License-Identifier: Apache-2.0
# test_export compiles each exported solution's kernel.cu with nvcc against a
# stand-in torch (tests/stub_torch) when the build has CUDA; without it that
# case skips and says why.
if(ROPEGRAD_HAVE_CUDA AND TARGET test_export)
  target_compile_definitions(test_export PRIVATE RG_NVCC="${CMAKE_CUDA_COMPILER}")
endif()
