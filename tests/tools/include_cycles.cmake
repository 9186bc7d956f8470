# SPDX-License-Identifier: Apache-2.0
# scripts/include_cycles.py (issue 28): no include or call cycle in src/ but the
# ones tests/tools/include_cycles.allow still lists; include_cycles_selftest: the
# checker finds the cycles of small trees made for it, and only those.
# Skipped (77) without python3.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME include_cycles COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/scripts/include_cycles.py
           --allow tests/tools/include_cycles.allow src WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  add_test(NAME include_cycles_selftest COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/include_cycles_selftest.sh
           ${PROJECT_SOURCE_DIR})
else()
  foreach(t include_cycles include_cycles_selftest)
    add_test(NAME ${t} COMMAND sh -c "echo 'skip: python3 not found, scripts/include_cycles.py needs it'; exit 77")
  endforeach()
endif()
set_tests_properties(include_cycles include_cycles_selftest PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
