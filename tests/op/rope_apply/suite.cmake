# SPDX-License-Identifier: Apache-2.0
# Suites 088 and 068 (the apply ops) checked end to end on the CPU through
# the CLI: exit 0 only when every workload passes against the float64
# reference under the suites' tolerance (16/16). The largest workload holds
# 1.3 GB of float32 inputs (5 GB with the reference), too much under ASan: a
# sanitizer build checks the workloads of at most 64 MB of inputs instead.
# One correctness round, not the default ten: every workload is still checked
# against its float64 reference, and ten references of the largest workloads
# cost the CI machine minutes (the rounds and their checks are tested on 014
# by test_reward_hack).
if(ROPEGRAD_SANITIZE)
  set(_rg_apply_workloads_088 --workloads 0,4-6,8,12-14)
  set(_rg_apply_workloads_068 --workloads 0,5,6,9,11,12,14)
endif()
foreach(suite 088-rope_apply 068-rope_apply_backward)
  string(SUBSTRING ${suite} 0 3 id)
  add_test(NAME suite_check_${id}_cpu
    COMMAND $<TARGET_FILE:ropegrad> check --suite ${PROJECT_SOURCE_DIR}/suites/${suite}
            --backend cpu --quiet --rounds 1 ${_rg_apply_workloads_${id}})
  set_tests_properties(suite_check_${id}_cpu PROPERTIES TIMEOUT 1200)
endforeach()
# Hugging Face's apply_rotary_pos_emb drop-in (python/ropegrad/rope_apply.py:
# 088 forward, rope_apply_backward.py: 068 backward) against float64 autograd, with any torch (Debian's
# too); not in a sanitizer build (tests/python.cmake says why).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND AND NOT ROPEGRAD_SANITIZE)
  add_test(NAME python_rope_apply_torch
    COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/run_with_torch.sh
            ${PROJECT_SOURCE_DIR}/python/tests/test_rope_apply_torch.py)
  set_tests_properties(python_rope_apply_torch PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
    ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>")
endif()
