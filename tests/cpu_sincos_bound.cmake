# SPDX-License-Identifier: Apache-2.0
# cpu_sincos_bound: dev/common/sincos_bound_cpu.c as a test. The forward ops' CPU
# path certifies its bf16 roundings with the GPU core's error bound; this
# checks, on the CPU, that the core's scalar, AVX2 and AVX-512 forms give the
# same bits and stay within that bound, and that no certified rounding is
# wrong. The test runs every 17th float argument (an odd stride: an even one would sample only bit patterns with low zero bits) (a few seconds); the whole
# range (--stride 1, results/sincos-bound-cpu.txt) takes about a minute
# on two cores.
# The vector parts are built twice, once per instruction set (dev/common/sincos_bound_isa.c), and
# called only where the CPU has it; the rest is plain C, so the test runs on any x86-64.
add_library(sincos_bound_avx2 OBJECT ${PROJECT_SOURCE_DIR}/dev/common/sincos_bound_isa.c)
add_library(sincos_bound_avx512 OBJECT ${PROJECT_SOURCE_DIR}/dev/common/sincos_bound_isa.c)
target_compile_definitions(sincos_bound_avx2 PRIVATE SBC_AVX2)
target_compile_definitions(sincos_bound_avx512 PRIVATE SBC_AVX512)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT MSVC)
  target_compile_options(sincos_bound_avx2 PRIVATE -mavx2 -mfma)
  target_compile_options(sincos_bound_avx512 PRIVATE -mavx512f -mfma)
endif()
foreach(t sincos_bound_avx2 sincos_bound_avx512)
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/src/op ${SLEEF_INCLUDE_DIR})
endforeach()
add_executable(sincos_bound_cpu ${PROJECT_SOURCE_DIR}/dev/common/sincos_bound_cpu.c
  $<TARGET_OBJECTS:sincos_bound_avx2> $<TARGET_OBJECTS:sincos_bound_avx512>)
target_include_directories(sincos_bound_cpu PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src/op
  ${PROJECT_SOURCE_DIR}/dev/common ${SLEEF_INCLUDE_DIR})
target_link_libraries(sincos_bound_cpu PRIVATE ${SLEEF_LIBRARY} OpenMP::OpenMP_C ${M_LIBRARY})
set_target_properties(sincos_bound_cpu PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
add_test(NAME cpu_sincos_bound COMMAND sincos_bound_cpu --stride 17)
set_tests_properties(cpu_sincos_bound PROPERTIES TIMEOUT 600)
