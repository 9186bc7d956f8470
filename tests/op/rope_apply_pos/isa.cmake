# SPDX-License-Identifier: Apache-2.0
# The bf16 cos/sin of the apply-from-positions ops come from the CPU path's
# sin/cos primitive, chosen once per process: the CPU test runs once per
# path, forced through ROPEGRAD_CPU_ISA. A path the CPU cannot run falls
# back to the best one it can.
foreach(isa portable avx2 avx512)
  add_test(NAME test_rope_apply_pos_isa_${isa} COMMAND test_rope_apply_pos)
  set_tests_properties(test_rope_apply_pos_isa_${isa} PROPERTIES TIMEOUT 300
    ENVIRONMENT "ROPEGRAD_CPU_ISA=${isa};CMOCKA_MESSAGE_OUTPUT=STDOUT")
endforeach()
