# SPDX-License-Identifier: Apache-2.0
# The agreement with NVIDIA's official evaluator (issue 26) on the CPU:
# dev/official/agreement_table.py on synthetic files (agreement_table), and
# dev/official/two_phase.py driving the evaluator's own code with stand-ins
# for the compile and evaluation commands (official_two_phase; skipped, saying
# why, without ../shared/official-evaluator or pydantic 2). The device script
# itself (scripts/gpu-official.sh) is checked for syntax, and by
# shellcheck where it is installed (skipped otherwise).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME agreement_table COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/tests/tools/agreement_table_test.py
           ${PROJECT_SOURCE_DIR})
  add_test(NAME official_two_phase COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/tests/tools/two_phase_test.py
           ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/../shared/official-evaluator)
  set_tests_properties(agreement_table official_two_phase PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
add_test(NAME device_official_script COMMAND sh -c
  "bash -n scripts/gpu-official.sh && bash -n scripts/peers.sh || exit 1; \
   command -v shellcheck >/dev/null || { echo 'skip: shellcheck not installed (bash -n passed)'; exit 77; }; \
   shellcheck scripts/gpu-official.sh scripts/peers.sh"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(device_official_script PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
rg_python_test(parity_table tests/tools/parity_table_test.py ${PROJECT_SOURCE_DIR})
# dev/official/variants_012.py (012's split files): its edits against the shipped kernels.cuh,
# and against the public peer's file where ../shared has it.
rg_python_test(variants_012 tests/tools/variants_012_test.py ${PROJECT_SOURCE_DIR}
               ${PROJECT_SOURCE_DIR}/../shared/official-evaluator/peers/012-peer.json)
set_tests_properties(variants_012 PROPERTIES TIMEOUT 60)
