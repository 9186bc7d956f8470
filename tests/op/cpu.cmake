# SPDX-License-Identifier: Apache-2.0
# The CPU path picks its SIMD kernel once per process, so test_cpu (and
# test_forward, the forward ops) runs once per path: forced through ROPEGRAD_CPU_ISA, plus an unknown value that must
# fall back to the best path. A path the CPU cannot run exits 77 (skipped).
foreach(isa portable avx2 avx512 bogus)
  add_test(NAME test_cpu_isa_${isa} COMMAND test_cpu)
  set_tests_properties(test_cpu_isa_${isa} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
    ENVIRONMENT "ROPEGRAD_CPU_ISA=${isa};CMOCKA_MESSAGE_OUTPUT=STDOUT")
endforeach()
foreach(isa portable avx2 avx512)
  add_test(NAME test_forward_isa_${isa} COMMAND test_forward)
  set_tests_properties(test_forward_isa_${isa} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "ROPEGRAD_CPU_ISA=${isa};CMOCKA_MESSAGE_OUTPUT=STDOUT")
endforeach()
