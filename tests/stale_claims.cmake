# SPDX-License-Identifier: Apache-2.0
# tests/stale_claims.py (issue 28): dead public functions, comments naming
# files that do not exist or kernels the code does not launch, the README's
# count of its parts. Skipped (77) without python3.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME stale_claims COMMAND /usr/bin/env python3 ${CMAKE_CURRENT_SOURCE_DIR}/stale_claims.py ${PROJECT_SOURCE_DIR})
else()
  add_test(NAME stale_claims COMMAND sh -c "echo 'skip: python3 not found, tests/stale_claims.py needs it'; exit 77")
endif()
set_tests_properties(stale_claims PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
