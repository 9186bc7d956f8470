# SPDX-License-Identifier: Apache-2.0
# cpu_sincos_bound: bench/sincos_bound_cpu.c as a test. The forward ops' CPU
# path certifies its bf16 roundings with the GPU core's error bound; this
# checks, on the CPU, that the core's scalar, AVX2 and AVX-512 forms give the
# same bits and stay within that bound, and that no certified rounding is
# wrong. The test runs every 17th float argument (an odd stride: an even one would sample only bit patterns with low zero bits) (a few seconds); the whole
# range (--stride 1, bench/results/sincos-bound-cpu.txt) takes about a minute
# on two cores.
add_executable(sincos_bound_cpu ${PROJECT_SOURCE_DIR}/bench/sincos_bound_cpu.c)
target_include_directories(sincos_bound_cpu PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src/op
  ${SLEEF_INCLUDE_DIR})
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT MSVC)
  target_compile_options(sincos_bound_cpu PRIVATE -mavx2 -mfma -mavx512f)
endif()
target_link_libraries(sincos_bound_cpu PRIVATE ${SLEEF_LIBRARY} OpenMP::OpenMP_C ${M_LIBRARY})
set_target_properties(sincos_bound_cpu PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
add_test(NAME cpu_sincos_bound COMMAND sincos_bound_cpu --stride 17)
set_tests_properties(cpu_sincos_bound PROPERTIES TIMEOUT 600)
